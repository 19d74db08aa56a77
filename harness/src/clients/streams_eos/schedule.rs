//! The schedule Apache's own system test (`streams_eos_test.py`, failure and recovery,
//! complex) runs, driven by the markers the programs print: the driver writes input; three
//! processors join one by one; the second is SIGKILLed and comes back on its state folder
//! (InitProducerId must fence its old epoch and abort what it left open), the third is
//! SIGKILLed and comes back on a fresh one (a new transactional id: the broker must time the
//! old transaction out, and hold the group's offsets unstable meanwhile); all stop; the
//! verifier reads every partition. After each change every live processor must reach
//! `RUNNING` and process records again within the step's deadline, or the run HANGs there.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::Serialize;

use super::program::{Missed, Program};

/// SIGKILL and SIGTERM.
const KILL: i32 = 9;
const TERM: i32 = 15;

/// How long each step and the verifier may take.
#[derive(Debug, Clone, Copy)]
pub struct Deadlines {
    /// A step: the processors back at work after a change, a program started or stopped.
    pub step: Duration,
    /// The verifier (its own idle waits are ten minutes).
    pub verify: Duration,
}

/// How a target's run ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum Verdict {
    /// The verifier printed ALL-RECORDS-DELIVERED and exited 0.
    Pass,
    /// A program failed: where, and the first line that says why.
    Fail {
        /// The stage.
        stage: String,
        /// The first error line.
        first_error: String,
    },
    /// A stage's deadline passed: where, and what it waited for.
    Hang {
        /// The stage.
        stage: String,
        /// What it waited for, with the last line of the program it waited on.
        waiting_for: String,
    },
    /// The run could not be set up (the target, the topics, the jars).
    NotRun {
        /// Why.
        why: String,
    },
}

impl Verdict {
    /// The word a report leads with.
    pub fn word(&self) -> &'static str {
        match self {
            Verdict::Pass => "PASS",
            Verdict::Fail { .. } => "FAIL",
            Verdict::Hang { .. } => "HANG",
            Verdict::NotRun { .. } => "NOT RUN",
        }
    }
}

/// A stage done, and when.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Stage {
    /// Its name.
    pub name: String,
    /// Seconds from the start of the schedule to its end.
    pub at_secs: f64,
}

/// What a schedule left.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Outcome {
    /// How it ended.
    pub verdict: Verdict,
    /// The stages done, in order.
    pub stages: Vec<Stage>,
    /// Each exception a processor printed (`EOS-TEST-CLIENT-EXCEPTION`), first line, with the
    /// processor: Streams restarts after one, and the verifier judges what it left.
    pub exceptions: Vec<String>,
    /// How many records the driver said it produced.
    pub produced: Option<u64>,
}

/// One run of the schedule.
struct Run<'a> {
    libs: &'a Path,
    bootstrap: &'a str,
    dir: &'a Path,
    deadlines: Deadlines,
    started: Instant,
    driver: Option<Program>,
    /// The processors, with the line each stood at when the current step began.
    processors: Vec<(Program, usize)>,
    /// Every processor that ran, for the exceptions it printed.
    ended: Vec<Program>,
    stages: Vec<Stage>,
}

/// Whether a line says a processor is running again.
fn running(line: &str) -> bool {
    line.contains("StateChange: REBALANCING -> RUNNING")
}

/// Whether a line says a processor processed records.
fn processed(line: &str) -> bool {
    line.starts_with("processed ") && line.contains(" records from topic")
}

