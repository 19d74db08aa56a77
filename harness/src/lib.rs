//! kconform: a conformance harness for the Kafka transaction APIs.
//!
//! The pipeline, one folder a stage: [`scenario`] files are run ([`run`]) on brokers
//! ([`targets`]), each run recorded as a [`transcript`]; transcripts are compared ([`compare`]:
//! normalised, diffed, classified against the ledger of documented deviations) and reported
//! ([`report`]). Beside it: the wire ([`wire`]: client, frames, schemas, SASL, record batches,
//! error codes), what kconform knows of each API ([`api`]), the files built in ([`data`]), the
//! users secured targets share ([`security`]), and the judges that are not scenarios: real
//! clients ([`clients`]), a peer's test suite ([`peers`]), the fuzzers ([`fuzz`]) and answer
//! mutations behind a proxy ([`mutation`]).
#![warn(missing_docs)]

pub mod api;
pub mod clients;
pub mod compare;
pub mod data;
pub mod fuzz;
pub mod mutation;
pub mod peers;
pub mod report;
pub mod run;
pub mod scenario;
pub mod security;
pub mod targets;
pub mod transcript;
pub mod wire;
