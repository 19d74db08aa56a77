//! The inputs a check gives a decoder: a request or response body of one of the six
//! transaction APIs at one version, drawn structure-aware (a valid message with edge values,
//! then mutated along Apache's definitions or byte by byte) or read from a fuzzer's bytes.

use std::fmt;

use kafka_protocol::messages::ApiKey;
use serde_json::{Map, Value};

use crate::schema::{self, Field, Kind, Message};
use crate::seeds::{self, APIS};
use crate::{api_name, by_schema, mutate, read, shape, Rng};

/// Which way a message goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Direction {
    /// Client to broker.
    Request,
    /// Broker to client.
    Response,
}

impl fmt::Display for Direction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Direction::Request => "request",
            Direction::Response => "response",
        })
    }
}

/// One input: what a decoder is told (direction, API, version) and the body it reads (the
/// bytes after the request or response header).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Case {
    /// Request or response.
    pub direction: Direction,
    /// The API.
    pub api: ApiKey,
    /// The version the decoder is told.
    pub version: i16,
    /// The body.
    pub body: Vec<u8>,
    /// How it was made from a valid message, in words (empty for a valid one or fuzzer bytes).
    pub how: Vec<String>,
}

impl fmt::Display for Case {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} v{} {} ({} bytes)",
            api_name(self.api as i16),
            self.version,
            self.direction,
            self.body.len()
        )
    }
}

/// Apache's definition of the message a case is, when a release kconform knows defines it.
pub fn message(direction: Direction, api: ApiKey, version: i16) -> Option<&'static Message> {
    let name = api_name(api as i16);
    let m = match direction {
        Direction::Request => schema::request_at(&name, version)?,
        Direction::Response => schema::response_at(&name, version)?,
    };
    m.valid.contains(version).then_some(m)
}

/// Every (direction, API, version) a release kconform knows defines, in a fixed order.
pub fn every_version() -> Vec<(Direction, ApiKey, i16)> {
    let mut all = Vec::new();
    for direction in [Direction::Request, Direction::Response] {
        for api in APIS {
            for version in 0..=shape::highest_version(api) {
                if message(direction, api, version).is_some() {
                    all.push((direction, api, version));
                }
            }
        }
    }
    all
}

impl Case {
    /// A valid message of `api` at `version`, its fields drawn from `rng` (requests from the
    /// live-wire fuzzer's pools, responses from the definition's types), written by Apache's
    /// definitions.
    pub fn valid(direction: Direction, api: ApiKey, version: i16, rng: &mut Rng) -> Option<Case> {
        let message = message(direction, api, version)?;
        let tree = match direction {
            Direction::Request => Value::Object(seeds::fields(api, version, rng)),
            Direction::Response => drawn_fields(&message.fields, version, rng, 0),
        };
        let body = by_schema::encode(message, version, &tree, &[]).ok()?;
        Some(Case {
            direction,
            api,
            version,
            body,
            how: Vec::new(),
        })
    }

    /// A valid message of any API and version, mutated one to three times (the live-wire
    /// fuzzer's mutations: values to their edges, lengths and counts off, tags added, bytes
    /// flipped, cut or repeated; one time in eight not at all).
    pub fn draw(rng: &mut Rng) -> Case {
        let all = every_version();
        loop {
            let (direction, api, version) = all[rng.below(all.len() as u64) as usize];
            let Some(mut case) = Case::valid(direction, api, version, rng) else {
                continue;
            };
            case.how = case.mutated(rng);
            return case;
        }
    }

    /// Mutates the body along its definition (or byte by byte); what was done, in words.
    fn mutated(&mut self, rng: &mut Rng) -> Vec<String> {
        if rng.one_in(8) {
            return Vec::new();
        }
        let Some(message) = message(self.direction, self.api, self.version) else {
            return Vec::new();
        };
        let (api, version) = (self.api, self.version);
        let parse = |b: &[u8]| {
            let r = read::read(message, version, b, 0).ok()?;
            Some(shape::Parsed {
                api,
                version,
                flexible: message.flexible.contains(version),
                spans: r.spans,
                end: r.end,
            })
        };
        mutate::mutate_along(&mut self.body, rng, parse)
    }

