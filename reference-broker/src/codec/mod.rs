//! The reference broker's own codecs for the six Kafka transaction APIs.
//!
//! Bytes in, typed messages out, and back; no I/O. The harness speaks through the
//! `kafka-protocol` crate instead, so the two implementations check each other; the
//! `differential` module (feature `oracles`, built for tests, benches and fuzzers only) holds that
//! comparison.
//!
//! Field lists and defaults follow Apache Kafka 3.7's message schemas. The versions served are
//! the ones the kaas documentation gives: InitProducerId v0–4, AddPartitionsToTxn v0–3 (Apache
//! also serves v4, the broker-only batched form; kaas does not), AddOffsetsToTxn v0–3, EndTxn
//! v0–3, WriteTxnMarkers v0–1 and TxnOffsetCommit v0–3.
//!
//! Decoding is as lenient as Apache's generated readers (see [`wire::Leniency`]) and as strict
//! (string lengths, varint lengths, counts against the bytes left). A message decodes only when
//! every byte is consumed; the broker's frame layer decides what to do with trailing bytes.

pub mod add_offsets_to_txn;
pub mod add_partitions_to_txn;
#[cfg(feature = "oracles")]
pub mod differential;
pub mod end_txn;
mod error;
pub mod header;
pub mod init_producer_id;
#[cfg(feature = "oracles")]
pub mod samples;
mod tagged;
pub mod txn_offset_commit;
pub mod wire;
pub mod write_txn_markers;

pub use add_offsets_to_txn::{AddOffsetsToTxnRequest, AddOffsetsToTxnResponse};
pub use add_partitions_to_txn::{AddPartitionsToTxnRequest, AddPartitionsToTxnResponse};
/// The string type of every message field: short strings stay inline, with no allocation.
pub use compact_str::CompactString;
pub use end_txn::{EndTxnRequest, EndTxnResponse};
pub use error::{CodecError, Result};
pub use header::{RequestHeader, ResponseHeader};
pub use init_producer_id::{InitProducerIdRequest, InitProducerIdResponse};
pub use tagged::TaggedFields;
pub use txn_offset_commit::{TxnOffsetCommitRequest, TxnOffsetCommitResponse};
pub use wire::{Leniency, Reader, Writer};
pub use write_txn_markers::{WriteTxnMarkersRequest, WriteTxnMarkersResponse};

/// The six transaction APIs, by their Kafka API key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ApiKey {
    /// 22: allocates (producer id, epoch).
    InitProducerId,
    /// 24: adds partitions to the open transaction.
    AddPartitionsToTxn,
    /// 25: adds a consumer group's offsets to the transaction.
    AddOffsetsToTxn,
    /// 26: commits or aborts.
    EndTxn,
    /// 27: coordinator to partition leader: write COMMIT/ABORT control batches.
    WriteTxnMarkers,
    /// 28: stages consumer offsets inside the transaction.
    TxnOffsetCommit,
}

/// One transaction API as kaas-ref serves it: the one place its key, name, versions served and
/// first flexible version are written, in the API's own codec file (`end_txn::SPEC`...). The
/// codec's version checks, the header versions and the broker's ApiVersions answer
/// (`crate::apis`) are all read from [`TRANSACTION_APIS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ApiSpec {
    /// The API.
    pub api: ApiKey,
    /// Its key on the wire.
    pub key: i16,
    /// The name Apache gives it.
    pub name: &'static str,
    /// Lowest and highest version served.
    pub versions: (i16, i16),
    /// The first flexible version (compact strings and arrays, tagged fields).
    pub first_flexible: i16,
}

/// The six transaction APIs, in [`ApiKey`]'s order (which is key order).
pub const TRANSACTION_APIS: [ApiSpec; 6] = [
    init_producer_id::SPEC,
    add_partitions_to_txn::SPEC,
    add_offsets_to_txn::SPEC,
    end_txn::SPEC,
    write_txn_markers::SPEC,
    txn_offset_commit::SPEC,
];

