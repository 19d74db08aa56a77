//! Kafka error codes by their Apache names, so transcripts read `48 INVALID_TXN_STATE`.

/// Apache's name for an error code (codes the transaction APIs and their neighbours answer).
pub fn name(code: i16) -> &'static str {
    match code {
        -1 => "UNKNOWN_SERVER_ERROR",
        0 => "NONE",
        1 => "OFFSET_OUT_OF_RANGE",
        2 => "CORRUPT_MESSAGE",
        3 => "UNKNOWN_TOPIC_OR_PARTITION",
        5 => "LEADER_NOT_AVAILABLE",
        6 => "NOT_LEADER_OR_FOLLOWER",
        7 => "REQUEST_TIMED_OUT",
        10 => "MESSAGE_TOO_LARGE",
        12 => "OFFSET_METADATA_TOO_LARGE",
        13 => "NETWORK_EXCEPTION",
        14 => "COORDINATOR_LOAD_IN_PROGRESS",
        15 => "COORDINATOR_NOT_AVAILABLE",
        16 => "NOT_COORDINATOR",
        17 => "INVALID_TOPIC_EXCEPTION",
        19 => "NOT_ENOUGH_REPLICAS",
        20 => "NOT_ENOUGH_REPLICAS_AFTER_APPEND",
        22 => "ILLEGAL_GENERATION",
        24 => "INVALID_GROUP_ID",
        25 => "UNKNOWN_MEMBER_ID",
        27 => "REBALANCE_IN_PROGRESS",
        28 => "INVALID_COMMIT_OFFSET_SIZE",
        29 => "TOPIC_AUTHORIZATION_FAILED",
        30 => "GROUP_AUTHORIZATION_FAILED",
        31 => "CLUSTER_AUTHORIZATION_FAILED",
        35 => "UNSUPPORTED_VERSION",
        36 => "TOPIC_ALREADY_EXISTS",
        37 => "INVALID_PARTITIONS",
        38 => "INVALID_REPLICATION_FACTOR",
        40 => "INVALID_CONFIG",
        42 => "INVALID_REQUEST",
        43 => "UNSUPPORTED_FOR_MESSAGE_FORMAT",
        45 => "OUT_OF_ORDER_SEQUENCE_NUMBER",
        46 => "DUPLICATE_SEQUENCE_NUMBER",
        47 => "INVALID_PRODUCER_EPOCH",
        48 => "INVALID_TXN_STATE",
        49 => "INVALID_PRODUCER_ID_MAPPING",
        50 => "INVALID_TRANSACTION_TIMEOUT",
        51 => "CONCURRENT_TRANSACTIONS",
        52 => "TRANSACTION_COORDINATOR_FENCED",
        53 => "TRANSACTIONAL_ID_AUTHORIZATION_FAILED",
        55 => "OPERATION_NOT_ATTEMPTED",
        56 => "KAFKA_STORAGE_ERROR",
        59 => "UNKNOWN_PRODUCER_ID",
        68 => "NON_EMPTY_GROUP",
        69 => "GROUP_ID_NOT_FOUND",
        79 => "MEMBER_ID_REQUIRED",
        82 => "FENCED_INSTANCE_ID",
        87 => "INVALID_RECORD",
        88 => "UNSTABLE_OFFSET_COMMIT",
        90 => "PRODUCER_FENCED",
        100 => "UNKNOWN_TOPIC_ID",
        _ => "UNKNOWN_CODE",
    }
}

/// Apache's name for an API key, for the keys scenarios send.
pub fn api_name(key: i16) -> String {
    use kafka_protocol::messages::ApiKey;
    match ApiKey::try_from(key) {
        Ok(k) => format!("{k:?}"),
        Err(_) => format!("api{key}"),
    }
}

/// `48 INVALID_TXN_STATE`.
pub fn label(code: i16) -> String {
    format!("{code} {}", name(code))
}

/// Whether an answer carrying `code` can change if the same request is sent again: Apache
/// 3.7's retriable errors (its `RetriableException` subclasses: metadata not yet propagated,
/// a coordinator loading or moving, a transaction still completing, an unstable offset) and
/// REBALANCE_IN_PROGRESS, which a group member waits out by rejoining. An `until` that meets
/// any other error gives up at once: waiting cannot change it.
pub fn retriable(code: i16) -> bool {
    matches!(
        code,
        2 | 3
            | 5
            | 6
            | 7
            | 9
            | 13
            | 14
            | 15
            | 16
            | 19
            | 20
            | 27
            | 41
            | 51
            | 56
            | 70
            | 71
            | 72
            | 74
            | 75
            | 78
            | 80
            | 88
            | 89
            | 100
            | 103
            | 106
    )
}
