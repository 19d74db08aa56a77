//! The check of a decoder someone else wrote, against Apache's verdict.
//!
//! The user gives a decoder (body, version and API in, their result out) and a small adapter that
//! says what it decoded, as a [`Decoded`]: the values by Apache's field names (only those
//! mapped are compared), or the decoded message written again by the same crate (Apache's
//! reader then reads its values: the adapter is one line where the crate can encode), or a
//! refusal. [`check`] fails, with a [`Finding`], on
//! - a panic (caught, with its message and location),
//! - an allocation past a bound proportional to the input (seen by [`crate::alloc::Watch`]),
//! - a body the decoder accepts that Apache's parser refuses, or refuses that it accepts,
//! - values that differ from the ones Apache reads.
//!
//! [`Case`] draws the inputs, structure-aware, from Apache's definitions, or reads them from a
//! coverage-guided fuzzer's bytes; [`Session`] runs many and keeps one finding per defect.

mod apache;
mod case;
mod compare;
mod isolated;
mod panics;
mod session;

use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};

use serde_json::Value;

pub use apache::{values_of, verdict, Refusal, Verdict};
pub use case::{every_version, message, Case, Direction};
pub use compare::{first_difference, Difference};
pub use panics::quiet_panics;
pub use session::{Report, Seen, Session};

use crate::text::{indexes_out, kind_out, numbers_out, reason_out};
use crate::{alloc, api_name};

/// What a decoder made of a body, as its adapter says.
#[derive(Debug, Clone, PartialEq)]
pub enum Decoded {
    /// The values, as a tree by Apache's snake_case field names (`producer_epoch`); fields
    /// left out are not compared.
    Values(Value),
    /// The decoded message written again by the same crate at the same version: Apache's
    /// reader reads its values, and all of them are compared.
    Reencoded(Vec<u8>),
    /// The decoder refused the body, and why.
    Refused(String),
    /// The decoder does not take this API, direction or version (kaas serves fewer versions
    /// than Apache): nothing is compared, and the session counts it apart.
    NotServed,
}

/// What is wrong with what a decoder did with one body.
#[derive(Debug, Clone, PartialEq)]
pub enum Problem {
    /// It panicked.
    Panicked(String),
    /// It asked for one allocation past the bound.
    Allocated {
        /// The largest single request, in bytes.
        bytes: usize,
        /// The bound for this input.
        bound: usize,
    },
    /// It asked for one allocation that no address space holds, and the process aborted (seen
    /// by an isolated session, [`Session::run_isolated`]).
    Aborted {
        /// The request, in bytes.
        bytes: usize,
        /// The bound for this input.
        bound: usize,
    },
    /// The process checking it died of a signal (a stack overflow, a bad address) while it
    /// decoded (seen by an isolated session).
    Died(String),
    /// It read a message from a body Apache's parser refuses.
    AcceptsWhatApacheRefuses(Refusal),
    /// It refused a body Apache's parser reads.
    RefusesWhatApacheAccepts {
        /// The decoder's reason.
        theirs: String,
        /// The bytes Apache ignores after the message, if any.
        trailing: usize,
    },
    /// It read other values than Apache reads.
    ValuesDiffer(Difference),
    /// What it wrote again, Apache refuses (or reads with bytes left over).
    ReencodedUnreadable(Refusal),
}

impl Problem {
    /// The words a finding's signature starts with.
    pub fn word(&self) -> &'static str {
        match self {
            Problem::Panicked(_) => "panics",
            Problem::Allocated { .. } | Problem::Aborted { .. } => "allocates past the bound",
            Problem::Died(_) => "dies",
            Problem::AcceptsWhatApacheRefuses(_) => "accepts what Apache refuses",
            Problem::RefusesWhatApacheAccepts { .. } => "refuses what Apache accepts",
            Problem::ValuesDiffer(_) => "reads other values than Apache",
            Problem::ReencodedUnreadable(_) => "writes again what Apache cannot read",
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::Panicked(m) => write!(f, "panicked: {m}"),
            Problem::Allocated { bytes, bound } => {
                write!(f, "asked for {bytes} bytes at once (bound {bound})")
            }
            Problem::Aborted { bytes, bound } => write!(
                f,
                "asked for {bytes} bytes at once (bound {bound}), which no address space holds: the process aborted"
            ),
            Problem::Died(how) => write!(f, "the process died: {how}"),
            Problem::AcceptsWhatApacheRefuses(r) => write!(f, "Apache refuses it: {r}"),
            Problem::RefusesWhatApacheAccepts { theirs, trailing } => {
                write!(f, "refused it ({theirs}); Apache reads it")?;
                match trailing {
                    0 => Ok(()),
                    n => write!(f, " and ignores the {n} byte(s) after the message"),
                }
            }
            Problem::ValuesDiffer(d) => write!(
                f,
                "{}: Apache reads {}, the decoder {}",
                d.path, d.apache, d.theirs
            ),
            Problem::ReencodedUnreadable(r) => write!(f, "its own encoding: {r}"),
        }
    }
}

/// The bytes of a body a finding shows (the case has them all).
const BODY_SHOWN: usize = 96;

/// A body a decoder got wrong, and how.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// The input.
    pub case: Case,
    /// What went wrong.
    pub problem: Problem,
}

