//! Apache Kafka's verdict on a frame of the six transaction APIs, in process.
//!
//! This is the part of kconform a kaas engineer adds to their own cargo-fuzz targets, so that
//! the decoders they fuzz are judged against Apache rather than only watched for crashes:
//! - [`schema`]: Apache's own message definitions (the JSON kafka-clients 3.7.2 ships, and
//!   4.4.0's for the versions after), embedded unchanged;
//! - [`read`]: a reader that accepts exactly what Apache's generated parsers accept and reads
//!   the same values (kconform's differential test holds it against Apache's parser), and
//!   [`by_schema`], the same messages written and read as value trees;
//! - [`seeds`], [`mutate`] and [`shape`]: valid request frames of every version, drawn from
//!   pools of ordinary and edge values, their structure-aware and byte-wise mutations, and
//!   what a frame is;
//! - [`check`]: the check of a decoder the user gives (a panic, an allocation past a bound,
//!   accepting what Apache refuses or refusing what it accepts, values that differ), with
//!   [`alloc::Watch`], the allocator that sees the allocations.
//!
//! kconform's live-wire fuzzer is built on the same modules. It pulls no runtime, no client and
//! no broker.

pub mod alloc;
pub mod by_schema;
pub mod check;
pub mod hex;
pub mod java_utf8;
pub mod mutate;
pub mod read;
mod rng;
pub mod schema;
pub mod seeds;
pub mod shape;
pub mod skeleton;
pub mod text;

pub use rng::Rng;

/// The API keys a [`check::Case`] names (`case.api`), re-exported so that the `decode` a
/// decoder crate fills in matches on them with no dependency of its own on kafka-protocol.
pub use kafka_protocol::messages::ApiKey;
/// The JSON values a decoder gives as [`check::Decoded::Values`] (`serde_json::json!`),
/// re-exported so that its crate needs no serde_json of its own: the manifest `kconform fuzz
/// init-decoders` writes builds as it is.
pub use serde_json::{self, Value};

/// Apache's name for an API key (`EndTxn`), `api{key}` for a key Apache does not define.
pub fn api_name(key: i16) -> String {
    use kafka_protocol::messages::ApiKey;
    match ApiKey::try_from(key) {
        Ok(k) => format!("{k:?}"),
        Err(_) => format!("api{key}"),
    }
}