impl ApiKey {
    /// All six, in key order.
    pub const ALL: [ApiKey; 6] = [
        ApiKey::InitProducerId,
        ApiKey::AddPartitionsToTxn,
        ApiKey::AddOffsetsToTxn,
        ApiKey::EndTxn,
        ApiKey::WriteTxnMarkers,
        ApiKey::TxnOffsetCommit,
    ];

    /// This API's row of [`TRANSACTION_APIS`] (a test holds the rows to the variants' order).
    pub const fn spec(self) -> &'static ApiSpec {
        &TRANSACTION_APIS[self as usize]
    }

    /// The key on the wire.
    pub fn key(self) -> i16 {
        self.spec().key
    }

    /// The API with this wire key, if it is one of the six.
    pub fn from_key(key: i16) -> Result<ApiKey> {
        TRANSACTION_APIS
            .iter()
            .find(|s| s.key == key)
            .map(|s| s.api)
            .ok_or(CodecError::UnknownApiKey(key))
    }

    /// Lowest and highest version served.
    pub fn versions(self) -> (i16, i16) {
        self.spec().versions
    }

    /// First flexible version (compact strings and arrays, tagged fields).
    pub fn first_flexible_version(self) -> i16 {
        self.spec().first_flexible
    }

    /// Fails with [`CodecError::UnsupportedVersion`] outside [`ApiKey::versions`].
    pub fn check_version(self, version: i16) -> Result<()> {
        let (min, max) = self.versions();
        match (min..=max).contains(&version) {
            true => Ok(()),
            false => Err(CodecError::UnsupportedVersion {
                api: self,
                version,
                min,
                max,
            }),
        }
    }

    /// Whether `version` uses the flexible encoding.
    pub fn is_flexible(self, version: i16) -> bool {
        version >= self.first_flexible_version()
    }

    /// Request header version for this API version: 2 when flexible, else 1.
    pub fn request_header_version(self, version: i16) -> i16 {
        match self.is_flexible(version) {
            true => 2,
            false => 1,
        }
    }

    /// Response header version for this API version: 1 when flexible, else 0.
    pub fn response_header_version(self, version: i16) -> i16 {
        match self.is_flexible(version) {
            true => 1,
            false => 0,
        }
    }

    /// The name Apache gives the API.
    pub fn name(self) -> &'static str {
        self.spec().name
    }
}

/// Whether bytes are a request or a response body.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// Client to broker.
    Request,
    /// Broker to client.
    Response,
}

/// A message decoded from bytes, with what was accepted in non-canonical form.
#[derive(Debug, Clone, PartialEq)]
pub struct Decoded<T> {
    /// The message.
    pub message: T,
    /// Non-canonical forms accepted while reading; when canonical, encoding the message at the
    /// same version gives back exactly the input bytes.
    pub leniency: Leniency,
}

/// One request or response body of a transaction API: read from and written to bytes at a
/// given version.
pub trait Message: Sized {
    /// Which API this message belongs to.
    const API: ApiKey;
    /// Request or response.
    const DIRECTION: Direction;

