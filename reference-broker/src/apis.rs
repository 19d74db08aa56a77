//! The APIs kaas-ref serves and their versions: what ApiVersions answers and what dispatch
//! checks every request against. The six transaction APIs' rows are the codec's
//! ([`crate::codec::TRANSACTION_APIS`], each written once beside its codec); the others' are
//! here.

use kafka_protocol::messages::ApiKey;

use crate::codec;

/// (API, lowest, highest version) of every API served but the six transaction APIs: Apache
/// 3.7's ranges.
const OTHERS: &[(ApiKey, i16, i16)] = &[
    (ApiKey::Produce, 0, 10),
    (ApiKey::Fetch, 0, 16),
    (ApiKey::ListOffsets, 0, 8),
    (ApiKey::Metadata, 0, 12),
    (ApiKey::OffsetCommit, 0, 9),
    (ApiKey::OffsetFetch, 0, 9),
    (ApiKey::FindCoordinator, 0, 4),
    (ApiKey::JoinGroup, 0, 9),
    (ApiKey::Heartbeat, 0, 4),
    (ApiKey::LeaveGroup, 0, 5),
    (ApiKey::SyncGroup, 0, 5),
    (ApiKey::DescribeGroups, 0, 5),
    (ApiKey::ListGroups, 0, 4),
    (ApiKey::DeleteGroups, 0, 2),
    (ApiKey::ApiVersions, 0, 3),
    (ApiKey::CreateTopics, 0, 7),
    (ApiKey::DeleteTopics, 0, 6),
    (ApiKey::SaslHandshake, 0, 1),
    (ApiKey::SaslAuthenticate, 0, 2),
    (ApiKey::DescribeAcls, 0, 3),
    (ApiKey::CreateAcls, 0, 3),
    (ApiKey::DeleteAcls, 0, 3),
    (ApiKey::DescribeConfigs, 0, 4),
];

/// kafka-protocol's name for one of the six transaction APIs.
pub fn kafka_key(api: codec::ApiKey) -> ApiKey {
    match api {
        codec::ApiKey::InitProducerId => ApiKey::InitProducerId,
        codec::ApiKey::AddPartitionsToTxn => ApiKey::AddPartitionsToTxn,
        codec::ApiKey::AddOffsetsToTxn => ApiKey::AddOffsetsToTxn,
        codec::ApiKey::EndTxn => ApiKey::EndTxn,
        codec::ApiKey::WriteTxnMarkers => ApiKey::WriteTxnMarkers,
        codec::ApiKey::TxnOffsetCommit => ApiKey::TxnOffsetCommit,
    }
}

/// (API, lowest, highest version) of every API served, as ApiVersions advertises them:
/// Apache 3.7's ranges, except AddPartitionsToTxn, which kaas serves to v3 only (Apache: v4,
/// the broker-to-broker form).
pub fn served_apis() -> impl Iterator<Item = (ApiKey, i16, i16)> {
    let transactions = codec::TRANSACTION_APIS
        .iter()
        .map(|s| (kafka_key(s.api), s.versions.0, s.versions.1));
    OTHERS.iter().copied().chain(transactions)
}

/// The (lowest, highest) version served of `api`, if it is served.
pub fn served(api: ApiKey) -> Option<(i16, i16)> {
    served_apis()
        .find(|(a, _, _)| *a == api)
        .map(|(_, min, max)| (min, max))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_api_is_served_once_and_the_transaction_apis_under_their_own_keys() {
        let mut keys: Vec<i16> = served_apis().map(|(a, _, _)| a as i16).collect();
        let n = keys.len();
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), n, "an API served twice");
        for api in codec::ApiKey::ALL {
            assert_eq!(kafka_key(api) as i16, api.key());
            assert_eq!(served(kafka_key(api)), Some(api.versions()));
        }
        assert_eq!(served(ApiKey::AddPartitionsToTxn), Some((0, 3)));
        assert_eq!(served(ApiKey::AlterConfigs), None);
    }
}
