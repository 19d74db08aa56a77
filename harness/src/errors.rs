//! Kafka error codes by their Apache names, so transcripts read `48 INVALID_TXN_STATE`, and
//! which of them retrying can change.

/// Apache's name for an error code (`INVALID_TXN_STATE`), from the one table of error codes the
/// harness has: kafka-protocol's, which is generated from Apache's `Errors`. 0 is NONE; a code
/// no Apache version defines is UNKNOWN_CODE.
pub fn name(code: i16) -> String {
    use kafka_protocol::ResponseError;
    match ResponseError::try_from_code(code) {
        None => "NONE".to_owned(),
        Some(ResponseError::Unknown(_)) => "UNKNOWN_CODE".to_owned(),
        // Its variants are Apache's names in CamelCase: InvalidTxnState → INVALID_TXN_STATE.
        Some(known) => {
            let camel = format!("{known:?}");
            let mut out = String::new();
            for (i, c) in camel.chars().enumerate() {
                if c.is_ascii_uppercase() && i > 0 {
                    out.push('_');
                }
                out.push(c.to_ascii_uppercase());
            }
            out
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_read_as_apache_names_them() {
        for (code, name) in [
            (-1, "UNKNOWN_SERVER_ERROR"),
            (0, "NONE"),
            (3, "UNKNOWN_TOPIC_OR_PARTITION"),
            (6, "NOT_LEADER_OR_FOLLOWER"),
            (48, "INVALID_TXN_STATE"),
            (50, "INVALID_TRANSACTION_TIMEOUT"),
            (53, "TRANSACTIONAL_ID_AUTHORIZATION_FAILED"),
            (88, "UNSTABLE_OFFSET_COMMIT"),
            (90, "PRODUCER_FENCED"),
            (99, "POSITION_OUT_OF_RANGE"),
            (9999, "UNKNOWN_CODE"),
        ] {
            assert_eq!(super::name(code), name, "{code}");
        }
        assert_eq!(label(48), "48 INVALID_TXN_STATE");
    }
}