    /// Reads the body; the version is already checked.
    fn read(r: &mut Reader<'_>, version: i16) -> Result<Self>;
    /// Writes the body; the version is already checked.
    fn write(&self, w: &mut Writer) -> Result<()>;

    /// Decodes a whole body at `version`, reporting non-canonical input.
    fn decode_checked(version: i16, bytes: &[u8]) -> Result<Decoded<Self>> {
        match Self::decode_prefix(version, bytes)? {
            (decoded, 0) => Ok(decoded),
            (_, count) => Err(CodecError::TrailingBytes { count }),
        }
    }

    /// Decodes a body at the start of `bytes`; also returns how many bytes follow it (Apache's
    /// brokers ignore such bytes after a request).
    fn decode_prefix(version: i16, bytes: &[u8]) -> Result<(Decoded<Self>, usize)> {
        Self::API.check_version(version)?;
        let mut r = Reader::new(bytes, Self::API.is_flexible(version));
        let message = Self::read(&mut r, version)?;
        Ok((
            Decoded {
                message,
                leniency: r.leniency(),
            },
            r.remaining(),
        ))
    }

    /// Decodes a whole body at `version`.
    fn decode(version: i16, bytes: &[u8]) -> Result<Self> {
        Self::decode_checked(version, bytes).map(|d| d.message)
    }

    /// Encodes the body at `version`.
    fn encode(&self, version: i16) -> Result<Vec<u8>> {
        Self::API.check_version(version)?;
        let mut w = Writer::new(version, Self::API.is_flexible(version));
        self.write(&mut w)?;
        Ok(w.into_bytes())
    }
}

/// Any of the six request bodies.
#[derive(Debug, Clone, PartialEq)]
#[allow(missing_docs)]
pub enum Request {
    InitProducerId(InitProducerIdRequest),
    AddPartitionsToTxn(AddPartitionsToTxnRequest),
    AddOffsetsToTxn(AddOffsetsToTxnRequest),
    EndTxn(EndTxnRequest),
    WriteTxnMarkers(WriteTxnMarkersRequest),
    TxnOffsetCommit(TxnOffsetCommitRequest),
}

/// Any of the six response bodies.
#[derive(Debug, Clone, PartialEq)]
#[allow(missing_docs)]
pub enum Response {
    InitProducerId(InitProducerIdResponse),
    AddPartitionsToTxn(AddPartitionsToTxnResponse),
    AddOffsetsToTxn(AddOffsetsToTxnResponse),
    EndTxn(EndTxnResponse),
    WriteTxnMarkers(WriteTxnMarkersResponse),
    TxnOffsetCommit(TxnOffsetCommitResponse),
}

impl Request {
    /// Decodes a request body of `api` at `version`.
    pub fn decode(api: ApiKey, version: i16, bytes: &[u8]) -> Result<Request> {
        Ok(match api {
            ApiKey::InitProducerId => Request::InitProducerId(Message::decode(version, bytes)?),
            ApiKey::AddPartitionsToTxn => {
                Request::AddPartitionsToTxn(Message::decode(version, bytes)?)
            }
            ApiKey::AddOffsetsToTxn => Request::AddOffsetsToTxn(Message::decode(version, bytes)?),
            ApiKey::EndTxn => Request::EndTxn(Message::decode(version, bytes)?),
            ApiKey::WriteTxnMarkers => Request::WriteTxnMarkers(Message::decode(version, bytes)?),
            ApiKey::TxnOffsetCommit => Request::TxnOffsetCommit(Message::decode(version, bytes)?),
        })
    }

    /// The API this request belongs to.
    pub fn api(&self) -> ApiKey {
        match self {
            Request::InitProducerId(_) => ApiKey::InitProducerId,
            Request::AddPartitionsToTxn(_) => ApiKey::AddPartitionsToTxn,
            Request::AddOffsetsToTxn(_) => ApiKey::AddOffsetsToTxn,
            Request::EndTxn(_) => ApiKey::EndTxn,
            Request::WriteTxnMarkers(_) => ApiKey::WriteTxnMarkers,
            Request::TxnOffsetCommit(_) => ApiKey::TxnOffsetCommit,
        }
    }

    /// Encodes the body at `version`.
    pub fn encode(&self, version: i16) -> Result<Vec<u8>> {
        match self {
            Request::InitProducerId(m) => m.encode(version),
            Request::AddPartitionsToTxn(m) => m.encode(version),
            Request::AddOffsetsToTxn(m) => m.encode(version),
            Request::EndTxn(m) => m.encode(version),
            Request::WriteTxnMarkers(m) => m.encode(version),
            Request::TxnOffsetCommit(m) => m.encode(version),
        }
    }
}

impl Response {
    /// Decodes a response body of `api` at `version` from the start of `bytes`, and says how
    /// many bytes follow it: Apache's clients ignore them (`AbstractResponse.parseResponse`
    /// reads the message and leaves the rest), as its brokers ignore them after a request.
    pub fn decode_prefix(api: ApiKey, version: i16, bytes: &[u8]) -> Result<(Response, usize)> {
        fn wrap<T: Message>(
            version: i16,
            bytes: &[u8],
            f: fn(T) -> Response,
        ) -> Result<(Response, usize)> {
            T::decode_prefix(version, bytes).map(|(d, rest)| (f(d.message), rest))
        }
        match api {
            ApiKey::InitProducerId => wrap(version, bytes, Response::InitProducerId),
            ApiKey::AddPartitionsToTxn => wrap(version, bytes, Response::AddPartitionsToTxn),
            ApiKey::AddOffsetsToTxn => wrap(version, bytes, Response::AddOffsetsToTxn),
            ApiKey::EndTxn => wrap(version, bytes, Response::EndTxn),
            ApiKey::WriteTxnMarkers => wrap(version, bytes, Response::WriteTxnMarkers),
            ApiKey::TxnOffsetCommit => wrap(version, bytes, Response::TxnOffsetCommit),
        }
    }

