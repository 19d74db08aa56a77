//! kconform: a conformance harness for the Kafka transaction APIs.
//!
//! It drives brokers ([`target`]) through identical request sequences ([`scenario`]) over a
//! raw wire client ([`client`]) built on the kafka-protocol crate, records what each answers
//! ([`runner`]), and normalises the answers ([`normalise`]) so transcripts of different brokers
//! compare field by field.
#![warn(missing_docs)]

pub mod acls;
pub mod apache;
pub mod apis;
pub mod brokers;
pub mod client;
pub mod clients;
pub mod coverage;
pub mod data;
pub mod diff;
pub mod errors;
pub mod frame;
pub mod fuzz;
pub mod ledger;
pub mod mutation;
pub mod normalise;
pub mod peers;
pub mod recorded;
pub mod records;
pub mod report;
pub mod request;
pub mod response;
pub mod runner;
pub mod sasl;
pub mod scenario;
pub mod schema;
pub mod security;
pub mod session;
pub mod target;
pub mod topics;
pub mod transcript;
