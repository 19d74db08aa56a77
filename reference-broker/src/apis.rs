//! The APIs kaas-ref serves and their versions: the one table that ApiVersions answers from
//! and dispatch checks every request against.

use kafka_protocol::messages::ApiKey;

/// (API, lowest, highest version) advertised in ApiVersions: Apache 3.7's ranges for every API
/// served, except AddPartitionsToTxn, which kaas serves to v3 only (Apache: v4, the
/// broker-to-broker form).
pub const SERVED: &[(ApiKey, i16, i16)] = &[
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
    (ApiKey::InitProducerId, 0, 4),
    (ApiKey::AddPartitionsToTxn, 0, 3),
    (ApiKey::AddOffsetsToTxn, 0, 3),
    (ApiKey::EndTxn, 0, 3),
    (ApiKey::WriteTxnMarkers, 0, 1),
    (ApiKey::TxnOffsetCommit, 0, 3),
    (ApiKey::SaslHandshake, 0, 1),
    (ApiKey::SaslAuthenticate, 0, 2),
    (ApiKey::DescribeAcls, 0, 3),
    (ApiKey::CreateAcls, 0, 3),
    (ApiKey::DeleteAcls, 0, 3),
];

/// The (lowest, highest) version served of `api`, if it is served.
pub fn served(api: ApiKey) -> Option<(i16, i16)> {
    SERVED
        .iter()
        .find(|(a, _, _)| *a == api)
        .map(|&(_, min, max)| (min, max))
}
