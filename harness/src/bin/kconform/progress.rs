//! Progress on stderr while brokers start and scenarios run: a spinner for a broker that takes
//! seconds to start (Apache), a bar per target for the scenarios, a line per client workload,
//! the fuzzers' counters. The library tells what happens through its one `Progress` trait
//! (`kconform::report::progress`); [`Bars`] draws it for every command. Bars hide themselves when stderr is not a terminal, so CI logs stay clean.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{MultiProgress, ProgressBar, ProgressStyle};

/// `--quiet`: no bars, spinners or notes.
static QUIET: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Hides every bar, spinner and note from now on (`--quiet`).
pub fn set_quiet(quiet: bool) {
    QUIET.store(quiet, std::sync::atomic::Ordering::Relaxed);
}

/// Whether `--quiet` was given: notes ([`note!`]) are left out.
pub fn is_quiet() -> bool {
    QUIET.load(std::sync::atomic::Ordering::Relaxed)
}

fn quiet() -> bool {
    is_quiet()
}

/// A spinner, or a hidden one under `--quiet`.
fn spinner() -> ProgressBar {
    match quiet() {
        true => ProgressBar::hidden(),
        false => ProgressBar::new_spinner(),
    }
}

/// A spinner shown while `target` starts.
pub fn starting(target: &str) -> ProgressBar {
    let bar = spinner().with_message(format!("starting {target}"));
    bar.set_style(
        ProgressStyle::with_template("{spinner} {msg} ({elapsed})")
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    bar.enable_steady_tick(Duration::from_millis(120));
    bar
}

/// The fuzzers' spinner: how long they have run of `total`, then their counters.
pub fn fuzzing(total: Duration) -> ProgressBar {
    let total = indicatif::HumanDuration(total);
    let bar = spinner();
    bar.set_style(
        ProgressStyle::with_template(&format!("{{spinner}} {{elapsed}} of {total}: {{wide_msg}}"))
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    bar.enable_steady_tick(Duration::from_millis(120));
    bar
}

/// How often the counters are printed as a plain line where stderr is no terminal (CI, nohup):
/// an overnight run is not silent for eight hours. Every minute, or every
/// `KCONFORM_PROGRESS_EVERY` seconds.
fn plain_every() -> Duration {
    let secs = std::env::var("KCONFORM_PROGRESS_EVERY")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .filter(|&s| s > 0)
        .unwrap_or(60);
    Duration::from_secs(secs)
}

/// A bar over `count` scenarios on `target`, its message the scenario that started last.
pub fn scenarios(target: &str, count: usize) -> ProgressBar {
    let bar = match quiet() {
        true => ProgressBar::hidden(),
        false => ProgressBar::new(count as u64),
    };
    bar.set_length(count as u64);
    bar.set_style(
        ProgressStyle::with_template(&format!(
            "{target:>8} [{{bar:30}}] {{pos}}/{{len}} {{elapsed}} {{wide_msg}}"
        ))
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> "),
    );
    bar.enable_steady_tick(Duration::from_millis(250));
    bar
}

/// Every command's progress on stderr: a spinner while a target starts, a bar per target
/// over its scenarios or tests, a line per item on a target without a bar (client workloads),
/// a line per note and per finding, and the fuzzers' counters on one spinner.
/// Targets that start or run side by side (`run`'s two live targets) each get their own
/// spinner and bar, drawn together ([`MultiProgress`]).
#[derive(Default)]
pub struct Bars {
    multi: MultiProgress,
    spinners: Mutex<HashMap<String, ProgressBar>>,
    bars: Mutex<HashMap<String, ProgressBar>>,
    /// The fuzzers' counter lines, by fuzzer.
    counters: Mutex<Vec<(String, String)>>,
    /// The spinner that shows them, lines printed above it.
    counter_bar: Option<ProgressBar>,
    /// Where stderr is no terminal: when the run began, how long it is to take, and when the
    /// counters were last printed as a line.
    plain: Option<(Instant, Duration, Mutex<Instant>)>,
}

impl Bars {
    /// Counters shown on `bar` (the fuzzers'), over a run of `total`; where stderr is no
    /// terminal, printed as a line every minute instead.
    pub fn with_counters(bar: ProgressBar, total: Duration) -> Bars {
        let now = Instant::now();
        let plain = (!console::Term::stderr().is_term()).then(|| (now, total, Mutex::new(now)));
        Bars {
            counter_bar: Some(bar),
            plain,
            ..Bars::default()
        }
    }

    /// The counters as a plain line, once a minute (no terminal).
    fn plain_line(&self, shown: &str) {
        let Some((began, total, last)) = self.plain.as_ref().filter(|_| !quiet()) else {
            return;
        };
        let Ok(mut last) = last.lock() else { return };
        if last.elapsed() < plain_every() {
            return;
        }
        *last = Instant::now();
        let secs = |d: Duration| indicatif::HumanDuration(Duration::from_secs(d.as_secs()));
        eprintln!(
            "kconform: {} of {}: {shown}",
            secs(began.elapsed()),
            secs(*total)
        );
    }

    fn clear_spinner(&self, target: &str) {
        if let Some(s) = self.spinners.lock().ok().and_then(|mut s| s.remove(target)) {
            s.finish_and_clear();
        }
    }

    fn bar(&self, target: &str) -> Option<ProgressBar> {
        self.bars.lock().ok().and_then(|b| b.get(target).cloned())
    }

    /// Prints a line above the bars (or plainly, with none); nothing under `--quiet`.
    fn line(&self, text: String) {
        if quiet() {
            return;
        }
        match &self.counter_bar {
            Some(bar) => bar.println(text),
            None => self.multi.suspend(|| eprintln!("{text}")),
        }
    }
}

impl kconform::report::progress::Progress for Bars {
    fn note(&self, what: &str) {
        self.line(format!("kconform: {what}"));
    }
    fn starting(&self, target: &str) {
        if let Ok(mut s) = self.spinners.lock() {
            s.insert(target.to_owned(), self.multi.add(starting(target)));
        }
    }
    fn running(&self, target: &str, total: usize) {
        self.clear_spinner(target);
        if let Ok(mut bars) = self.bars.lock() {
            bars.insert(target.to_owned(), self.multi.add(scenarios(target, total)));
        }
    }
    fn done(&self, target: &str, item: &str, how: &str) {
        let Some(bar) = self.bar(target) else {
            return self.line(format!("kconform: {item} on {target}: {how}"));
        };
        bar.inc(1);
        bar.set_message(match how {
            "" => item.to_owned(),
            how => format!("{item}: {how}"),
        });
    }
    fn finished(&self, target: &str) {
        self.clear_spinner(target);
        if let Some(bar) = self.bars.lock().ok().and_then(|mut b| b.remove(target)) {
            bar.finish_and_clear();
        }
    }
    fn counters(&self, source: &str, line: &str) {
        let Ok(mut c) = self.counters.lock() else {
            return;
        };
        match c.iter_mut().find(|(s, _)| s == source) {
            Some((_, l)) => *l = line.to_owned(),
            None => c.push((source.to_owned(), line.to_owned())),
        }
        let shown: Vec<&str> = c.iter().map(|(_, l)| l.as_str()).collect();
        let shown = shown.join("; ");
        self.plain_line(&shown);
        if let Some(bar) = &self.counter_bar {
            bar.set_message(shown);
        }
    }
    fn finding(&self, file: &str, signature: &str) {
        self.line(format!("kconform: FINDING {file}: {signature}"));
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn bars_build_with_their_templates() {
        let b = super::scenarios("apache", 3);
        b.inc(2);
        assert_eq!(b.position(), 2);
        assert_eq!(b.length(), Some(3));
        super::starting("ref").finish_and_clear();
    }

    #[test]
    fn an_item_done_moves_its_targets_bar_and_counters_keep_one_line_per_fuzzer() {
        use kconform::report::progress::Progress;
        let bars = super::Bars::with_counters(
            indicatif::ProgressBar::hidden(),
            std::time::Duration::from_secs(60),
        );
        bars.running("ref", 3);
        bars.done("ref", "s1", "");
        bars.done("ref", "s2", "PASS");
        assert_eq!(bars.bar("ref").map(|b| b.position()), Some(2));
        bars.finished("ref");
        assert!(bars.bar("ref").is_none());
        bars.counters("sequences", "1 sequences");
        bars.counters("frames", "9 frames");
        bars.counters("sequences", "2 sequences");
        let shown = bars.counters.lock().unwrap().clone();
        assert_eq!(
            shown,
            [
                ("sequences".to_owned(), "2 sequences".to_owned()),
                ("frames".to_owned(), "9 frames".to_owned())
            ]
        );
    }
}