    /// Decodes a response body of `api` at `version`.
    pub fn decode(api: ApiKey, version: i16, bytes: &[u8]) -> Result<Response> {
        Ok(match api {
            ApiKey::InitProducerId => Response::InitProducerId(Message::decode(version, bytes)?),
            ApiKey::AddPartitionsToTxn => {
                Response::AddPartitionsToTxn(Message::decode(version, bytes)?)
            }
            ApiKey::AddOffsetsToTxn => Response::AddOffsetsToTxn(Message::decode(version, bytes)?),
            ApiKey::EndTxn => Response::EndTxn(Message::decode(version, bytes)?),
            ApiKey::WriteTxnMarkers => Response::WriteTxnMarkers(Message::decode(version, bytes)?),
            ApiKey::TxnOffsetCommit => Response::TxnOffsetCommit(Message::decode(version, bytes)?),
        })
    }

    /// The API this response belongs to.
    pub fn api(&self) -> ApiKey {
        match self {
            Response::InitProducerId(_) => ApiKey::InitProducerId,
            Response::AddPartitionsToTxn(_) => ApiKey::AddPartitionsToTxn,
            Response::AddOffsetsToTxn(_) => ApiKey::AddOffsetsToTxn,
            Response::EndTxn(_) => ApiKey::EndTxn,
            Response::WriteTxnMarkers(_) => ApiKey::WriteTxnMarkers,
            Response::TxnOffsetCommit(_) => ApiKey::TxnOffsetCommit,
        }
    }

    /// Encodes the body at `version`.
    pub fn encode(&self, version: i16) -> Result<Vec<u8>> {
        match self {
            Response::InitProducerId(m) => m.encode(version),
            Response::AddPartitionsToTxn(m) => m.encode(version),
            Response::AddOffsetsToTxn(m) => m.encode(version),
            Response::EndTxn(m) => m.encode(version),
            Response::WriteTxnMarkers(m) => m.encode(version),
            Response::TxnOffsetCommit(m) => m.encode(version),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each row of the table is its variant's, in order, and says what its codec file's first
    /// line says (`//! EndTxn (key 26), v0–3, flexible from v3.`): nothing else writes them.
    #[test]
    fn the_table_is_the_variants_and_matches_each_codec_files_header() {
        let headers = [
            include_str!("init_producer_id.rs"),
            include_str!("add_partitions_to_txn.rs"),
            include_str!("add_offsets_to_txn.rs"),
            include_str!("end_txn.rs"),
            include_str!("write_txn_markers.rs"),
            include_str!("txn_offset_commit.rs"),
        ];
        for ((api, spec), file) in ApiKey::ALL.iter().zip(TRANSACTION_APIS).zip(headers) {
            assert_eq!(spec.api, *api);
            assert_eq!(api.spec(), &spec);
            let said = format!(
                "//! {} (key {}), v{}–{}, flexible from v{}.",
                spec.name, spec.key, spec.versions.0, spec.versions.1, spec.first_flexible
            );
            let first = file.lines().next().unwrap_or_default();
            assert!(
                first.starts_with(&said),
                "{first:?} does not start {said:?}"
            );
        }
        let keys: Vec<i16> = TRANSACTION_APIS.iter().map(|s| s.key).collect();
        assert_eq!(keys, [22, 24, 25, 26, 27, 28]);
    }
}
