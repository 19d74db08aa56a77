//! What a long command tells whoever shows its progress as it goes: a session's scenarios, a
//! peer's suite, client workloads, the fuzzers' counters. One trait for all of them, so that
//! the binary draws every command's progress one way and a test or a library user passes
//! [`Quiet`]. Every method has a default that shows nothing: a caller implements what it
//! draws.

/// Told what a command is doing, as it does it.
pub trait Progress: Send + Sync {
    /// A slow step is starting that belongs to no target (building a suite or a runner, or
    /// starting a broker whose progress is shown line by line).
    fn note(&self, _what: &str) {}
    /// `target` is starting (Apache takes seconds).
    fn starting(&self, _target: &str) {}
    /// `target` is up; `total` items (scenarios, tests) will run on it.
    fn running(&self, _target: &str, _total: usize) {}
    /// One item (a scenario, a test, a workload) ended on `target`; `how` says how it went
    /// (empty when there is nothing to say).
    fn done(&self, _target: &str, _item: &str, _how: &str) {}
    /// Every item ended on `target`.
    fn finished(&self, _target: &str) {}
    /// A counter line of `source` (one fuzzer) changed: "120 sequences (6.4/s), ...".
    fn counters(&self, _source: &str, _line: &str) {}
    /// A finding was written to `file`, under `signature`.
    fn finding(&self, _file: &str, _signature: &str) {}
}

/// Progress nobody watches.
#[derive(Debug, Default, Clone, Copy)]
pub struct Quiet;

impl Progress for Quiet {}
