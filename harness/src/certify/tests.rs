//! The certificate's verdicts, ranking and baseline, over parts made by hand.

use super::certificate::{Certificate, Verdict};
use super::judged::{Judged, Ran};
use crate::report::baseline::Baseline;
use crate::report::gate::{Gated, Judge, Severity};

fn part(judge: Judge, gated: &[(Severity, &str)]) -> Judged {
    let mut p = Judged::could_not_run(judge, "", 1.0);
    p.ran = Ran::Ran;
    p.summary = format!("{judge} ran");
    p.gated = gated
        .iter()
        .map(|(s, k)| Gated::new(judge, *s, *k, 1))
        .collect();
    p
}

fn certificate(parts: Vec<Judged>, baseline: Option<&Baseline>) -> Certificate {
    Certificate::new("build:3".into(), "apache".into(), parts, baseline, 9.0)
}

fn keys(c: &Certificate) -> Vec<(Judge, &str, bool)> {
    c.findings
        .iter()
        .map(|f| (f.gated.judge, f.gated.key.as_str(), f.new))
        .collect()
}

/// An exactly-once anomaly of chaos outranks a crash of the fuzzer, which outranks a changed
/// error code of the scenarios; a field clients only log comes last, whichever judge ran
/// first.
#[test]
fn findings_are_ranked_worst_first_across_judges() {
    let c = certificate(
        vec![
            part(
                Judge::Scenarios,
                &[
                    (Severity::Logged, "cause: error_message"),
                    (Severity::State, "cause: EndTxn error_code: 50 | 48"),
                ],
            ),
            part(
                Judge::Fuzz,
                &[(Severity::Crash, "frame: stopped answering")],
            ),
            part(
                Judge::Chaos,
                &[(Severity::ExactlyOnce, "anomaly: lost-write (apart)")],
            ),
        ],
        None,
    );
    let order: Vec<&str> = c.findings.iter().map(|f| f.gated.key.as_str()).collect();
    assert_eq!(
        order,
        [
            "anomaly: lost-write (apart)",
            "frame: stopped answering",
            "cause: EndTxn error_code: 50 | 48",
            "cause: error_message"
        ]
    );
    assert_eq!(c.verdict, Verdict::Failed);
    assert!(
        c.headline().starts_with("NOT CERTIFIED (FAILED)"),
        "{}",
        c.headline()
    );
}

/// Saved on one run, the baseline holds every judge's findings: the same findings pass, a new
/// one fails its judge alone and is named, a gone one is fixed; a judge left out this time
/// keeps its entries (neither new nor fixed).
#[test]
fn one_baseline_holds_every_judge_and_fails_only_what_is_new() {
    let first = certificate(
        vec![
            part(Judge::Scenarios, &[(Severity::State, "cause: A")]),
            part(
                Judge::Chaos,
                &[(Severity::ExactlyOnce, "anomaly: aborted-read (together)")],
            ),
            part(Judge::Fuzz, &[(Severity::Crash, "frame: crash X")]),
        ],
        None,
    );
    assert!(!first.passed());
    let baseline = first.baseline();
    assert_eq!(baseline.known.len(), 3);

    let same = certificate(
        vec![
            part(Judge::Scenarios, &[(Severity::State, "cause: A")]),
            part(
                Judge::Chaos,
                &[(Severity::ExactlyOnce, "anomaly: aborted-read (together)")],
            ),
            Judged::left_out(Judge::Fuzz, "the budget left 5 s"),
        ],
        Some(&baseline),
    );
    assert!(same.passed(), "{}", same.terminal());
    let against = same.baseline.as_ref().unwrap();
    assert!(against.fixed.is_empty(), "{against:?}");
    assert_eq!(against.known, 2);
    assert!(
        same.headline().starts_with("CERTIFIED"),
        "{}",
        same.headline()
    );

    let worse = certificate(
        vec![
            part(Judge::Scenarios, &[]),
            part(
                Judge::Chaos,
                &[
                    (Severity::ExactlyOnce, "anomaly: aborted-read (together)"),
                    (Severity::ExactlyOnce, "anomaly: lost-write (apart)"),
                ],
            ),
            part(Judge::Fuzz, &[(Severity::Crash, "frame: crash X")]),
        ],
        Some(&baseline),
    );
    assert!(!worse.passed());
    let verdicts: Vec<(Judge, Verdict)> = worse
        .judges
        .iter()
        .map(|j| (j.part.judge, j.verdict))
        .collect();
    assert_eq!(
        verdicts,
        [
            (Judge::Scenarios, Verdict::Passed),
            (Judge::Chaos, Verdict::Failed),
            (Judge::Fuzz, Verdict::Passed)
        ]
    );
    let new: Vec<_> = keys(&worse).into_iter().filter(|k| k.2).collect();
    assert_eq!(new, [(Judge::Chaos, "anomaly: lost-write (apart)", true)]);
    let fixed: Vec<&str> = worse
        .baseline
        .as_ref()
        .unwrap()
        .fixed
        .iter()
        .map(|k| k.key.as_str())
        .collect();
    assert_eq!(fixed, ["cause: A"]);
    let text = worse.terminal();
    assert!(text.contains("FIXED [scenarios] cause: A"), "{text}");
    assert!(text.contains("New findings, worst first (1)"), "{text}");
}

