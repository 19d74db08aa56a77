//! A broker nobody here wrote, as a standing judge of kconform's verdicts: kfake (franz-go's
//! fake cluster) runs the one-broker suite, and every answer it gave is judged by kconform and
//! by Apache's own parser alike ([`crate::apache_parser::compare`]), so a "malformed" in the
//! report is a frame Apache's parser refuses too.

use std::path::Path;
use std::time::Duration;

use kafka_protocol::messages::ApiKey;
use kconform::mutation::{Exchange, Proxy, Scope};
use kconform::targets::apache::parser::{ApacheParser, Verdict};
use kconform::wire::frame::{self, Equivalent};

use crate::apache_parser::{compare, keep_figure};
use crate::util;

/// kfake (franz-go's fake cluster, `harness/kfake/`), built with Go through the module proxy
/// and started on a free port; stopped when dropped (its standard input closes).
struct Kfake {
    child: std::process::Child,
    addr: std::net::SocketAddr,
}

impl Drop for Kfake {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_kfake() -> Result<Kfake, String> {
    use std::io::BufRead;
    use std::process::{Command, Stdio};
    let go = kconform::peers::suite::go().map_err(|e| format!("go: {e}"))?;
    let binary = Path::new(env!("CARGO_TARGET_TMPDIR")).join("kfake");
    let built = Command::new(go)
        .args(["build", "-o"])
        .arg(&binary)
        .arg(".")
        .current_dir(util::root().join("harness/kfake"))
        .output()
        .map_err(|e| format!("go build: {e}"))?;
    if !built.status.success() {
        return Err(format!(
            "go build of harness/kfake failed: {}",
            String::from_utf8_lossy(&built.stderr)
        ));
    }
    let mut child = Command::new(&binary)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{}: {e}", binary.display()))?;
    let stdout = child.stdout.take().expect("piped");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = std::io::BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let line = rx
        .recv_timeout(Duration::from_secs(30))
        .map_err(|_| "kfake printed no address within 30 s".to_owned())?;
    let addr = line
        .trim()
        .parse()
        .map_err(|_| format!("kfake printed {line:?}, not an address"))?;
    Ok(Kfake { child, addr })
}

/// Apache's parsers of answers: 3.7.2's at the versions 3.7.2 has, and 4.4.0's (started at
/// its first use) at the versions only a later release has, which a sweep sends to a broker
/// that serves them (kfake serves EndTxn v5): 3.7.2's parser reads no version it lacks.
struct Parsers {
    claimed: ApacheParser,
    later: Option<ApacheParser>,
}

impl Parsers {
    fn start() -> Parsers {
        Parsers {
            claimed: ApacheParser::start().expect("Apache's parser starts"),
            later: None,
        }
    }