    /// A case from a coverage-guided fuzzer's bytes: the first two bytes pick the direction,
    /// API and version (of [`every_version`]), the rest is the body. `None` for fewer than
    /// two bytes. [`Case::to_fuzz_input`] writes a case back, for a seed corpus.
    pub fn from_fuzz_input(data: &[u8]) -> Option<Case> {
        let (pick, body) = data.split_at_checked(2)?;
        let all = every_version();
        let at = u16::from_be_bytes([pick[0], pick[1]]) as usize % all.len();
        let (direction, api, version) = all[at];
        Some(Case {
            direction,
            api,
            version,
            body: body.to_vec(),
            how: Vec::new(),
        })
    }

    /// The fuzzer's bytes that [`Case::from_fuzz_input`] reads as this case.
    pub fn to_fuzz_input(&self) -> Option<Vec<u8>> {
        let at = every_version()
            .iter()
            .position(|&k| k == (self.direction, self.api, self.version))?;
        let mut out = (at as u16).to_be_bytes().to_vec();
        out.extend(&self.body);
        Some(out)
    }

    /// A file name for the case: `write_txn_markers-request-v0-<hash>`.
    pub fn file_stem(&self) -> String {
        let snake = schema::snake_case(&api_name(self.api as i16));
        let hash = self.body.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
        });
        format!(
            "{snake}-{}-v{}-{:08x}",
            self.direction, self.version, hash as u32
        )
    }
}

/// Values for `fields` at `version`: integers at their edges and ordinary ones, short and
/// long strings, null where the field may be, up to two elements per array.
fn drawn_fields(fields: &[Field], version: i16, rng: &mut Rng, depth: usize) -> Value {
    let mut tree = Map::new();
    for f in fields.iter().filter(|f| f.versions.contains(version)) {
        let value = match f.nullable.contains(version) && rng.one_in(6) {
            true => Value::Null,
            false => drawn_value(&f.kind, version, rng, depth),
        };
        tree.insert(f.name.clone(), value);
    }
    Value::Object(tree)
}

fn drawn_value(kind: &Kind, version: i16, rng: &mut Rng, depth: usize) -> Value {
    let edge = |rng: &mut Rng, lo: i64, hi: i64| match rng.below(6) {
        0 => lo,
        1 => hi,
        2 => -1,
        3 => 0,
        _ => rng.below(100) as i64,
    };
    match kind {
        Kind::Bool => Value::Bool(rng.one_in(2)),
        Kind::Int8 => Value::from(edge(rng, i8::MIN.into(), i8::MAX.into())),
        Kind::Int16 => Value::from(edge(rng, i16::MIN.into(), i16::MAX.into())),
        Kind::Uint16 => Value::from(rng.below(u16::MAX as u64 + 1)),
        Kind::Int32 => Value::from(edge(rng, i32::MIN.into(), i32::MAX.into())),
        Kind::Int64 => Value::from(edge(rng, i64::MIN, i64::MAX)),
        Kind::Float64 => Value::from(rng.below(1000) as f64 / 8.0),
        Kind::Uuid => Value::String(by_schema::uuid_text(
            &rng.next_u64().to_be_bytes().repeat(2),
        )),
        Kind::String => Value::String(match rng.below(4) {
            0 => String::new(),
            1 => "t".repeat(130),
            2 => "kaas-é-名".into(),
            _ => format!("kconform-{}", rng.below(50)),
        }),
        Kind::Bytes | Kind::Records => Value::String("00ff".repeat(rng.below(3) as usize)),
        Kind::Array(inner) if depth < 4 => Value::Array(
            (0..rng.below(3))
                .map(|_| drawn_value(inner, version, rng, depth + 1))
                .collect(),
        ),
        Kind::Array(_) => Value::Array(Vec::new()),
        Kind::Struct(fields) => drawn_fields(fields, version, rng, depth + 1),
    }
}