impl Run<'_> {
    /// A properties file for `name`, with its state folder `state` (none for the driver and the
    /// verifier, which keep no state).
    fn props(&self, name: &str, state: Option<&str>) -> std::io::Result<PathBuf> {
        let mut text = format!(
            "bootstrap.servers={}\nprocessing.guarantee=exactly_once_v2\nacceptable.recovery.lag=9223372036854775807\nsession.timeout.ms=10000\n",
            self.bootstrap
        );
        if let Some(state) = state {
            text.push_str(&format!("state.dir={}\n", self.dir.join(state).display()));
        }
        let path = self.dir.join(format!("{name}.properties"));
        std::fs::write(&path, text)?;
        Ok(path)
    }

    fn program(
        &self,
        name: &str,
        file: &str,
        state: Option<&str>,
        command: &str,
    ) -> Result<Program, Verdict> {
        let props = self.props(file, state).map_err(|e| not_run(&e))?;
        let out = self.dir.join(format!("{file}.out"));
        Program::start(self.libs, &props, command, name, &out).map_err(|e| not_run(&e))
    }

    fn done(&mut self, name: &str) {
        self.stages.push(Stage {
            name: name.to_owned(),
            at_secs: self.started.elapsed().as_secs_f64(),
        });
    }

    /// Starts a processor (`file` names its output, `state` its state folder).
    fn add(&mut self, name: &str, file: &str, state: &str) -> Result<(), Verdict> {
        let p = self.program(name, file, Some(state), "process-complex")?;
        self.processors.push((p, 0));
        Ok(())
    }

    /// Every live processor back at work: RUNNING after the step began, then records
    /// processed after that.
    fn settle(&mut self, stage: &str) -> Result<(), Verdict> {
        let deadline = Instant::now() + self.deadlines.step;
        for (p, mark) in &mut self.processors {
            let at = p
                .wait_for(*mark, deadline, running)
                .and_then(|at| p.wait_for(at + 1, deadline, processed));
            match at {
                Ok(at) => *mark = at + 1,
                Err(missed) => {
                    return Err(missed_verdict(
                        stage,
                        p,
                        "RUNNING, then records processed",
                        missed,
                    ))
                }
            }
        }
        self.done(stage);
        Ok(())
    }

    /// Marks where each live processor's output stands, so the next settle reads past it.
    fn mark(&mut self) {
        for (p, mark) in &mut self.processors {
            *mark = p.lines().len();
        }
    }

    /// SIGKILLs the processor named `name`, keeping its output for the report.
    fn kill(&mut self, name: &str) {
        if let Some(i) = self.processors.iter().position(|(p, _)| p.name == name) {
            let (mut p, _) = self.processors.remove(i);
            p.signal(KILL);
            let _ = p.wait_end(Instant::now() + Duration::from_secs(10));
            self.ended.push(p);
        }
    }

    /// Stops every processor, last started first, then the driver.
    fn stop_all(&mut self) -> Result<(), Verdict> {
        while let Some((mut p, _)) = self.processors.pop() {
            p.signal(TERM);
            let ended = p.wait_end(Instant::now() + self.deadlines.step);
            let name = p.name.clone();
            self.ended.push(p);
            if ended.is_none() {
                return Err(Verdict::Hang {
                    stage: "stop the processors".into(),
                    waiting_for: format!("{name} to close after SIGTERM"),
                });
            }
        }
        self.done("stop the processors");
        if let Some(mut d) = self.driver.take() {
            d.signal(TERM);
            let ended = d.wait_end(Instant::now() + self.deadlines.step);
            self.driver = Some(d);
            if ended.is_none() {
                return Err(Verdict::Hang {
                    stage: "stop the driver".into(),
                    waiting_for: "the driver to close after SIGTERM".into(),
                });
            }
        }
        self.done("stop the driver");
        Ok(())
    }

    /// The steps up to the verifier.
    fn steps(&mut self) -> Result<(), Verdict> {
        let driver = self.program("driver", "driver", None, "run")?;
        self.driver = Some(driver);
        if let Some(d) = self.driver.as_mut() {
            let deadline = Instant::now() + self.deadlines.step;
            d.wait_for(0, deadline, |l| l.contains("StreamsTest instance started"))
                .map_err(|m| missed_verdict("start the driver", d, "its start", m))?;
        }
        self.done("start the driver");
        for n in 1..=3 {
            self.mark();
            self.add(
                &format!("processor {n}"),
                &format!("p{n}"),
                &format!("p{n}-state"),
            )?;
            self.settle(&format!("processor {n} joins"))?;
        }
        self.kill("processor 2");
        self.mark();
        self.add("processor 2 (back on its state)", "p2-again", "p2-state")?;
        self.settle("processor 2 killed, back on its state folder")?;
        self.kill("processor 3");
        self.mark();
        self.add(
            "processor 3 (back on a fresh state)",
            "p3-fresh",
            "p3-fresh-state",
        )?;
        self.settle("processor 3 killed, back on a fresh state folder")?;
        self.stop_all()
    }

    /// The verifier's word.
    fn verify(&mut self) -> Verdict {
        let mut v = match self.program("verifier", "verify", None, "verify-complex") {
            Ok(v) => v,
            Err(e) => return e,
        };
        let ended = v.wait_end(Instant::now() + self.deadlines.verify);
        let lines = v.lines();
        let verdict = match ended {
            None => Verdict::Hang {
                stage: "verify".into(),
                waiting_for: format!("the verifier to end (its last line: {})", last_line(&lines)),
            },
            Some(status)
                if status.success()
                    && lines.iter().any(|l| l.contains("ALL-RECORDS-DELIVERED")) =>
            {
                Verdict::Pass
            }
            Some(status) => Verdict::Fail {
                stage: "verify".into(),
                first_error: first_error(&lines).unwrap_or_else(|| {
                    format!("exit {status}; its last line: {}", last_line(&lines))
                }),
            },
        };
        self.done("verify");
        verdict
    }
}

