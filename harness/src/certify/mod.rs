//! `kconform certify`: every judge that applies to one broker, in one run, held to one
//! baseline, written as one certificate. A kaas team gates a pull request on it: the
//! scenarios (of one broker, and of a cluster for a cluster), the client workloads, chaos
//! under faults and a bounded live-wire fuzz, each judge's findings keyed the same way
//! ([`crate::report::gate`]), so that CI fails only on what is new in any judge.
//!
//! [`plan`] decides what applies and divides a time budget; [`judged`] turns each judge's
//! report into its part; [`certificate`] ranks and renders the whole; [`html`] is its page;
//! [`matrix`] certifies every broker of a brokers file side by side and publishes them.

pub mod certificate;
pub mod html;
pub mod judged;
pub mod matrix;
pub mod plan;

pub use certificate::{Certificate, Verdict};
pub use judged::Judged;

#[cfg(test)]
mod tests;
