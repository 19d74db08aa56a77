//! Progress on stderr while brokers start and scenarios run: a spinner for a broker that takes
//! seconds to start (Apache), a bar per target for the scenarios, a line per client workload,
//! the fuzzers' counters. The library tells what happens through its `Progress` traits; this
//! draws it. Bars hide themselves when stderr is not a terminal, so CI logs stay clean.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

/// A spinner shown while `target` starts.
pub fn starting(target: &str) -> ProgressBar {
    let bar = ProgressBar::new_spinner().with_message(format!("starting {target}"));
    bar.set_style(
        ProgressStyle::with_template("{spinner} {msg} ({elapsed})")
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    bar.enable_steady_tick(Duration::from_millis(120));
    bar
}

/// A bar over `count` scenarios on `target`, its message the scenario that started last.
pub fn scenarios(target: &str, count: usize) -> ProgressBar {
    let bar = ProgressBar::new(count as u64);
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

/// Progress of a session on stderr: a spinner while a target starts, a bar per target.
#[derive(Default)]
pub struct SessionBars {
    spinner: Mutex<Option<ProgressBar>>,
    bars: Mutex<HashMap<String, ProgressBar>>,
}

impl kconform::run::session::Progress for SessionBars {
    fn starting(&self, target: &str) {
        if let Ok(mut s) = self.spinner.lock() {
            *s = Some(starting(target));
        }
    }
    fn running(&self, target: &str, total: usize) {
        if let Some(s) = self.spinner.lock().ok().and_then(|mut s| s.take()) {
            s.finish_and_clear();
        }
        if let Ok(mut bars) = self.bars.lock() {
            bars.insert(target.to_owned(), scenarios(target, total));
        }
    }
    fn scenario_done(&self, target: &str, scenario: &str) {
        if let Some(bar) = self.bars.lock().ok().and_then(|b| b.get(target).cloned()) {
            bar.inc(1);
            bar.set_message(scenario.to_owned());
        }
    }
    fn finished(&self, target: &str) {
        if let Some(s) = self.spinner.lock().ok().and_then(|mut s| s.take()) {
            s.finish_and_clear();
        }
        if let Some(bar) = self.bars.lock().ok().and_then(|mut b| b.remove(target)) {
            bar.finish_and_clear();
        }
    }
}

/// Progress of `peers`: a line for each slow step, a bar per target.
#[derive(Default)]
pub struct PeerBars {
    bars: Mutex<HashMap<String, ProgressBar>>,
}

impl kconform::peers::Progress for PeerBars {
    fn note(&self, what: &str) {
        eprintln!("kconform: {what}");
    }
    fn start(&self, target: &str, total: usize) {
        let bar = scenarios(target, total);
        if let Ok(mut bars) = self.bars.lock() {
            bars.insert(target.to_owned(), bar);
        }
    }
    fn done(&self, target: &str, test: &str, outcome: kconform::peers::suite::Outcome) {
        if let Some(bar) = self.bars.lock().ok().and_then(|b| b.get(target).cloned()) {
            bar.inc(1);
            bar.set_message(format!("{test}: {outcome:?}"));
        }
    }
    fn finish(&self, target: &str) {
        if let Some(bar) = self.bars.lock().ok().and_then(|mut b| b.remove(target)) {
            bar.finish_and_clear();
        }
    }
}

/// Progress of `kconform clients` on stderr, a line per workload run.
pub struct ClientLines;

impl kconform::clients::Progress for ClientLines {
    fn note(&self, what: &str) {
        eprintln!("kconform: {what}");
    }
    fn done(
        &self,
        target: &str,
        client: kconform::clients::Client,
        workload: &str,
        error: Option<&str>,
    ) {
        let how = match error {
            None => "ran".to_owned(),
            Some(e) => format!(
                "gave no transcript: {}",
                e.lines().next().unwrap_or_default()
            ),
        };
        eprintln!("kconform: {} {workload} on {target}: {how}", client.name());
    }
}

/// Progress of `kconform fuzz`: a spinner with both fuzzers' counters, a line per finding.
pub struct FuzzLine {
    bar: ProgressBar,
    last: Mutex<(
        Option<kconform::fuzz::Stats>,
        Option<kconform::fuzz::wire::FrameStats>,
    )>,
}

impl FuzzLine {
    /// Counters shown on `bar`.
    pub fn new(bar: ProgressBar) -> FuzzLine {
        FuzzLine {
            bar,
            last: Default::default(),
        }
    }

    fn show(&self) {
        let Ok(last) = self.last.lock() else { return };
        let mut parts = Vec::new();
        let mut findings = 0;
        if let Some(s) = &last.0 {
            let per = |n: u64| n as f64 / s.secs.max(0.001);
            parts.push(format!(
                "{} sequences ({:.1}/s), {} requests ({:.0}/s)",
                s.sequences,
                per(s.sequences),
                s.requests,
                per(s.requests)
            ));
            findings += s.findings;
        }
        if let Some(f) = &last.1 {
            parts.push(format!(
                "{} frames ({:.0}/s)",
                f.frames,
                f.frames as f64 / f.secs.max(0.001)
            ));
            findings += f.findings;
        }
        parts.push(format!("{findings} findings"));
        self.bar.set_message(parts.join(", "));
    }
}

impl kconform::fuzz::Progress for FuzzLine {
    fn update(&self, s: &kconform::fuzz::Stats) {
        if let Ok(mut last) = self.last.lock() {
            last.0 = Some(s.clone());
        }
        self.show();
    }
    fn finding(&self, f: &kconform::fuzz::report::Finding) {
        self.bar
            .println(format!("kconform: FINDING {}: {}", f.file, f.signature));
    }
    fn frames(&self, s: &kconform::fuzz::wire::FrameStats) {
        if let Ok(mut last) = self.last.lock() {
            last.1 = Some(s.clone());
        }
        self.show();
    }
    fn frame_finding(&self, f: &kconform::fuzz::wire::FrameFinding) {
        self.bar
            .println(format!("kconform: FINDING {}: {}", f.file, f.signature));
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
}
