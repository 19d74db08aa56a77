//! kconform: a conformance harness for the Kafka transaction APIs.
//!
//! The surface a program driving kconform needs is re-exported here: load [`Scenario`]s, run
//! them on targets ([`TargetSpec`]) through a [`Session`] (telling a [`Progress`], or
//! [`Quiet`]), and read the [`Report`] (root causes, a [`Baseline`] to gate on) and the
//! [`Transcript`]s; the [`Ledger`] is what differences are classified against.
//!
//! The pipeline, one folder a stage: [`scenario`] files are run ([`run`]) on brokers
//! ([`targets`]), each run recorded as a [`transcript`]; transcripts are compared ([`compare`]:
//! normalised, diffed, classified against the ledger of documented deviations, grouped into
//! root causes) and reported ([`report`]). Beside it, the judges that are not scenarios: real
//! clients ([`clients`], with an exactly-once workload under broker faults in
//! [`clients::chaos`]), a peer's test suite ([`peers`]) and the fuzzers ([`fuzz`]). On top,
//! [`certify`] runs every judge that applies to one broker and holds them all to one baseline.
//!
//! kconform's own parts — the wire (`wire`: client, frames, schemas, SASL, record batches,
//! error codes), what it knows of each API (`api`), the files built in (`data`), the users
//! secured targets share (`security`) and answer mutations behind a proxy (`mutation`) — are
//! public for its binary and tests, and hidden from this documentation: they are not a
//! surface to build on.
#![warn(missing_docs)]

pub use compare::ledger::{Ledger, Verdict};
pub use data::Source;
pub use report::baseline::Baseline;
pub use report::progress::{Progress, Quiet};
pub use report::Report;
pub use run::session::Session;
pub use scenario::Scenario;
pub use targets::{Running, TargetSpec};
pub use transcript::Transcript;

pub mod certify;
pub mod clients;
pub mod compare;
pub mod fuzz;
pub mod peers;
pub mod report;
pub mod run;
pub mod scenario;
pub mod targets;
pub mod transcript;

#[doc(hidden)]
pub mod api;
#[doc(hidden)]
pub mod data;
#[doc(hidden)]
pub mod mutation;
#[doc(hidden)]
pub mod release;
#[doc(hidden)]
pub mod security;
#[doc(hidden)]
pub mod wire;
