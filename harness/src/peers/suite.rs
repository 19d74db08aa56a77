//! franz-go's `kgo` integration suite as an outside judge: fetched at a pinned version through
//! the Go module proxy, its test binary built once into the cache, run against one broker with
//! `go tool test2json`, and read back test by test.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

/// The module and version every run uses, so that results compare across runs and machines.
pub const MODULE: &str = "github.com/twmb/franz-go";
/// See [`MODULE`].
pub const VERSION: &str = "v1.22.3";
/// The package whose tests run.
pub const PACKAGE: &str = "pkg/kgo";

/// Why the suite could not be prepared or run.
#[derive(Debug, thiserror::Error)]
pub enum SuiteError {
    /// No Go toolchain.
    #[error("go not found ($KCONFORM_GO, PATH, $GOROOT/bin, /usr/local/go/bin): `kconform peers` builds franz-go's test suite with the Go toolchain (https://go.dev/dl)")]
    NoGo,
    /// `go mod download` failed.
    #[error("go mod download {MODULE}@{VERSION} failed: {0}")]
    Download(String),
    /// `go test -c` failed.
    #[error("building the {PACKAGE} test binary failed: {0}")]
    Build(String),
    /// The test binary could not be started or read.
    #[error("running the suite against {target}: {reason}")]
    Run {
        /// Target name.
        target: String,
        /// Why.
        reason: String,
    },
}

/// A built test binary and the package directory it runs in (its tests read files there).
#[derive(Debug, Clone)]
pub struct Suite {
    /// The test binary.
    pub binary: PathBuf,
    /// The package directory in the module cache.
    pub package_dir: PathBuf,
}

/// The Go toolchain: `$KCONFORM_GO` when set (that one only), else on PATH, else where
/// `$GOROOT` or the official installer puts it (a CI shell's PATH may lack /usr/local/go/bin).
/// The tests that build kfake find it here too.
pub fn go() -> Result<PathBuf, SuiteError> {
    if let Some(chosen) = std::env::var_os("KCONFORM_GO") {
        let chosen = PathBuf::from(chosen);
        return match chosen.is_file() {
            true => Ok(chosen),
            false => Err(SuiteError::NoGo),
        };
    }
    let on_path = std::env::var_os("PATH")
        .map(|p| {
            std::env::split_paths(&p)
                .map(|d| d.join("go"))
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    let installed = std::env::var_os("GOROOT")
        .map(|r| PathBuf::from(r).join("bin/go"))
        .into_iter()
        .chain([PathBuf::from("/usr/local/go/bin/go")]);
    on_path
        .into_iter()
        .chain(installed)
        .find(|p| p.is_file())
        .ok_or(SuiteError::NoGo)
}

/// Where built binaries are kept: `$XDG_CACHE_HOME/kconform/franz-go-<version>/`.
pub fn cache_dir() -> PathBuf {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    base.join("kconform").join(format!("franz-go-{VERSION}"))
}

fn output(cmd: &mut Command) -> Result<String, String> {
    let out = cmd.output().map_err(|e| e.to_string())?;
    match out.status.success() {
        true => Ok(String::from_utf8_lossy(&out.stdout).into_owned()),
        false => {
            let err = String::from_utf8_lossy(&out.stderr);
            let last = err
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("");
            Err(format!("{} ({})", last.trim(), out.status))
        }
    }
}

impl Suite {
    /// Downloads the module (cached by Go) and builds the test binary unless the cache has it.
    /// `announce` is told before the slow parts (a first build takes about 40 s here).
    pub fn prepare(announce: impl Fn(&str)) -> Result<Suite, SuiteError> {
        let go = go()?;
        #[derive(Deserialize)]
        struct Download {
            #[serde(rename = "Dir")]
            dir: Option<PathBuf>,
            #[serde(rename = "Error")]
            error: Option<String>,
        }
        let json = output(
            Command::new(&go)
                .args(["mod", "download", "-json"])
                .arg(format!("{MODULE}@{VERSION}"))
                // Outside any module, so the download is all it does.
                .current_dir(std::env::temp_dir()),
        )
        .map_err(SuiteError::Download)?;
        let download: Download =
            serde_json::from_str(&json).map_err(|e| SuiteError::Download(e.to_string()))?;
        if let Some(e) = download.error {
            return Err(SuiteError::Download(e));
        }
        let module_dir = download
            .dir
            .ok_or_else(|| SuiteError::Download("no module directory reported".into()))?;
        let package_dir = module_dir.join(PACKAGE);
        let cache = cache_dir();
        let binary = cache.join("kgo.test");
        if !binary.is_file() {
            announce(&format!(
                "building franz-go {VERSION}'s {PACKAGE} test binary (once; cached in {})",
                cache.display()
            ));
            std::fs::create_dir_all(&cache).map_err(|e| SuiteError::Build(e.to_string()))?;
            // Built beside its final name, then renamed: an interrupted build leaves no binary
            // that looks complete.
            let partial = cache.join(format!("kgo.test.{}.partial", std::process::id()));
            output(
                Command::new(&go)
                    .args(["test", "-c", "-o"])
                    .arg(&partial)
                    .arg(format!("./{PACKAGE}"))
                    .current_dir(&module_dir)
                    // The module cache is read-only; its go.sum is complete, and -mod=mod lets
                    // Go fetch the dependencies it lists.
                    .env("GOFLAGS", "-mod=mod"),
            )
            .map_err(SuiteError::Build)?;
            std::fs::rename(&partial, &binary).map_err(|e| SuiteError::Build(e.to_string()))?;
        }
        Ok(Suite {
            binary,
            package_dir,
        })
    }

    /// The top-level tests the binary has that match `run` (a Go test regexp).
    pub fn list(&self, run: &str) -> Result<Vec<String>, SuiteError> {
        let text = output(
            Command::new(&self.binary)
                .arg(format!("-test.list={run}"))
                .current_dir(&self.package_dir),
        )
        .map_err(|reason| SuiteError::Run {
            target: "-".into(),
            reason,
        })?;
        Ok(text
            .lines()
            .map(str::trim)
            .filter(|l| l.starts_with("Test"))
            .map(str::to_owned)
            .collect())
    }
}

/// How a test ended on one target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// Passed.
    Pass,
    /// Failed (or panicked).
    Fail,
    /// Skipped itself (a feature the broker lacks, such as KIP-848).
    Skip,
    /// Started and never ended: the run's deadline passed, or the binary died.
    Unfinished,
}

/// One test's result on one target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestResult {
    /// How it ended.
    pub outcome: Outcome,
    /// Seconds, as the test binary measured them.
    pub secs: f64,
    /// The last lines it printed before failing (for a failure's diagnosis).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub failure: Vec<String>,
}

