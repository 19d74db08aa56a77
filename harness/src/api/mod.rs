//! The APIs a scenario can send, each in a file of its own (`end_txn.rs`...): its Apache name,
//! key, the highest version a step that names none is built at, the codes it can return, how
//! a step's fields become its request and how its answer becomes the tree transcripts record.
//! [`APIS`] gathers them; the highest version Apache 3.7 serves (what `version = "all"`
//! sweeps) is read from Apache's own message schema, vendored in `kconform-wire/schema/`.

pub mod coverage;
#[macro_use]
pub mod request;
pub mod response;

mod add_offsets_to_txn;
mod add_partitions_to_txn;
mod api_versions;
mod consumer_group_heartbeat;
mod create_topics;
mod delete_groups;
mod describe_acls;
mod end_txn;
mod fetch;
mod find_coordinator;
mod heartbeat;
mod init_producer_id;
mod join_group;
mod leave_group;
mod list_offsets;
mod metadata;
mod offset_commit;
mod offset_fetch;
mod produce;
mod sasl_authenticate;
mod sasl_handshake;
mod sync_group;
mod txn_offset_commit;
mod write_txn_markers;

use kafka_protocol::messages::{ApiKey, RequestKind, ResponseKind};
use serde_json::Value;

use request::Fields;

/// One API kconform can send.
#[derive(Debug, Clone, Copy)]
pub struct Api {
    /// Apache's name (`EndTxn`).
    pub name: &'static str,
    /// Its key.
    pub key: ApiKey,
    /// A version below Apache's highest that steps without `version` stop at, where the
    /// newer versions take a shape scenarios do not describe.
    cap: Option<i16>,
    /// The codes it can return (the six transaction APIs'; empty for the others): Apache
    /// 3.7's (its handlers, coordinators and version rewrites, as
    /// `../shared/research/apache-3.7-txn.md` lists them) and kaas's own (wire 50 for an invalid
    /// transition, 15 while its store is not wired).
    pub codes: &'static [i16],
    /// The request at a version from a step's fields (read through [`Fields`], which notes each
    /// field read).
    build: fn(i16, &Fields<'_>) -> Result<RequestKind, String>,
    /// How its answer becomes the tree transcripts record (and, for the six transaction
    /// APIs, how a request past kafka-protocol's versions is written).
    read: Reading,
}

/// How an API's answer becomes the tree a transcript records.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Reading {
    /// From kafka-protocol's message, when the answer is this API's.
    Typed(fn(&ResponseKind, i16) -> Option<Value>),
    /// The values Apache's definitions read ([`crate::wire::by_schema`]), at every version
    /// any vendored release defines: the six transaction APIs, whose versions moved after 3.7.
    /// Their requests are written by the same definitions where kafka-protocol does not
    /// generate the version.
    Definitions {
        /// Fields transcripts name otherwise than Apache (`results_by_partition` as
        /// `results`), as they have since 3.7.
        renamed: &'static [(&'static str, &'static str)],
        /// A step's defaults where they are not Apache's (EndTxn `committed`: true), by path
        /// (`markers[].transaction_result`): the typed builder's, so that a step reads the
        /// same at every version.
        defaults: &'static [(&'static str, &'static str)],
    },
}

impl Api {
    /// The highest version Apache 3.7 serves: its response schema's `validVersions`.
    pub fn apache_max(&self) -> i16 {
        crate::wire::schema::response(self.name).map_or(0, |m| m.valid.highest())
    }

    /// The highest version a step without `version` is built at (the lower of this and the
    /// target's highest is sent).
    pub fn default_max(&self) -> i16 {
        self.cap.unwrap_or_else(|| self.apache_max())
    }
}

/// Every API, the six transaction APIs first, in key order.
pub const APIS: [Api; 24] = [
    init_producer_id::API,
    add_partitions_to_txn::API,
    add_offsets_to_txn::API,
    end_txn::API,
    write_txn_markers::API,
    txn_offset_commit::API,
    create_topics::API,
    find_coordinator::API,
    metadata::API,
    produce::API,
    fetch::API,
    list_offsets::API,
    offset_fetch::API,
    join_group::API,
    sync_group::API,
    heartbeat::API,
    leave_group::API,
    consumer_group_heartbeat::API,
    offset_commit::API,
    delete_groups::API,
    api_versions::API,
    sasl_handshake::API,
    sasl_authenticate::API,
    describe_acls::API,
];

/// The six transaction APIs' names, in key order.
pub const TRANSACTION_APIS: [&str; 6] = [
    APIS[0].name,
    APIS[1].name,
    APIS[2].name,
    APIS[3].name,
    APIS[4].name,
    APIS[5].name,
];

/// The six transaction APIs' keys, in key order.
pub const TRANSACTION_KEYS: [ApiKey; 6] = [
    APIS[0].key,
    APIS[1].key,
    APIS[2].key,
    APIS[3].key,
    APIS[4].key,
    APIS[5].key,
];

/// The API of an Apache name.
pub fn by_name(name: &str) -> Option<&'static Api> {
    APIS.iter().find(|a| a.name == name)
}

/// The API of a key, if kconform sends it.
pub fn by_key(key: ApiKey) -> Option<&'static Api> {
    APIS.iter().find(|a| a.key == key)
}

/// Every name, comma-separated (for a refusal that lists them).
pub fn names() -> String {
    APIS.iter().map(|a| a.name).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_api_once_named_as_its_key_and_within_apache() {
        for (i, a) in APIS.iter().enumerate() {
            assert_eq!(format!("{:?}", a.key), a.name);
            assert!(
                crate::wire::schema::response(a.name).is_some(),
                "{}: no Apache schema",
                a.name
            );
            assert!(a.default_max() <= a.apache_max(), "{}", a.name);
            assert!(APIS[..i].iter().all(|b| b.key != a.key), "{} twice", a.name);
        }
        assert_eq!(TRANSACTION_APIS[3], "EndTxn");
        assert_eq!(by_name("Fetch").map(|a| a.default_max()), Some(12));
        assert_eq!(by_name("Fetch").map(|a| a.apache_max()), Some(16));
        assert_eq!(by_name("Metadata").map(|a| a.default_max()), Some(12));
    }
}