/// A judge that could not run fails the certificate (never passed over silently); chaos that
/// could not judge is INCONCLUSIVE, and not CERTIFIED either.
#[test]
fn a_judge_that_could_not_run_or_judge_is_no_pass() {
    let c = certificate(
        vec![
            part(Judge::Scenarios, &[]),
            Judged::could_not_run(Judge::Clients, "java: not found", 2.0),
        ],
        None,
    );
    assert_eq!(c.verdict, Verdict::CouldNotRun);
    assert!(!c.passed());
    let mut chaos = part(
        Judge::Chaos,
        &[(
            Severity::State,
            "inconclusive: too few transactions ended on librdkafka",
        )],
    );
    chaos.ran = Ran::Inconclusive("0 transaction(s) ended".into());
    let c = certificate(vec![part(Judge::Scenarios, &[]), chaos], None);
    assert_eq!(c.verdict, Verdict::Inconclusive);
    assert!(!c.passed());
    // Left out alone is no certificate at all.
    let c = certificate(vec![Judged::left_out(Judge::Fuzz, "asked")], None);
    assert_eq!(c.verdict, Verdict::CouldNotRun);
}

/// One JUnit file with a suite per judge: a new finding a failed case, a known one passed,
/// a judge with none a passing case that says so.
#[test]
fn junit_has_a_suite_per_judge() {
    let first = certificate(
        vec![part(Judge::Fuzz, &[(Severity::Crash, "frame: X")])],
        None,
    );
    let c = certificate(
        vec![
            part(Judge::Scenarios, &[(Severity::State, "cause: <new>")]),
            part(Judge::Fuzz, &[(Severity::Crash, "frame: X")]),
            Judged::left_out(Judge::Peers, "runs only when asked"),
        ],
        Some(&first.baseline()),
    );
    let xml = c.junit();
    assert_eq!(xml.matches("<testsuite ").count(), 3, "{xml}");
    assert!(
        xml.contains("<testsuite name=\"scenarios\" tests=\"1\" failures=\"1\">"),
        "{xml}"
    );
    assert!(
        xml.contains("name=\"cause: &lt;new&gt;\"><failure"),
        "{xml}"
    );
    assert!(
        xml.contains("name=\"frame: X (in the baseline)\"/>"),
        "{xml}"
    );
    assert!(
        xml.contains("name=\"left out: runs only when asked\"/>"),
        "{xml}"
    );
    assert_eq!(xml.matches("<?xml").count(), 1);
}

/// The Markdown fits a pull-request comment: the verdict first, what is new listed, the known
/// ones folded.
#[test]
fn markdown_says_the_verdict_and_folds_what_is_known() {
    let first = certificate(
        vec![part(Judge::Scenarios, &[(Severity::State, "cause: old")])],
        None,
    );
    let c = certificate(
        vec![part(
            Judge::Scenarios,
            &[
                (Severity::State, "cause: old"),
                (Severity::Unreadable, "cause: new"),
            ],
        )],
        Some(&first.baseline()),
    );
    let md = c.markdown();
    assert!(md.starts_with("## kconform certify: NOT CERTIFIED"), "{md}");
    let new_at = md.find("### What fails (1)").expect("new listed");
    let known_at = md
        .find("<details><summary>Known findings")
        .expect("known folded");
    assert!(new_at < known_at, "{md}");
    assert!(md[new_at..known_at].contains("`cause: new`"), "{md}");
    assert!(!md[new_at..known_at].contains("`cause: old`"), "{md}");
}

/// The page holds each judge's own page within it, escaped so that it cannot end the frame.
#[test]
fn the_page_holds_each_judges_page() {
    let mut p = part(
        Judge::Scenarios,
        &[(Severity::State, "cause: \"quoted\" <b>")],
    );
    p.page = Some("<html><body>inner \"page\"</body></html>".into());
    let page = super::html::page(&certificate(vec![p], None));
    assert!(
        page.contains("srcdoc=\"&lt;html&gt;&lt;body&gt;inner &quot;page&quot;"),
        "{page}"
    );
    assert!(
        page.contains("<code>cause: &quot;quoted&quot; &lt;b&gt;</code>"),
        "{page}"
    );
}