/// One target's run of the suite.
#[derive(Debug, Clone, Default)]
pub struct SuiteRun {
    /// Top-level test name → result.
    pub tests: BTreeMap<String, TestResult>,
    /// The whole run's wall time.
    pub wall: Duration,
}

/// What a run of the suite is told.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Go test regexp of the tests to run.
    pub run: String,
    /// `KGO_TEST_RECORDS`: records the produce/consume tests move.
    pub records: u32,
    /// The suite's own timeout (`-test.timeout`); kconform stops the binary a little after.
    pub timeout: Duration,
    /// `-test.parallel`, or the suite's default (GOMAXPROCS) when `None`.
    pub parallel: Option<u32>,
}

/// One event of `go tool test2json`.
#[derive(Debug, Deserialize)]
struct Event {
    #[serde(rename = "Action")]
    action: String,
    #[serde(rename = "Test")]
    test: Option<String>,
    #[serde(rename = "Elapsed")]
    elapsed: Option<f64>,
    #[serde(rename = "Output")]
    output: Option<String>,
}

/// Reads test2json events into results: top-level tests only (subtests are part of their
/// parent's result); a test that started and never ended is `Unfinished`. `on_done` is called
/// with each finished top-level test.
pub fn read_events(
    lines: impl Iterator<Item = String>,
    mut on_done: impl FnMut(&str, &TestResult),
) -> BTreeMap<String, TestResult> {
    let mut tests: BTreeMap<String, TestResult> = BTreeMap::new();
    let mut recent: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut measured: BTreeMap<String, f64> = BTreeMap::new();
    for line in lines {
        let Ok(event) = serde_json::from_str::<Event>(&line) else {
            continue;
        };
        let Some(test) = event.test.as_deref() else {
            continue;
        };
        let top = test.split('/').next().unwrap_or(test).to_owned();
        if let Some(secs) = event.output.as_deref().and_then(|o| reported_secs(o, test)) {
            measured.insert(test.to_owned(), secs);
        }
        // A failure's diagnosis: the first lines the test (or its subtests) logged, leaving
        // out the suite's own clean-up notes.
        if let Some(out) = &event.output {
            let kept = recent.entry(top.clone()).or_default();
            let line = out.trim_end();
            if kept.len() < 8 && line.contains(".go:") && !line.contains("NOT DELETING") {
                kept.push(line.to_owned());
            }
        }
        if test.contains('/') {
            continue;
        }
        let outcome = match event.action.as_str() {
            "run" => {
                tests.entry(top).or_insert(TestResult {
                    outcome: Outcome::Unfinished,
                    secs: 0.0,
                    failure: Vec::new(),
                });
                continue;
            }
            "pass" => Outcome::Pass,
            "fail" => Outcome::Fail,
            "skip" => Outcome::Skip,
            _ => continue,
        };
        let result = TestResult {
            outcome,
            secs: measured.get(test).copied().or(event.elapsed).unwrap_or(0.0),
            failure: match outcome {
                Outcome::Fail => recent.remove(&top).unwrap_or_default(),
                _ => Vec::new(),
            },
        };
        on_done(&top, &result);
        tests.insert(top, result);
    }
    tests
}

