//! One row of the matrix: one broker against one Apache, installed, started, asked whether it
//! serves transactions, and certified by `kconform certify` in a process of its own (a broker
//! that crashes a judge leaves the other rows whole); every failure is a cell that says so,
//! never a missing row.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use super::brokers::{Broker, Claim, LedgerChoice, Start};
use super::cell::{self, Cell, Word};
use super::history::{self, Run};
use super::started;

/// How every row's certification runs.
#[derive(Debug, Clone)]
pub struct Certifier {
    /// The site: each run's files go under its `runs/`.
    pub site: PathBuf,
    /// The kconform binary that runs `certify`.
    pub kconform: PathBuf,
    /// The version of that kconform, kept with each run.
    pub version: String,
    /// Arguments every `certify` gets besides its target, Apache and files (`--budget`,
    /// `--judge`, `--skip`, `--apache-backend`).
    pub arguments: Vec<String>,
    /// How long one certification may take before it is killed.
    pub deadline: Duration,
}

impl Certifier {
    /// The row of `broker` against `against`.
    pub async fn row(&self, broker: &Broker, against: &str) -> Run {
        let began = Instant::now();
        let mut run = Run {
            schema_version: history::SCHEMA_VERSION,
            kconform_version: self.version.clone(),
            broker: broker.name.clone(),
            broker_version: broker.version.clone(),
            against: against.to_owned(),
            started: SystemTime::now()
                .duration_since(SystemTime::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
            secs: 0.0,
            transaction_apis: None,
            cells: Vec::new(),
            summary: String::new(),
            page: None,
            certificate: None,
            log: None,
        };
        let stem = run.stem();
        let log = self.site.join(format!("{stem}.log"));
        if let Some(dir) = log.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        run.log = Some(format!("{stem}.log"));
        let install_dir = install_dir(&broker.name);
        let started = match std::fs::create_dir_all(&install_dir) {
            Ok(()) => self.started(broker, &mut run, &install_dir, &log).await,
            Err(e) => Err(format!("its install folder {}: {e}", install_dir.display())),
        };
        if let Err(why) = started {
            run.cells.push(Cell {
                column: "start".into(),
                word: Word::CouldNotStart,
                why: why.clone(),
            });
            run.summary = format!("COULD NOT START: {why}");
        }
        run.secs = began.elapsed().as_secs_f64();
        run
    }

    /// The row past its install: the broker started (when it is a command), its claim checked,
    /// certify run on it. Err: it could not be installed or started.
    async fn started(
        &self,
        broker: &Broker,
        run: &mut Run,
        install_dir: &Path,
        log: &Path,
    ) -> Result<(), String> {
        if let Some(install) = &broker.install {
            started::install(install, install_dir, log)
                .await
                .map_err(|e| e.to_string())?;
        }
        let data = tempfile::tempdir().map_err(|e| format!("a data folder: {e}"))?;
        let (target, _running) = match &broker.start {
            Start::Target(t) => (t.clone(), None),
            Start::Command(command) => {
                let port = reference_broker::ports::free_port([127, 0, 0, 1].into())
                    .map_err(|e| format!("a free port: {e}"))?;
                let ready = Duration::from_secs(broker.ready_secs);
                let s = started::start(command, port, data.path(), install_dir, ready, log)
                    .await
                    .map_err(|e| e.to_string())?;
                run.transaction_apis = Some(started::transaction_apis(&s.advertised));
                (format!("external={}", s.addr), Some(s))
            }
        };
        if broker.transactions == Claim::None && !claim_holds(run) {
            return Ok(());
        }
        let ledger_dir = tempfile::tempdir().map_err(|e| format!("a ledger folder: {e}"))?;
        let scenarios =
            ledger(&broker.ledger, ledger_dir.path()).map_err(|e| format!("its ledger: {e}"))?;
        let ended = self
            .certify(&target, run, scenarios.as_deref(), install_dir, log)
            .await;
        self.read_certificate(run, ended);
        if let Some(why) = &broker.informs {
            informing(run, why);
        }
        Ok(())
    }

    /// The run's cells from the certificate certify wrote, or one cell saying why there is
    /// none.
    fn read_certificate(&self, run: &mut Run, ended: String) {
        let (json, page) = (run.certificate_file(), run.page_file());
        let certificate = std::fs::read_to_string(self.site.join(&json))
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok());
        let Some(certificate) = certificate else {
            run.cells.push(Cell {
                column: "certify".into(),
                word: Word::CouldNotRun,
                why: ended.clone(),
            });
            run.summary = format!("COULD NOT RUN: {ended}");
            return;
        };
        run.cells.extend(cell::of_certificate(&certificate));
        let findings = certificate["findings"].as_array().map_or(0, Vec::len);
        run.summary = format!(
            "{}: {findings} finding(s)",
            certificate["verdict"]
                .as_str()
                .unwrap_or("?")
                .to_uppercase()
        );
        run.certificate = Some(json);
        run.page = self.site.join(&page).exists().then_some(page);
    }

