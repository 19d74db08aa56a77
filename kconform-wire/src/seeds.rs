//! The valid request frames the live-wire fuzzer starts from: a request of one of the six
//! transaction APIs at one version, its fields drawn from pools of ordinary and edge values
//! (empty, long and non-ASCII names; -1, 0, the largest and smallest integers), written with
//! its request header by Apache's definitions alone ([`crate::by_schema`]), at every version
//! any Apache release kconform knows defines. Every field a version has is set, so each version
//! is exercised in full; the mutations ([`crate::mutate`]) start from these bytes.

use kafka_protocol::messages::ApiKey;
use serde_json::{Map, Value};

use crate::{api_name, by_schema, schema, Rng};

/// The six transaction APIs, the ones whose frames are fuzzed, in key order.
pub const APIS: [ApiKey; 6] = [
    ApiKey::InitProducerId,
    ApiKey::AddPartitionsToTxn,
    ApiKey::AddOffsetsToTxn,
    ApiKey::EndTxn,
    ApiKey::WriteTxnMarkers,
    ApiKey::TxnOffsetCommit,
];

/// A well-formed request frame (without its 4-byte size) and where its body starts.
#[derive(Debug, Clone)]
pub struct Seed {
    /// The API.
    pub api: ApiKey,
    /// The version, as the header says and the body is encoded.
    pub version: i16,
    /// Header and body.
    pub frame: Vec<u8>,
}

/// Names: ordinary, empty, one byte, long enough for a two-byte compact length (127 bytes and
/// more), non-ASCII, path-like, and the internal topics.
fn name(rng: &mut Rng) -> String {
    match rng.below(10) {
        0 => String::new(),
        1 => "a".into(),
        2 => "g".repeat(130),
        3 => "t".repeat(300),
        4 => "kaas-é-ü-名".into(),
        5 => "../with space".into(),
        6 => "__consumer_offsets".into(),
        7 => "__transaction_state".into(),
        _ => format!("kconform-wire-{}", rng.below(50)),
    }
}

fn int(rng: &mut Rng, min: i64, max: i64) -> i64 {
    match rng.below(8) {
        0 => min,
        1 => max,
        2 => -1,
        3 => 0,
        4 => 1,
        5 => -2,
        _ => rng.below(100) as i64,
    }
}

fn i16v(rng: &mut Rng) -> Value {
    Value::from(int(rng, i16::MIN.into(), i16::MAX.into()))
}

fn i32v(rng: &mut Rng) -> Value {
    Value::from(int(rng, i32::MIN.into(), i32::MAX.into()))
}

fn i64v(rng: &mut Rng) -> Value {
    Value::from(int(rng, i64::MIN, i64::MAX))
}

fn string(rng: &mut Rng) -> Value {
    Value::String(name(rng))
}

/// Up to three of `make`.
fn some<F: FnMut(&mut Rng) -> Value>(rng: &mut Rng, mut make: F) -> Value {
    let n = rng.below(4);
    Value::Array((0..n).map(|_| make(rng)).collect())
}

