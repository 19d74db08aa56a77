//! Every scenario against the bundled reference broker, checked against its committed insta
//! snapshot (`snapshots/<scenario>__ref.snap`). Review changes with `cargo insta review`.

use std::path::Path;
use std::time::Duration;

use kconform::runner;
use kconform::scenario::Scenario;
use kconform::target::{Running, TargetSpec};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_scenario_matches_its_ref_snapshot() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let scenarios = Scenario::load_dir(&root.join("scenarios")).expect("scenarios load");
    assert!(scenarios.len() >= 10, "only {} scenarios", scenarios.len());
    let target = Running::start(&TargetSpec::Ref)
        .await
        .expect("kaas-ref starts");
    let mut transcripts = Vec::new();
    for s in &scenarios {
        let t = runner::run(s, &target, Duration::from_secs(10))
            .await
            .expect("scenario runs");
        assert!(
            t.failed_expectations.is_empty(),
            "{}: {:?}",
            s.name,
            t.failed_expectations
        );
        transcripts.push(t);
    }
    target.stop().await;
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(root.join("snapshots"));
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings.bind(|| {
        for t in &transcripts {
            insta::assert_yaml_snapshot!(format!("{}__ref", t.scenario), t);
        }
    });
}
