//! The one error type every codec function returns.

use super::ApiKey;

/// Why a message could not be decoded or encoded.
///
/// Every variant names the field it concerns (a path such as
/// `TxnOffsetCommitRequest.topics[].partitions[].committed_metadata`), so that a broker log line
/// or a fuzz report says where the bytes went wrong without a debugger.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CodecError {
    /// The API exists but this codec does not serve the requested version.
    #[error("{api:?} does not support version {version} (supported: {min} to {max})")]
    UnsupportedVersion {
        /// The API that was asked for.
        api: ApiKey,
        /// The version that was asked for.
        version: i16,
        /// Lowest supported version.
        min: i16,
        /// Highest supported version.
        max: i16,
    },
    /// The API key is not one of the six transaction APIs.
    #[error("api key {0} is not a transaction API this codec knows")]
    UnknownApiKey(i16),
    /// The input ended inside a field.
    #[error("{field}: needs {needed} more bytes, {remaining} left")]
    Truncated {
        /// Field being read.
        field: &'static str,
        /// Bytes the field needs.
        needed: usize,
        /// Bytes left in the input.
        remaining: usize,
    },
    /// A length prefix is negative (other than the -1 of null) or otherwise impossible.
    #[error("{field}: invalid length {length}")]
    InvalidLength {
        /// Field being read.
        field: &'static str,
        /// The length as read from the wire.
        length: i64,
    },
    /// A string is longer than the 32767 bytes Apache's generated readers and writers allow.
    #[error("{field}: string of {length} bytes is longer than 32767")]
    StringTooLong {
        /// Field being read or written.
        field: &'static str,
        /// Its length in bytes.
        length: usize,
    },
    /// An array claims more elements than the bytes left could hold. Checked before any
    /// allocation, so a hostile count cannot make the decoder reserve memory.
    #[error("{field}: {count} elements claimed, but {remaining} bytes left cannot hold them")]
    CountExceedsInput {
        /// Field being read.
        field: &'static str,
        /// Element count read from the wire.
        count: u64,
        /// Bytes left in the input.
        remaining: usize,
    },
    /// A null where the field is not nullable at this version.
    #[error("{field}: null, but the field is not nullable")]
    UnexpectedNull {
        /// Field being read.
        field: &'static str,
    },
    /// An unsigned varint whose fifth byte still has the continuation bit set.
    #[error("{field}: varint longer than 5 bytes")]
    VarintTooLong {
        /// Field being read.
        field: &'static str,
    },
    /// Bytes remain after a complete message.
    #[error("{count} bytes left over after the message")]
    TrailingBytes {
        /// How many bytes were left.
        count: usize,
    },
    /// A field holds a non-default value at a version that cannot carry it (Apache's writers
    /// refuse this too, except for fields the schema marks ignorable).
    #[error("{field} is set, but version {version} cannot carry it")]
    FieldNotInVersion {
        /// The field.
        field: &'static str,
        /// The version being written.
        version: i16,
    },
    /// An array or tagged field too large for its length prefix.
    #[error("{field}: too large to encode")]
    TooLargeToEncode {
        /// The field.
        field: &'static str,
    },
}

/// Shorthand used throughout the codec.
pub type Result<T> = std::result::Result<T, CodecError>;
