//! The APIs a scenario can send, once: each one's Apache name, key, the highest version Apache
//! 3.7 serves (what `version = "all"` sweeps), and the highest version a step that names none
//! is built at.

use kafka_protocol::messages::ApiKey;

/// One API kconform can send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Api {
    /// Apache's name (`EndTxn`).
    pub name: &'static str,
    /// Its key.
    pub key: ApiKey,
    /// The highest version Apache 3.7 serves.
    pub apache_max: i16,
    /// The highest version a step without `version` is built at (the lower of this and the
    /// target's highest is sent).
    pub default_max: i16,
}

const fn api(name: &'static str, key: ApiKey, apache_max: i16, default_max: i16) -> Api {
    Api {
        name,
        key,
        apache_max,
        default_max,
    }
}

/// Every API, the six transaction APIs first, in key order.
pub const APIS: [Api; 20] = [
    api("InitProducerId", ApiKey::InitProducerId, 4, 4),
    // v4 is the broker-only batched form, which scenarios do not describe.
    api("AddPartitionsToTxn", ApiKey::AddPartitionsToTxn, 4, 3),
    api("AddOffsetsToTxn", ApiKey::AddOffsetsToTxn, 3, 3),
    api("EndTxn", ApiKey::EndTxn, 3, 3),
    api("WriteTxnMarkers", ApiKey::WriteTxnMarkers, 1, 1),
    api("TxnOffsetCommit", ApiKey::TxnOffsetCommit, 3, 3),
    api("CreateTopics", ApiKey::CreateTopics, 7, 7),
    api("FindCoordinator", ApiKey::FindCoordinator, 4, 4),
    api("Metadata", ApiKey::Metadata, 12, 12),
    api("Produce", ApiKey::Produce, 10, 10),
    // Fetch 13 and later name topics by id, which scenarios do not carry.
    api("Fetch", ApiKey::Fetch, 16, 12),
    api("ListOffsets", ApiKey::ListOffsets, 8, 8),
    // OffsetFetch 8 and later batch groups; scenarios name one group, so the plain shape.
    api("OffsetFetch", ApiKey::OffsetFetch, 9, 7),
    api("JoinGroup", ApiKey::JoinGroup, 9, 9),
    api("SyncGroup", ApiKey::SyncGroup, 5, 5),
    api("Heartbeat", ApiKey::Heartbeat, 4, 4),
    api("LeaveGroup", ApiKey::LeaveGroup, 5, 5),
    api("OffsetCommit", ApiKey::OffsetCommit, 9, 9),
    api("DeleteGroups", ApiKey::DeleteGroups, 2, 2),
    api("ApiVersions", ApiKey::ApiVersions, 3, 3),
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
            assert!(a.default_max <= a.apache_max, "{}", a.name);
            assert!(APIS[..i].iter().all(|b| b.key != a.key), "{} twice", a.name);
        }
        assert_eq!(TRANSACTION_APIS[3], "EndTxn");
        assert_eq!(by_name("Fetch").map(|a| a.default_max), Some(12));
    }
}