/// The seconds in a test's own `--- PASS: TestX (1.23s)` line (test2json leaves Elapsed out
/// when it reads a stream rather than running the binary itself).
fn reported_secs(output: &str, test: &str) -> Option<f64> {
    let line = output.trim();
    let rest = ["--- PASS: ", "--- FAIL: ", "--- SKIP: "]
        .iter()
        .find_map(|p| line.strip_prefix(p))?;
    let secs = rest
        .strip_prefix(test)?
        .trim()
        .strip_prefix('(')?
        .strip_suffix("s)")?;
    secs.parse().ok()
}

impl Suite {
    /// Runs the chosen tests against a broker at `seeds`, calling `on_done` as each finishes.
    pub fn run(
        &self,
        target: &str,
        seeds: &str,
        options: &RunOptions,
        on_done: impl FnMut(&str, &TestResult),
    ) -> Result<SuiteRun, SuiteError> {
        let failed = |reason: String| SuiteError::Run {
            target: target.to_owned(),
            reason,
        };
        let started = Instant::now();
        // The test binary runs itself (so that it is the process a deadline kills) and its
        // -test.v=test2json stream goes through `go tool test2json` for JSON events.
        let mut cmd = Command::new(&self.binary);
        cmd.arg("-test.v=test2json")
            .arg(format!("-test.run={}", options.run))
            .arg(format!("-test.timeout={}s", options.timeout.as_secs()))
            .current_dir(&self.package_dir)
            .env("KGO_SEEDS", seeds)
            .env("KGO_TEST_RF", "1")
            .env("KGO_TEST_RECORDS", options.records.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        if let Some(n) = options.parallel {
            cmd.arg(format!("-test.parallel={n}"));
        }
        let mut binary = cmd.spawn().map_err(|e| failed(e.to_string()))?;
        let stream = binary
            .stdout
            .take()
            .ok_or_else(|| failed("no stdout".into()))?;
        let mut json = Command::new(go()?)
            .args(["tool", "test2json", "-p", "kgo"])
            .stdin(Stdio::from(stream))
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| failed(format!("go tool test2json: {e}")))?;
        let events = json
            .stdout
            .take()
            .ok_or_else(|| failed("no stdout".into()))?;
        // The suite's -test.timeout panics the binary when it passes; this watchdog kills a
        // binary that hangs past it anyway, so no run waits without a deadline.
        let pid = binary.id();
        let hard_stop = options.timeout + Duration::from_secs(30);
        let (finished, wait) = std::sync::mpsc::channel::<()>();
        let watchdog = std::thread::spawn(move || {
            if let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = wait.recv_timeout(hard_stop) {
                // SAFETY: kill(2) on the pid of a child we spawned and have not reaped yet.
                unsafe {
                    libc::kill(pid as i32, libc::SIGKILL);
                }
            }
        });
        let lines = BufReader::new(events).lines().map_while(Result::ok);
        let tests = read_events(lines, on_done);
        let _ = binary.wait();
        let _ = json.wait();
        drop(finished);
        let _ = watchdog.join();
        Ok(SuiteRun {
            tests,
            wall: started.elapsed(),
        })
    }
}

/// Whether the suite can run here at all (a Go toolchain on PATH), and why not.
pub fn available() -> Result<(), SuiteError> {
    go().map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test2json_events_become_top_level_results() {
        let events = [
            r#"{"Action":"start","Package":"kgo"}"#,
            r#"{"Action":"run","Test":"TestA"}"#,
            r#"{"Action":"run","Test":"TestA/sub"}"#,
            r#"{"Action":"pass","Test":"TestA/sub","Elapsed":0.5}"#,
            r#"{"Action":"pass","Test":"TestA","Elapsed":1.25}"#,
            r#"{"Action":"run","Test":"TestB"}"#,
            r#"{"Action":"output","Test":"TestB","Output":"    x_test.go:9: boom\n"}"#,
            r#"{"Action":"fail","Test":"TestB","Elapsed":2}"#,
            r#"{"Action":"run","Test":"TestC"}"#,
            r#"{"Action":"output","Test":"TestC","Output":"--- SKIP: TestC (0.25s)\n"}"#,
            r#"{"Action":"skip","Test":"TestC","Elapsed":0}"#,
            r#"{"Action":"run","Test":"TestHangs"}"#,
            "not json",
        ];
        let mut done = Vec::new();
        let tests = read_events(events.iter().map(|s| s.to_string()), |t, _| {
            done.push(t.to_owned())
        });
        assert_eq!(done, ["TestA", "TestB", "TestC"]);
        assert_eq!(tests["TestA"].outcome, Outcome::Pass);
        assert_eq!(tests["TestA"].secs, 1.25);
        assert_eq!(tests["TestB"].outcome, Outcome::Fail);
        assert_eq!(tests["TestB"].failure, ["    x_test.go:9: boom"]);
        assert_eq!(tests["TestC"].outcome, Outcome::Skip);
        assert_eq!(tests["TestC"].secs, 0.25, "read from the test's own line");
        assert_eq!(tests["TestHangs"].outcome, Outcome::Unfinished);
        assert_eq!(tests.len(), 4);
    }
}