    /// Runs `kconform certify` on `target` for `run`, its JSON and page into the site, its
    /// output appended to `log`, killed past the deadline: how it ended and its last lines.
    async fn certify(
        &self,
        target: &str,
        run: &Run,
        scenarios: Option<&Path>,
        install_dir: &Path,
        log: &Path,
    ) -> String {
        let mut command = tokio::process::Command::new(&self.kconform);
        command
            .arg("certify")
            .args(["--target", target, "--against", &run.against, "--quiet"])
            .arg("--json")
            .arg(self.site.join(run.certificate_file()))
            .arg("--html")
            .arg(self.site.join(run.page_file()))
            .arg("--findings")
            .arg(install_dir.join("fuzz-findings"))
            .args(&self.arguments)
            .kill_on_drop(true);
        if let Some(dir) = scenarios {
            command.arg("--scenarios").arg(dir);
        }
        match started::log_files(log) {
            Ok((out, err)) => {
                command.stdout(out).stderr(err);
            }
            Err(e) => return format!("its log {}: {e}", log.display()),
        }
        let ended = match command.spawn() {
            Ok(mut child) => match tokio::time::timeout(self.deadline, child.wait()).await {
                Ok(Ok(status)) => status.to_string(),
                Ok(Err(e)) => format!("certify: {e}"),
                Err(_) => format!(
                    "certify did not end within {} min; killed",
                    self.deadline.as_secs() / 60
                ),
            },
            Err(e) => format!("certify could not start: {e}"),
        };
        format!("{ended}: {}", started::tail(log))
    }
}

/// kconform's cache folder for `broker`: what its install leaves, and its fuzz findings.
pub fn install_dir(broker: &str) -> PathBuf {
    crate::targets::apache::jars::cache_root()
        .join("matrix")
        .join(broker)
}

/// For a broker that documents no transactions: whether it is certified on. One that
/// advertises none gets its one cell, not served; one that advertises some is named for it,
/// and certified as any broker.
fn claim_holds(run: &mut Run) -> bool {
    match run.transaction_apis.as_deref() {
        Some([]) => {
            run.cells.push(Cell {
                column: "transactions".into(),
                word: Word::NotServed,
                why: "advertises none of the transaction APIs (22, 24 to 28), as its documentation says".into(),
            });
            run.summary = "NOT SERVED: refuses transactions cleanly".into();
            false
        }
        Some(apis) => {
            run.cells.push(Cell {
                column: "transactions".into(),
                word: Word::Undocumented,
                why: format!("advertises the transaction APIs {apis:?}, though its documentation claims none: certified as any broker"),
            });
            true
        }
        None => true,
    }
}

/// For a broker whose differences inform (another Apache release): each `wrong` cell made
/// `informational`, saying why.
fn informing(run: &mut Run, why: &str) {
    for cell in run.cells.iter_mut().filter(|c| c.word == Word::Wrong) {
        cell.word = Word::Informational;
        cell.why = format!("{why}: {}", cell.why);
    }
    if !run.cells.iter().any(|c| c.word.fails()) {
        run.summary = format!("INFORMS ({why}): {}", run.summary);
    }
}

/// The `--scenarios` folder that makes `choice` certify's ledger (none: the built-in one).
fn ledger(choice: &LedgerChoice, dir: &Path) -> std::io::Result<Option<PathBuf>> {
    let path = dir.join("deviations.toml");
    match choice {
        LedgerChoice::BuiltIn => return Ok(None),
        LedgerChoice::None => std::fs::write(
            &path,
            "# This broker's documentation states no deviation from Apache.\ndeviation = []\n",
        )?,
        LedgerChoice::File(file) => {
            std::fs::copy(file, &path)?;
        }
    }
    Ok(Some(dir.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An informing broker's wrong cells inform, saying why; its other cells stay.
    #[test]
    fn an_informing_broker_is_informational_where_it_differs() {
        let cell = |column: &str, word| Cell {
            column: column.into(),
            word,
            why: "13 causes".into(),
        };
        let mut run = Run {
            schema_version: history::SCHEMA_VERSION,
            kconform_version: "0".into(),
            broker: "apache-4.4".into(),
            broker_version: "4.4.0".into(),
            against: "apache".into(),
            started: 0,
            secs: 0.0,
            transaction_apis: None,
            cells: vec![
                cell("scenarios", Word::Wrong),
                cell("fuzz", Word::Held),
                cell("start", Word::CouldNotStart),
            ],
            summary: String::new(),
            page: None,
            certificate: None,
            log: None,
        };
        informing(&mut run, "how Kafka moved");
        let words: Vec<Word> = run.cells.iter().map(|c| c.word).collect();
        assert_eq!(
            words,
            [Word::Informational, Word::Held, Word::CouldNotStart]
        );
        assert_eq!(run.cells[0].why, "how Kafka moved: 13 causes");
        assert_eq!(
            run.summary, "",
            "a cell that could not start still fails the row"
        );
        run.cells.pop();
        run.summary = "FAILED: 3 finding(s)".into();
        informing(&mut run, "how Kafka moved");
        assert_eq!(
            run.summary,
            "INFORMS (how Kafka moved): FAILED: 3 finding(s)"
        );
    }

    /// No ledger is an empty one kconform reads; a file of its own stands for the built-in.
    #[test]
    fn each_ledger_choice_is_a_ledger_certify_reads() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(ledger(&LedgerChoice::BuiltIn, dir.path()).unwrap(), None);
        let none = ledger(&LedgerChoice::None, dir.path()).unwrap().unwrap();
        let text = std::fs::read_to_string(none.join("deviations.toml")).unwrap();
        let read = crate::compare::ledger::Ledger::parse(&text, "deviations.toml").unwrap();
        assert!(read.deviations.is_empty());
    }
}