fn table(pairs: Vec<(&str, Value)>) -> Value {
    Value::Object(pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
}

/// The fields of a request of `api` at `version` by Apache's names (as [`by_schema::encode`]
/// writes them), drawn from `rng`.
pub fn fields(api: ApiKey, version: i16, rng: &mut Rng) -> Map<String, Value> {
    let mut t = Map::new();
    let mut set = |k: &str, v: Value| {
        t.insert(k.to_owned(), v);
    };
    let topics_with = |rng: &mut Rng, key: &str| {
        some(rng, |rng| {
            table(vec![("name", string(rng)), (key, some(rng, i32v))])
        })
    };
    match api {
        ApiKey::InitProducerId => {
            if !rng.one_in(4) {
                set("transactional_id", string(rng));
            }
            set("transaction_timeout_ms", i32v(rng));
            if version >= 3 {
                set("producer_id", i64v(rng));
                set("producer_epoch", i16v(rng));
            }
        }
        // v4, the brokers' batched form, carries transactions; v0-3 one, by other names.
        ApiKey::AddPartitionsToTxn if version >= 4 => {
            let transactions = some(rng, |rng| {
                table(vec![
                    ("transactional_id", string(rng)),
                    ("producer_id", i64v(rng)),
                    ("producer_epoch", i16v(rng)),
                    ("verify_only", Value::Bool(rng.one_in(2))),
                    ("topics", topics_with(rng, "partitions")),
                ])
            });
            set("transactions", transactions);
        }
        ApiKey::AddPartitionsToTxn => {
            set("v3_and_below_transactional_id", string(rng));
            set("v3_and_below_producer_id", i64v(rng));
            set("v3_and_below_producer_epoch", i16v(rng));
            set("v3_and_below_topics", topics_with(rng, "partitions"));
        }
        ApiKey::AddOffsetsToTxn => {
            set("transactional_id", string(rng));
            set("producer_id", i64v(rng));
            set("producer_epoch", i16v(rng));
            set("group_id", string(rng));
        }
        ApiKey::EndTxn => {
            set("transactional_id", string(rng));
            set("producer_id", i64v(rng));
            set("producer_epoch", i16v(rng));
            set("committed", Value::Bool(rng.one_in(2)));
        }
        ApiKey::WriteTxnMarkers => {
            let markers = some(rng, |rng| {
                let mut marker = vec![
                    ("producer_id", i64v(rng)),
                    ("producer_epoch", i16v(rng)),
                    ("transaction_result", Value::Bool(rng.one_in(2))),
                    ("coordinator_epoch", i32v(rng)),
                    ("topics", topics_with(rng, "partition_indexes")),
                ];
                if version >= 2 {
                    let tv = int(rng, i8::MIN.into(), i8::MAX.into());
                    marker.push(("transaction_version", Value::from(tv)));
                }
                table(marker)
            });
            set("markers", markers);
        }
        _ => {
            set("transactional_id", string(rng));
            set("group_id", string(rng));
            set("producer_id", i64v(rng));
            set("producer_epoch", i16v(rng));
            if version >= 3 {
                set("generation_id", i32v(rng));
                set("member_id", string(rng));
                if !rng.one_in(2) {
                    set("group_instance_id", string(rng));
                }
            }
            let topics = some(rng, |rng| {
                let partitions = some(rng, |rng| {
                    let mut p = vec![
                        ("partition_index", i32v(rng)),
                        ("committed_offset", i64v(rng)),
                    ];
                    if version >= 2 {
                        p.push(("committed_leader_epoch", i32v(rng)));
                    }
                    if !rng.one_in(3) {
                        p.push(("committed_metadata", string(rng)));
                    }
                    table(p)
                });
                table(vec![("name", string(rng)), ("partitions", partitions)])
            });
            set("topics", topics);
        }
    }
    t
}

/// A well-formed frame of `api` at `version` with fields drawn from `rng`, and
/// `correlation` in its header, written by Apache's definitions; `None` for a version no
/// Apache release kconform knows defines.
pub fn draw(api: ApiKey, version: i16, correlation: i32, rng: &mut Rng) -> Option<Seed> {
    let message = schema::request_at(&api_name(api as i16), version)?;
    message.valid.contains(version).then_some(())?;
    let body = by_schema::encode(
        message,
        version,
        &Value::Object(fields(api, version, rng)),
        &[],
    );
    let mut frame = header(api, version, correlation, CLIENT_ID);
    frame.extend(body.ok()?);
    Some(Seed {
        api,
        version,
        frame,
    })
}

/// The client id of every drawn frame.
pub const CLIENT_ID: &str = "kconform-wire";

/// A request header as Apache writes it: key, version, correlation id, the client id (an
/// int16 length, in every header version), and from header v2 an empty tagged-field section.
pub fn header(api: ApiKey, version: i16, correlation: i32, client_id: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(12 + client_id.len());
    out.extend((api as i16).to_be_bytes());
    out.extend(version.to_be_bytes());
    out.extend(correlation.to_be_bytes());
    let id = &client_id.as_bytes()[..client_id.len().min(i16::MAX as usize)];
    out.extend((id.len() as i16).to_be_bytes());
    out.extend(id);
    if api.request_header_version(version) >= 2 {
        out.push(0);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shape;

    /// Every API at every version an Apache release kconform knows serves (3.7's, and 4.4's
    /// past them) gives frames that are well-formed by Apache's own schema, and the pools
    /// reach the edges (a 130-byte name, a null id).
    #[test]
    fn every_version_draws_well_formed_frames() {
        let mut rng = Rng::new(7);
        let mut long_names = 0;
        for api in APIS {
            let top = shape::highest_version(api);
            for version in 0..=top {
                for i in 0..40 {
                    let seed = draw(api, version, i, &mut rng)
                        .unwrap_or_else(|| panic!("{api:?} v{version} draws"));
                    let parsed = shape::parse(&seed.frame)
                        .unwrap_or_else(|e| panic!("{api:?} v{version}: {e}: {:02x?}", seed.frame));
                    assert_eq!((parsed.api, parsed.version), (api, version));
                    long_names += usize::from(seed.frame.windows(130).any(|w| w == [b'g'; 130]));
                }
            }
        }
        assert!(long_names > 10, "{long_names} frames with a 130-byte name");
    }
}