impl Finding {
    /// One defect, one signature, whatever the input and version: what went wrong, the API and
    /// direction (not for a panic or a refusal: their words name the defect wherever it shows),
    /// and the field (indexes out), the panic's message or the refusal's reason (numbers out).
    pub fn signature(&self) -> String {
        let at = match &self.problem {
            Problem::Panicked(m) => numbers_out(m),
            Problem::Allocated { .. } | Problem::Aborted { .. } => String::new(),
            Problem::Died(how) => how.clone(),
            // Apache's reader names the kind (a null where the definition allows none): one
            // defect in one reader of the decoder, on whichever field it shows; the session
            // lists the fields ([`Finding::field`]).
            Problem::AcceptsWhatApacheRefuses(r) => kind_out(&r.problem),
            Problem::ReencodedUnreadable(r) => numbers_out(&indexes_out(&r.field)),
            // The decoder's own reason names the defect (a string that is not UTF-8, the bytes
            // after the message); its first line, numbers out.
            Problem::RefusesWhatApacheAccepts { theirs, .. } => {
                reason_out(theirs.lines().next().unwrap_or_default())
            }
            Problem::ValuesDiffer(d) => numbers_out(&indexes_out(&d.path)),
        };
        // A panic or a refusal is one defect on every API it shows on (the string reader that
        // refuses what is not UTF-8 is shared); the session lists the APIs.
        let api = match &self.problem {
            Problem::Panicked(_)
            | Problem::RefusesWhatApacheAccepts { .. }
            | Problem::AcceptsWhatApacheRefuses(_) => String::new(),
            _ => format!("{} {}", api_name(self.case.api as i16), self.case.direction),
        };
        [self.problem.word(), &api, &at]
            .iter()
            .filter(|p| !p.is_empty())
            .copied()
            .collect::<Vec<&str>>()
            .join(": ")
    }

    /// Where a defect signed without its field showed (`EndTxn request: topics[] (count)`):
    /// the session lists each, as the fields one fix in one reader mends.
    pub fn field(&self) -> Option<String> {
        match &self.problem {
            Problem::AcceptsWhatApacheRefuses(r) => Some(format!(
                "{} {}: {}",
                api_name(self.case.api as i16),
                self.case.direction,
                indexes_out(&r.field)
            )),
            _ => None,
        }
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.case, self.problem)?;
        if !self.case.how.is_empty() {
            write!(f, " [made by: {}]", self.case.how.join("; "))?;
        }
        let shown = &self.case.body[..self.case.body.len().min(BODY_SHOWN)];
        write!(f, "\n  body: {}", crate::hex::hex_compact(shown))?;
        match self.case.body.len() > BODY_SHOWN {
            true => write!(f, "... ({} bytes)", self.case.body.len()),
            false => Ok(()),
        }
    }
}

/// `WriteTxnMarkers request`: the start of a signature, as static text the allocator can
/// write without allocating (made once per API and direction).
fn what(case: &Case) -> &'static str {
    use std::collections::BTreeMap;
    use std::sync::Mutex;
    static MADE: Mutex<BTreeMap<(i16, bool), &'static str>> = Mutex::new(BTreeMap::new());
    let key = (case.api as i16, case.direction == Direction::Request);
    let mut made = MADE.lock().unwrap_or_else(|e| e.into_inner());
    made.entry(key).or_insert_with(|| {
        let text = format!("{} {}", api_name(key.0), case.direction);
        Box::leak(text.into_boxed_str())
    })
}

/// The bound on a single allocation while a body of `len` bytes is decoded: 64 KiB, and 256
/// bytes per byte of input (an element of a decoded array is rarely larger; Apache's parser
/// never sets aside more than the bytes left can fill).
pub fn allocation_bound(len: usize) -> usize {
    (64 << 10) + 256 * len
}

/// Runs `decoder` on `case` (its body, version, API and direction) and holds what it did against Apache's verdict. The decoder's
/// panics are caught (call [`quiet_panics`] once to keep them off stderr and name their
/// location); its allocations are seen when [`alloc::Watch`] is the global allocator. `None`
/// when the decoder does not serve the case ([`Decoded::NotServed`]).
pub fn check<F>(case: &Case, decoder: F) -> Result<Option<Verdict>, Box<Finding>>
where
    F: FnOnce(&Case) -> Decoded,
{
    let found = |problem| {
        Box::new(Finding {
            case: case.clone(),
            problem,
        })
    };
    let decoding = alloc::Decoding {
        what: what(case),
        version: case.version,
        body: (case.body.as_ptr(), case.body.len()),
    };
    let (decoded, largest) = panics::catching(|| {
        alloc::watching(|| {
            alloc::decoding(decoding, || {
                catch_unwind(AssertUnwindSafe(|| decoder(case)))
            })
        })
    });
    let decoded = decoded.map_err(|said| found(Problem::Panicked(said)))?;
    if decoded == Decoded::NotServed {
        return Ok(None);
    }
    let bound = allocation_bound(case.body.len());
    if largest > bound {
        return Err(found(Problem::Allocated {
            bytes: largest,
            bound,
        }));
    }
    let apache = verdict(case);
    let theirs = match (&apache, decoded) {
        (_, Decoded::NotServed) => return Ok(None),
        (Verdict::Refuses(_), Decoded::Refused(_)) => return Ok(Some(apache)),
        (Verdict::Refuses(r), _) => {
            return Err(found(Problem::AcceptsWhatApacheRefuses(r.clone())))
        }
        (Verdict::Accepts { end, .. }, Decoded::Refused(theirs)) => {
            let trailing = case.body.len() - end;
            return Err(found(Problem::RefusesWhatApacheAccepts {
                theirs,
                trailing,
            }));
        }
        (_, Decoded::Values(v)) => v,
        (_, Decoded::Reencoded(bytes)) => {
            values_of(case, &bytes).map_err(|r| found(Problem::ReencodedUnreadable(r)))?
        }
    };
    if let Verdict::Accepts { values, .. } = &apache {
        if let Some(d) = first_difference(values, &theirs) {
            return Err(found(Problem::ValuesDiffer(d)));
        }
    }
    Ok(Some(apache))
}
