//! kaas-ref: the reference kaas broker.
//!
//! It answers exactly as Apache Kafka 3.7 answers, except where the kaas documentation
//! (the transaction-API spec) documents a deviation; there it implements the deviation. It is
//! the executable form of those docs, which the kconform harness diffs against a live Apache.
#![warn(missing_docs)]

pub mod acl;
pub mod alloc;
pub mod apis;
pub mod auth;
pub mod broker;
pub mod child;
pub mod cluster;
pub mod codec;
pub mod config;
pub mod dispatch;
pub mod errors;
pub mod freeze;
pub mod groups;
pub mod handlers;
pub mod hash;
pub mod health;
pub mod kaas_env;
#[cfg(feature = "kube")]
pub mod kube_membership;
pub mod limits;
pub mod local_cluster;
pub mod lock_order;
pub mod peer_files;
pub mod planted;
pub mod ports;
pub mod sasl;
pub mod server;
pub mod state;
pub mod storage;
pub mod txn;
pub mod watchers;

pub use broker::{Broker, BrokerHandle, StartError};
pub use config::{BrokerConfig, Security};