/// The verifier's first error, with the line before it (what it was comparing: `echo-0 with
/// 2431, data-0 with 1408`) and the first frame of Apache's code under it (where it gave up).
fn first_error(lines: &[String]) -> Option<String> {
    let i = lines
        .iter()
        .position(|l| l.contains("FAIL") || l.contains("Exception") || l.contains("Error:"))?;
    let mut said = lines[i].trim().to_owned();
    if let Some(before) = i
        .checked_sub(1)
        .map(|b| lines[b].trim())
        .filter(|b| !b.is_empty())
    {
        said = format!("{before}; then {said}");
    }
    let frame = lines[i + 1..]
        .iter()
        .take_while(|l| l.trim_start().starts_with("at "))
        .find(|l| l.contains("org.apache.kafka"));
    if let Some(frame) = frame {
        said = format!("{said} ({})", frame.trim());
    }
    Some(said)
}

fn not_run(e: &std::io::Error) -> Verdict {
    Verdict::NotRun {
        why: format!("a test program could not start: {e}"),
    }
}

/// The last line that says something.
fn last_line(lines: &[String]) -> String {
    lines
        .iter()
        .rev()
        .find(|l| !l.trim().is_empty())
        .cloned()
        .unwrap_or_else(|| "(nothing)".into())
}

/// A wait of `stage` on `p` for `what` that did not end well.
fn missed_verdict(stage: &str, p: &mut Program, what: &str, missed: Missed) -> Verdict {
    let lines = p.lines();
    match missed {
        Missed::Deadline => Verdict::Hang {
            stage: stage.into(),
            waiting_for: format!(
                "{} to show {what} (its last line: {})",
                p.name,
                last_line(&lines)
            ),
        },
        Missed::Ended(status) => Verdict::Fail {
            stage: stage.into(),
            first_error: format!(
                "{} ended ({status}); its last line: {}",
                p.name,
                last_line(&lines)
            ),
        },
    }
}

/// Each exception a program printed: the line after `EOS-TEST-CLIENT-EXCEPTION`, skipping
/// the timestamps the client prints between.
fn exceptions(p: &Program) -> Vec<String> {
    let lines = p.lines();
    let mut found = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if l.contains("EOS-TEST-CLIENT-EXCEPTION") {
            let what = lines[i + 1..]
                .iter()
                .find(|l| !l.trim().is_empty() && !l.trim().chars().all(|c| c.is_ascii_digit()))
                .cloned()
                .unwrap_or_default();
            found.push(format!("{}: {what}", p.name));
        }
    }
    found
}

/// The records the driver said it produced: the number on its last `records produced` line.
fn produced(p: &Program) -> Option<u64> {
    let lines = p.lines();
    let line = lines
        .iter()
        .rev()
        .find(|l| l.contains("records produced"))?;
    line.split(|c: char| !c.is_ascii_digit())
        .find(|w| !w.is_empty())?
        .parse()
        .ok()
}

/// Runs the schedule against `bootstrap`, every output in `dir`.
pub fn run(libs: &Path, bootstrap: &str, dir: &Path, deadlines: Deadlines) -> Outcome {
    let mut run = Run {
        libs,
        bootstrap,
        dir,
        deadlines,
        started: Instant::now(),
        driver: None,
        processors: Vec::new(),
        ended: Vec::new(),
        stages: Vec::new(),
    };
    let verdict = match run.steps() {
        Ok(()) => run.verify(),
        Err(v) => v,
    };
    let mut all: Vec<&Program> = run.ended.iter().collect();
    all.extend(run.processors.iter().map(|(p, _)| p));
    Outcome {
        verdict,
        stages: run.stages.clone(),
        exceptions: all.iter().flat_map(|p| exceptions(p)).collect(),
        produced: run.driver.as_ref().and_then(produced),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_verifiers_error_comes_with_what_it_compared_and_where_it_gave_up() {
        let out: Vec<String> = [
            "read end offset: {...}",
            "echo-0 with 2431, data-0 with 1408",
            "Exception in thread \"main\" java.util.NoSuchElementException",
            "\tat java.base/java.util.ArrayList$Itr.next(ArrayList.java:970)",
            "\tat org.apache.kafka.streams.tests.EosTestDriver.verifyReceivedAllRecords(EosTestDriver.java:395)",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(
            first_error(&out).unwrap(),
            "echo-0 with 2431, data-0 with 1408; then Exception in thread \"main\" java.util.NoSuchElementException (at org.apache.kafka.streams.tests.EosTestDriver.verifyReceivedAllRecords(EosTestDriver.java:395))"
        );
        assert_eq!(first_error(&["ALL-RECORDS-DELIVERED".to_owned()]), None);
    }

    #[test]
    fn the_markers_read_as_the_programs_print_them() {
        assert!(running("StateChange: REBALANCING -> RUNNING"));
        assert!(!running("StateChange: CREATED -> REBALANCING"));
        assert!(processed("processed 100 records from topic=data"));
        assert!(!processed("Producer closed: 100 records produced"));
    }
}