    /// The parser of `api`'s answers at `version`.
    fn at(&mut self, api: i16, version: i16) -> &mut ApacheParser {
        let claimed = ApiKey::try_from(api)
            .ok()
            .and_then(kconform::api::by_key)
            .and_then(|a| kconform::wire::schema::response(a.name))
            .is_none_or(|m| m.valid.contains(version));
        if claimed {
            return &mut self.claimed;
        }
        self.later.get_or_insert_with(|| {
            let release = kconform::targets::apache::Release::parse("4.4.0").expect("a release");
            ApacheParser::start_at(&release).expect("Apache 4.4.0's parser starts")
        })
    }
}

/// A broker nobody here wrote, as a standing judge: the whole one-broker suite on kfake (through
/// a recording proxy) against Apache's recorded answers gives a full report, and every answer
/// kfake gave is judged by kconform and by Apache's parser alike, so every `malformed` in the
/// report is a frame Apache's parser refuses too; each answer written in every equivalent
/// encoding reads to the same values, so a broker that writes as kfake does but with tags at
/// their defaults (or long varints) gets the same verdict. kfake's differences from Apache are
/// its own; what this asserts is that the verdict can be trusted.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn on_kfake_every_malformed_verdict_is_apaches_too() {
    if let Err(why) = kconform::targets::apache::available() {
        println!("skipped: no Apache parser here ({why})");
        return;
    }
    let kfake = match start_kfake() {
        Ok(k) => k,
        Err(why) if why.starts_with("go:") => {
            println!("skipped: no Go toolchain to build kfake ({why})");
            return;
        }
        Err(why) => panic!("{why}"),
    };
    let proxy = Proxy::start("127.0.0.1:0".parse().unwrap(), kfake.addr, Scope::None)
        .await
        .unwrap();
    let all = util::scenarios();
    let chosen = util::one_broker(&all);
    let started = std::time::Instant::now();
    let (report, transcripts) =
        util::beside_recorded(proxy.addr, &chosen, 4, Duration::from_secs(5)).await;
    let wall = started.elapsed();
    let malformed: Vec<&kconform::wire::frame::Malformed> = transcripts[0]
        .iter()
        .flat_map(|t| &t.steps)
        .filter_map(|s| match &s.outcome {
            kconform::run::Outcome::Malformed(m) => Some(m),
            _ => None,
        })
        .collect();
    let answers: Vec<Exchange> = proxy.answers.lock().unwrap().kept.clone();
    drop(proxy);
    drop(kfake);
    let mut parsers = Parsers::start();
    let mut disagreements = Vec::new();
    let mut refused = 0;
    let mut rewritten = 0;
    for e in &answers {
        let parser = parsers.at(e.api, e.version);
        let (accepted, disagreement) = compare(parser, e, &e.answer, "as kfake sent it");
        refused += usize::from(!accepted);
        disagreements.extend(disagreement);
        // kfake written as other brokers write (every tagged field at its default where kfake
        // leaves it out, as the broker that once got 84 false "malformed" verdicts did; an
        // unknown tag; long varints): accepted by both, and read to the same values as kfake's
        // own bytes, so no verdict can change.
        let api = ApiKey::try_from(e.api).expect("a known API");
        let values = |frame: &[u8]| {
            frame::accept(api, e.version, e.correlation, frame)
                .map(|d| frame::encode_answer(&d, api, e.version))
        };
        for how in Equivalent::ALL {
            let Some(again) = frame::rewrite(api, e.version, &e.answer, how) else {
                continue;
            };
            if again == e.answer {
                continue;
            }
            rewritten += 1;
            let (accepted, disagreement) =
                compare(parsers.at(e.api, e.version), e, &again, how.name());
            disagreements.extend(disagreement);
            if !accepted || values(&again) != values(&e.answer) {
                disagreements.push(format!(
                    "{api:?} v{}: kfake's answer in the {} form reads otherwise: {:?}",
                    e.version,
                    how.name(),
                    frame::accept(api, e.version, e.correlation, &again).err()
                ));
            }
        }
    }
    // Each malformed outcome is one of those frames (correlation ids aside), refused by both.
    for m in &malformed {
        let frame: Vec<u8> = m
            .frame
            .split(' ')
            .filter_map(|b| u8::from_str_radix(b, 16).ok())
            .collect();
        let logged = answers.iter().find(|e| e.answer.get(4..) == frame.get(4..));
        let Some(e) = logged else {
            disagreements.push(format!(
                "a malformed answer the proxy did not log: {}",
                m.summary()
            ));
            continue;
        };
        if let Verdict::Accepted(_) = parsers
            .at(e.api, e.version)
            .response(e.api, e.version, e.correlation, &e.answer)
            .expect("Apache's parser answers")
        {
            disagreements.push(format!(
                "malformed, but Apache's parser reads it: {}",
                m.summary()
            ));
        }
    }
    println!(
        "kfake: {} scenarios in {:.1} s ({} transcripts, {} differences, {} undocumented, {} stopped); {} malformed outcomes; {} distinct answers judged by Apache's parser and kconform ({} frames at versions past 3.7's by 4.4.0's parser), {} refused by both, {} equivalent rewrites read alike; {} disagreements",
        chosen.len(),
        wall.as_secs_f64(),
        report.runs.len(),
        report.differences.len(),
        report.differences.iter().filter(|d| d.documented_by.is_none()).count(),
        report.runs.iter().filter(|r| r.stopped.is_some()).count(),
        malformed.len(),
        answers.len(),
        parsers.later.as_ref().map_or(0, |p| p.judged),
        refused,
        rewritten,
        disagreements.len()
    );
    keep_figure(
        "kfake-judge",
        &format!(
            "kfake as an external target: {} scenarios in {:.1} s, {} malformed, {} answers judged as Apache's parser judges them, {} disagreements",
            chosen.len(),
            wall.as_secs_f64(),
            malformed.len(),
            answers.len(),
            disagreements.len()
        ),
    );
    assert!(
        answers.len() > 100,
        "only {} answers from kfake",
        answers.len()
    );
    assert!(
        disagreements.is_empty(),
        "{} disagreements:\n{}",
        disagreements.len(),
        disagreements[..disagreements.len().min(20)].join("\n")
    );
}
