//! Kafka error codes by their Apache names, so transcripts read `48 INVALID_TXN_STATE`, and
//! which of them retrying can change.

/// Apache's name for an error code (`INVALID_TXN_STATE`), from the one table of error codes the
/// harness has: kafka-protocol's, which is generated from Apache's `Errors`. 0 is NONE; a code
/// no Apache version defines is UNKNOWN_CODE.
pub fn name(code: i16) -> String {
    use kafka_protocol::ResponseError;
    match ResponseError::try_from_code(code) {
        None => "NONE".to_owned(),
        Some(ResponseError::Unknown(code)) => NEWER_THAN_THE_CRATE
            .iter()
            .find(|(c, _)| *c == code)
            .map_or("UNKNOWN_CODE", |(_, name)| name)
            .to_owned(),
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

/// The codes Apache defines past kafka-protocol 0.15's table (which ends at 106), by Apache
/// Kafka 4.4.0's `Errors` (3.7.2's ends at 119, INVALID_REGISTRATION; 120,
/// TRANSACTION_ABORTABLE, came with 3.8): printed from the cached kafka-clients jar with
/// `Errors.values()`, code and name.
const NEWER_THAN_THE_CRATE: &[(i16, &str)] = &[
    (107, "INELIGIBLE_REPLICA"),
    (108, "NEW_LEADER_ELECTED"),
    (109, "OFFSET_MOVED_TO_TIERED_STORAGE"),
    (110, "FENCED_MEMBER_EPOCH"),
    (111, "UNRELEASED_INSTANCE_ID"),
    (112, "UNSUPPORTED_ASSIGNOR"),
    (113, "STALE_MEMBER_EPOCH"),
    (114, "MISMATCHED_ENDPOINT_TYPE"),
    (115, "UNSUPPORTED_ENDPOINT_TYPE"),
    (116, "UNKNOWN_CONTROLLER_ID"),
    (117, "UNKNOWN_SUBSCRIPTION_ID"),
    (118, "TELEMETRY_TOO_LARGE"),
    (119, "INVALID_REGISTRATION"),
    (120, "TRANSACTION_ABORTABLE"),
    (121, "INVALID_RECORD_STATE"),
    (122, "SHARE_SESSION_NOT_FOUND"),
    (123, "INVALID_SHARE_SESSION_EPOCH"),
    (124, "FENCED_STATE_EPOCH"),
    (125, "INVALID_VOTER_KEY"),
    (126, "DUPLICATE_VOTER"),
    (127, "VOTER_NOT_FOUND"),
    (128, "INVALID_REGULAR_EXPRESSION"),
    (129, "REBOOTSTRAP_REQUIRED"),
    (130, "STREAMS_INVALID_TOPOLOGY"),
    (131, "STREAMS_INVALID_TOPOLOGY_EPOCH"),
    (132, "STREAMS_TOPOLOGY_FENCED"),
    (133, "SHARE_SESSION_LIMIT_REACHED"),
    (134, "GROUP_DELETION_FAILED"),
    (135, "STREAMS_TOPOLOGY_DESCRIPTION_UPDATE_FAILED"),
    (136, "CONTROLLER_ID_NOT_REGISTERED"),
];

/// Apache's name for an API key, for the keys scenarios send.
pub use kconform_wire::api_name;

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
    fn codes_past_the_crates_table_read_as_apache_names_them() {
        assert_eq!(name(107), "INELIGIBLE_REPLICA");
        assert_eq!(name(120), "TRANSACTION_ABORTABLE");
        assert_eq!(name(136), "CONTROLLER_ID_NOT_REGISTERED");
        assert_eq!(name(137), "UNKNOWN_CODE");
        // The table only fills the crate's gap, in order, with no code twice.
        for pair in NEWER_THAN_THE_CRATE.windows(2) {
            assert_eq!(pair[0].0 + 1, pair[1].0);
        }
        for (code, _) in NEWER_THAN_THE_CRATE {
            assert!(matches!(
                kafka_protocol::ResponseError::try_from_code(*code),
                Some(kafka_protocol::ResponseError::Unknown(_))
            ));
        }
    }

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
