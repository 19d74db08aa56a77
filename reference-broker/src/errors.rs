//! Kafka error codes the broker answers, named as Apache names them.

/// An error code as the transaction coordinator answers it: a type of its own, so that a code
/// is never taken for an epoch (both are i16 on the wire, and `Result<(i64, i16), i16>` said
/// neither which was which). Handlers put `.code()` on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ErrorCode(pub i16);

impl ErrorCode {
    /// No error.
    pub const NONE: ErrorCode = ErrorCode(NONE);

    /// The wire value.
    pub fn code(self) -> i16 {
        self.0
    }
}

/// Declares each code the broker answers as an `i16` constant (usable in `match` patterns,
/// which kafka-protocol's non-const `ResponseError::code()` is not) and lists them in [`ALL`],
/// so a test can hold every name to kafka-protocol's table, the one table of Apache's error
/// codes both crates name codes from.
macro_rules! error_codes {
    ($($(#[$doc:meta])* $name:ident = $code:expr;)*) => {
        $(
            $(#[$doc])*
            #[allow(missing_docs)]
            pub const $name: i16 = $code;
        )*
        /// Every code above with its name, for the test that checks them against Apache's.
        pub const ALL: &[(&str, i16)] = &[$((stringify!($name), $name)),*];
    };
}

error_codes! {
    UNKNOWN_SERVER_ERROR = -1;
    NONE = 0;
    OFFSET_OUT_OF_RANGE = 1;
    CORRUPT_MESSAGE = 2;
    UNKNOWN_TOPIC_OR_PARTITION = 3;
    LEADER_NOT_AVAILABLE = 5;
    NOT_LEADER_OR_FOLLOWER = 6;
    MESSAGE_TOO_LARGE = 10;
    OFFSET_METADATA_TOO_LARGE = 12;
    COORDINATOR_LOAD_IN_PROGRESS = 14;
    COORDINATOR_NOT_AVAILABLE = 15;
    NOT_COORDINATOR = 16;
    INVALID_TOPIC_EXCEPTION = 17;
    INVALID_REQUIRED_ACKS = 21;
    ILLEGAL_GENERATION = 22;
    INCONSISTENT_GROUP_PROTOCOL = 23;
    INVALID_GROUP_ID = 24;
    UNKNOWN_MEMBER_ID = 25;
    INVALID_SESSION_TIMEOUT = 26;
    REBALANCE_IN_PROGRESS = 27;
    TOPIC_AUTHORIZATION_FAILED = 29;
    GROUP_AUTHORIZATION_FAILED = 30;
    CLUSTER_AUTHORIZATION_FAILED = 31;
    UNSUPPORTED_VERSION = 35;
    TOPIC_ALREADY_EXISTS = 36;
    INVALID_PARTITIONS = 37;
    INVALID_REPLICATION_FACTOR = 38;
    INVALID_CONFIG = 40;
    INVALID_REQUEST = 42;
    POLICY_VIOLATION = 44;
    OUT_OF_ORDER_SEQUENCE_NUMBER = 45;
    INVALID_PRODUCER_EPOCH = 47;
    /// TRANSACTION_COORDINATOR_FENCED: a marker from an older coordinator epoch.
    TRANSACTION_COORDINATOR_FENCED = 52;
    INVALID_TXN_STATE = 48;
    INVALID_PRODUCER_ID_MAPPING = 49;
    INVALID_TRANSACTION_TIMEOUT = 50;
    CONCURRENT_TRANSACTIONS = 51;
    TRANSACTIONAL_ID_AUTHORIZATION_FAILED = 53;
    OPERATION_NOT_ATTEMPTED = 55;
    KAFKA_STORAGE_ERROR = 56;
    NON_EMPTY_GROUP = 68;
    GROUP_ID_NOT_FOUND = 69;
    FETCH_SESSION_ID_NOT_FOUND = 70;
    MEMBER_ID_REQUIRED = 79;
    GROUP_MAX_SIZE_REACHED = 81;
    /// FENCED_INSTANCE_ID: a static member's instance id now belongs to a newer member id.
    FENCED_INSTANCE_ID = 82;
    INVALID_RECORD = 87;
    UNSTABLE_OFFSET_COMMIT = 88;
    PRODUCER_FENCED = 90;
    UNKNOWN_TOPIC_ID = 100;
}

#[cfg(test)]
mod tests {
    /// Apache's name for `code`, from kafka-protocol's table (its variants are the names in
    /// CamelCase).
    fn apache_name(code: i16) -> String {
        match kafka_protocol::ResponseError::try_from_code(code) {
            None => "NONE".to_owned(),
            Some(known) => {
                let mut out = String::new();
                for (i, c) in format!("{known:?}").chars().enumerate() {
                    if c.is_ascii_uppercase() && i > 0 {
                        out.push('_');
                    }
                    out.push(c.to_ascii_uppercase());
                }
                out
            }
        }
    }

    #[test]
    fn every_code_carries_apaches_name() {
        for (name, code) in super::ALL {
            assert_eq!(*name, apache_name(*code), "error code {code}");
        }
        assert!(
            super::ALL.len() > 40,
            "the table lists every code the broker answers"
        );
    }
}
