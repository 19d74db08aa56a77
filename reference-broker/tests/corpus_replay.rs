//! Every file in the fuzzers' corpora and in `fuzz/regressions/` replays under plain
//! `cargo test`, through the same oracle the fuzz targets run, so a crash once found stays
//! fixed on a stable toolchain. Also checks that the committed seeds are the current samples.

use std::path::{Path, PathBuf};

use reference_broker::codec::differential::{check_fuzz_input, fuzz_selector};
use reference_broker::codec::samples::{encoded_samples, fuzz_target_name, seed_file_name};
use reference_broker::codec::{ApiKey, Direction};

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz")
}

fn files_in(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && p.file_name().is_some_and(|n| n != ".gitkeep"))
        .collect();
    files.sort();
    files
}

#[test]
fn committed_seeds_are_the_current_samples() {
    for api in ApiKey::ALL {
        let dir = fuzz_dir().join("corpus").join(fuzz_target_name(api));
        for direction in [Direction::Request, Direction::Response] {
            for (i, (version, body)) in encoded_samples(api, direction).into_iter().enumerate() {
                let path = dir.join(seed_file_name(direction, version, i));
                let mut expected = vec![fuzz_selector(direction, version)];
                expected.extend(body);
                let found = std::fs::read(&path).unwrap_or_else(|e| {
                    panic!(
                        "{}: {e}; regenerate with \
                         `cargo run -p reference-broker --example write_fuzz_seeds`",
                        path.display()
                    )
                });
                assert_eq!(found, expected, "{} is stale", path.display());
            }
        }
    }
}

#[test]
fn every_corpus_and_regression_file_satisfies_the_oracle() {
    let mut replayed = 0;
    for api in ApiKey::ALL {
        let name = fuzz_target_name(api);
        for kind in ["corpus", "regressions"] {
            for file in files_in(&fuzz_dir().join(kind).join(name)) {
                let data = std::fs::read(&file).unwrap();
                if let Err(m) = check_fuzz_input(api, &data) {
                    panic!("{}: {m}", file.display());
                }
                replayed += 1;
            }
        }
    }
    println!("replayed {replayed} files");
    assert!(replayed >= 92, "only {replayed} corpus files found");
}

/// The broker_frames corpus through the in-process dispatcher: every frame is answered or
/// refused, none panics, and none waits past an hour of paused (virtual) time.
#[tokio::test(start_paused = true)]
async fn every_broker_frame_in_the_corpus_is_handled() {
    use std::sync::Arc;

    use reference_broker::broker::open_in_dir;
    use reference_broker::dispatch;

    let dir = tempfile::tempdir().unwrap();
    let state = Arc::new(open_in_dir(dir.path()).unwrap());
    let mut answered = 0;
    let mut replayed = 0;
    for kind in ["corpus", "regressions"] {
        for file in files_in(&fuzz_dir().join(kind).join("broker_frames")) {
            let frame = bytes::Bytes::from(std::fs::read(&file).unwrap());
            let limit = std::time::Duration::from_secs(3600);
            let outcome = tokio::time::timeout(limit, dispatch::handle(&state, frame)).await;
            if let Ok(Ok(Some(_))) = outcome {
                answered += 1;
            }
            replayed += 1;
        }
    }
    println!("replayed {replayed} broker frames, {answered} answered");
    assert!(
        replayed >= 15 && answered >= 15,
        "{replayed} replayed, {answered} answered"
    );
}

/// The sasl_frames corpus through the same `dispatch::handle_on` the server runs, on a broker
/// that requires SASL: every connection ends answered or closed, none panics or waits past an
/// hour of paused time, and the seeds that log in do (a seed that stopped logging in would
/// leave the fuzzer outside the gated handlers).
#[tokio::test(start_paused = true)]
async fn every_sasl_session_in_the_corpus_is_handled() {
    use std::sync::Arc;

    use reference_broker::auth::AllowAll;
    use reference_broker::broker::open_state;
    use reference_broker::dispatch::{self, Turn};
    use reference_broker::sasl::{session_input, Authenticator};
    use reference_broker::{BrokerConfig, Security};

    let dir = tempfile::tempdir().unwrap();
    let config = BrokerConfig {
        data_dir: Some(dir.path().to_owned()),
        security: Some(Security {
            users: session_input::users(),
            super_users: vec!["User:admin".into()],
        }),
        ..BrokerConfig::for_tests()
    };
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], 9092));
    let state = Arc::new(open_state(config, addr, Arc::new(AllowAll)).unwrap());
    let users = state.users.clone().unwrap();
    let (mut replayed, mut logged_in) = (0, Vec::new());
    for kind in ["corpus", "regressions"] {
        for file in files_in(&fuzz_dir().join(kind).join("sasl_frames")) {
            let mut sasl = Authenticator::new(users.clone());
            let limit = std::time::Duration::from_secs(3600);
            for frame in session_input::frames(&std::fs::read(&file).unwrap()) {
                let turn = tokio::time::timeout(
                    limit,
                    dispatch::handle_on(&state, Some(&mut sasl), frame),
                )
                .await
                .unwrap_or_else(|_| panic!("{}: a frame waited an hour", file.display()));
                match turn {
                    Turn::Reply(dispatch::Reply::Later(pending)) => {
                        let _ = pending.await;
                    }
                    Turn::Reply(dispatch::Reply::Now(_)) => {}
                    Turn::Fail(..) | Turn::Close(_) => break,
                }
            }
            if let Some(p) = sasl.principal() {
                logged_in.push((file.file_name().unwrap().to_string_lossy().into_owned(), p));
            }
            replayed += 1;
        }
    }
    println!("replayed {replayed} SASL sessions; logged in: {logged_in:?}");
    assert!(replayed >= 7, "only {replayed} sessions");
    let names: Vec<&str> = logged_in.iter().map(|(n, _)| n.as_str()).collect();
    for seed in [
        "seed-plain-login-then-gated",
        "seed-admin-creates-acl",
        "seed-raw-token-login",
    ] {
        assert!(
            names.contains(&seed),
            "{seed} did not log in: {logged_in:?}"
        );
    }
}
