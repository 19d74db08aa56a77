//! Apache's verdict on a body: whether its generated parser reads it (kconform's reader, which
//! accepts exactly what that parser accepts: `harness/tests/apache_parser.rs` holds it against
//! kafka-clients itself), and the values it reads, as a tree by Apache's field names.

use serde_json::Value;

use super::case::{message, Case};
use crate::{api_name, by_schema, read};

/// What Apache's parser makes of a body.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// It reads a message.
    Accepts {
        /// The values it reads (strings as Java decodes them, unknown tags left out).
        values: Value,
        /// Where the message ends; Apache ignores the bytes after it.
        end: usize,
    },
    /// It refuses the body.
    Refuses(Refusal),
}

/// Where and why Apache's parser refuses a body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The field it was reading (`markers[0].topics (count)`), or `(version)`.
    pub field: String,
    /// The byte of the body.
    pub offset: usize,
    /// What is wrong.
    pub problem: String,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} at byte {}: {}",
            self.field, self.offset, self.problem
        )
    }
}

/// Apache's verdict on `case`.
pub fn verdict(case: &Case) -> Verdict {
    let Some(m) = message(case.direction, case.api, case.version) else {
        return Verdict::Refuses(Refusal {
            field: "(version)".into(),
            offset: 0,
            problem: format!(
                "Apache defines no {} v{} {}",
                api_name(case.api as i16),
                case.version,
                case.direction
            ),
        });
    };
    match read::read(m, case.version, &case.body, 0) {
        Err(e) => Verdict::Refuses(Refusal {
            field: e.path,
            offset: e.offset,
            problem: e.problem,
        }),
        Ok(r) => Verdict::Accepts {
            // The canonical encoding of what was read reads back whole; a failure here would be
            // kconform's own, and shows as a null tree rather than a verdict.
            values: by_schema::decode(m, case.version, &r.canonical).unwrap_or(Value::Null),
            end: r.end,
        },
    }
}

/// The values Apache reads from `bytes` as the message `case` is (a decoder's own encoding of
/// what it decoded), or why it refuses them. Bytes after the message are refused here: an
/// encoder writes a message and nothing else.
pub fn values_of(case: &Case, bytes: &[u8]) -> Result<Value, Refusal> {
    let probe = Case {
        body: bytes.to_vec(),
        ..case.clone()
    };
    match verdict(&probe) {
        Verdict::Accepts { values, end } if end == bytes.len() => Ok(values),
        Verdict::Accepts { end, .. } => Err(Refusal {
            field: "(end)".into(),
            offset: end,
            problem: format!("{} byte(s) after the message", bytes.len() - end),
        }),
        Verdict::Refuses(r) => Err(r),
    }
}
