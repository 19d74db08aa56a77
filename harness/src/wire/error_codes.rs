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

/// `48 INVALID_TXN_STATE`: how a normalised answer shows an error code.
pub fn label(code: i16) -> String {
    format!("{code} {}", name(code))
}

/// The code a [`label`] shows (`48 INVALID_TXN_STATE` → 48), for answers read back from a
/// rendering (a snapshot of Apache's answers holds labels, not numbers); `None` for text no
/// label has.
pub fn code_of_label(label: &str) -> Option<i16> {
    let (code, name) = label.split_once(' ')?;
    code.parse().ok().filter(|c| self::name(*c) == name)
}

/// Whether an answer carrying `code` can change if the same request is sent again: the codes
/// kafka-protocol's table (generated from Apache's `Errors`) marks retriable — metadata not yet
/// propagated, a coordinator loading or moving, an unstable offset — and two that clients wait
/// out although Apache's exception classes are not retriable: CONCURRENT_TRANSACTIONS (51; the
/// producer retries while the previous transaction completes) and REBALANCE_IN_PROGRESS (27; a
/// group member rejoins). An `until` that meets any other error gives up at once: waiting
/// cannot change it.
pub fn retriable(code: i16) -> bool {
    const CLIENTS_WAIT_OUT: [i16; 2] = [27, 51];
    CLIENTS_WAIT_OUT.contains(&code)
        || kafka_protocol::ResponseError::try_from_code(code).is_some_and(|e| e.is_retriable())
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

    #[test]
    fn a_label_reads_back_as_its_code() {
        for code in -1..=120 {
            assert_eq!(code_of_label(&label(code)), Some(code));
        }
        for text in ["48", "48 PRODUCER_FENCED", "x INVALID_TXN_STATE", ""] {
            assert_eq!(code_of_label(text), None, "{text:?}");
        }
    }

    #[test]
    fn waiting_helps_only_where_it_can() {
        for code in [3, 14, 15, 16, 27, 51, 56, 88] {
            assert!(retriable(code), "{code} {}", name(code));
        }
        for code in [-1, 0, 47, 48, 49, 50, 53, 90, 9999] {
            assert!(!retriable(code), "{code} {}", name(code));
        }
    }
}
