//! The APIs a scenario can send, once: each one's Apache name, key, the highest version Apache
//! 3.7 serves (what `version = "all"` sweeps; read from Apache's own message schema, vendored in
//! `harness/schema/`), and the highest version a step that names none is built at.

pub mod coverage;
pub mod request;
pub mod response;

use kafka_protocol::messages::ApiKey;

/// One API kconform can send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Api {
    /// Apache's name (`EndTxn`).
    pub name: &'static str,
    /// Its key.
    pub key: ApiKey,
    /// A version below Apache's highest that steps without `version` stop at, where the
    /// newer versions take a shape scenarios do not describe.
    cap: Option<i16>,
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

const fn api(name: &'static str, key: ApiKey) -> Api {
    Api {
        name,
        key,
        cap: None,
    }
}

const fn capped(name: &'static str, key: ApiKey, cap: i16) -> Api {
    Api {
        name,
        key,
        cap: Some(cap),
    }
}

/// Every API, the six transaction APIs first, in key order.
pub const APIS: [Api; 23] = [
    api("InitProducerId", ApiKey::InitProducerId),
    // v4 is the broker-only batched form, which scenarios do not describe.
    capped("AddPartitionsToTxn", ApiKey::AddPartitionsToTxn, 3),
    api("AddOffsetsToTxn", ApiKey::AddOffsetsToTxn),
    api("EndTxn", ApiKey::EndTxn),
    api("WriteTxnMarkers", ApiKey::WriteTxnMarkers),
    api("TxnOffsetCommit", ApiKey::TxnOffsetCommit),
    api("CreateTopics", ApiKey::CreateTopics),
    api("FindCoordinator", ApiKey::FindCoordinator),
    api("Metadata", ApiKey::Metadata),
    api("Produce", ApiKey::Produce),
    // Fetch 13 and later name topics by id, which scenarios do not carry.
    capped("Fetch", ApiKey::Fetch, 12),
    api("ListOffsets", ApiKey::ListOffsets),
    // OffsetFetch 8 and later batch groups; scenarios name one group, so the plain shape.
    capped("OffsetFetch", ApiKey::OffsetFetch, 7),
    api("JoinGroup", ApiKey::JoinGroup),
    api("SyncGroup", ApiKey::SyncGroup),
    api("Heartbeat", ApiKey::Heartbeat),
    api("LeaveGroup", ApiKey::LeaveGroup),
    api("OffsetCommit", ApiKey::OffsetCommit),
    api("DeleteGroups", ApiKey::DeleteGroups),
    api("ApiVersions", ApiKey::ApiVersions),
    api("SaslHandshake", ApiKey::SaslHandshake),
    api("SaslAuthenticate", ApiKey::SaslAuthenticate),
    api("DescribeAcls", ApiKey::DescribeAcls),
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
            assert!(a.apache_max() > 0, "{}: no Apache schema", a.name);
            assert!(a.default_max() <= a.apache_max(), "{}", a.name);
            assert!(APIS[..i].iter().all(|b| b.key != a.key), "{} twice", a.name);
        }
        assert_eq!(TRANSACTION_APIS[3], "EndTxn");
        assert_eq!(by_name("Fetch").map(|a| a.default_max()), Some(12));
        assert_eq!(by_name("Fetch").map(|a| a.apache_max()), Some(16));
        assert_eq!(by_name("Metadata").map(|a| a.default_max()), Some(12));
    }
}
