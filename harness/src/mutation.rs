//! Generic mutations of a broker's answers, and a proxy that applies one: the way to prove that
//! kconform catches a broker that answers wrongly. Between kconform and a healthy broker, the
//! proxy passes every exchange through unchanged, except the answers of one (API, version),
//! which it mutates: a byte inserted at a field boundary, the last byte dropped, the frame cut
//! inside a field, an error code replaced, an integer field plus one, another correlation id,
//! the connection closed, or silence past the deadline.
//!
//! Mutations name fields by their path in Apache's schema ([`crate::wire::frame::spans`]), so the
//! same mutant applies to every answer of that shape; an answer without the field passes.

use std::fmt;
use std::net::SocketAddr;
use std::str::FromStr;

use kafka_protocol::messages::ApiKey;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use crate::wire::frame::{self, Span};

/// The byte an insertion puts in: not zero, which often reads as an empty count or tag list.
const INSERTED: u8 = 0x2a;

/// The error code a replaced one becomes: one that no transaction API answers and no ledger
/// entry documents, so it is a difference wherever it lands.
const REPLACEMENT_CODE: i16 = 99;

/// One change to an answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mutation {
    /// Insert a byte where the field at this path begins (`end`: after the last byte).
    Insert(String),
    /// Drop the frame's last byte.
    DropLastByte,
    /// End the frame after the first byte of the field at this path.
    Cut(String),
    /// Replace the error code at this path (`*`: every one) with this code
    /// (`REPLACEMENT_CODE` unless said: `error-code:PATH=15`).
    ErrorCode(String, i16),
    /// Add one to the integer field at this path.
    AddOne(String),
    /// Make the nullable string at this path null (a text field a client only logs, as a
    /// broker that writes no error message where Apache writes one).
    NullText(String),
    /// Answer with another correlation id.
    Correlation,
    /// Close the connection instead of answering.
    Close,
    /// Never answer.
    Stall,
    /// Frame the answer with the other response header version: an empty tagged-field section
    /// added after the correlation id where header v0 is due, the one there taken out where v1
    /// is (the framing defect a real kaas build had on every non-flexible version).
    HeaderVersion,
    /// The same values in other bytes that Apache's parser reads alike (a tagged field at its
    /// default, an unknown tag, long varints): an equivalent mutant, which must change no
    /// verdict.
    Equivalent(frame::Equivalent),
}

impl fmt::Display for Mutation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Mutation::Insert(p) => write!(f, "insert:{p}"),
            Mutation::DropLastByte => f.write_str("drop-last-byte"),
            Mutation::Cut(p) => write!(f, "cut:{p}"),
            Mutation::ErrorCode(p, REPLACEMENT_CODE) => write!(f, "error-code:{p}"),
            Mutation::ErrorCode(p, code) => write!(f, "error-code:{p}={code}"),
            Mutation::AddOne(p) => write!(f, "add-one:{p}"),
            Mutation::NullText(p) => write!(f, "null-text:{p}"),
            Mutation::Correlation => f.write_str("correlation"),
            Mutation::Close => f.write_str("close"),
            Mutation::Stall => f.write_str("stall"),
            Mutation::HeaderVersion => f.write_str("header-version"),
            Mutation::Equivalent(e) => f.write_str(e.name()),
        }
    }
}

impl FromStr for Mutation {
    type Err = String;

    /// The form [`fmt::Display`] writes: `insert:PATH`, `drop-last-byte`, `cut:PATH`,
    /// `error-code:PATH[=CODE]`, `add-one:PATH`, `null-text:PATH`, `correlation`, `header-version`, `close`, `stall`,
    /// `tags-at-default`, `unknown-tag`, `long-varints`.
    fn from_str(s: &str) -> Result<Mutation, String> {
        let (kind, path) = match s.split_once(':') {
            Some((k, p)) => (k, Some(p.to_owned())),
            None => (s, None),
        };
        let equivalent = frame::Equivalent::ALL.into_iter().find(|e| e.name() == s);
        if let Some(e) = equivalent {
            return Ok(Mutation::Equivalent(e));
        }
        Ok(match (kind, path) {
            ("insert", Some(p)) => Mutation::Insert(p),
            ("cut", Some(p)) => Mutation::Cut(p),
            ("error-code", Some(p)) => match p.rsplit_once('=') {
                Some((path, code)) => Mutation::ErrorCode(
                    path.to_owned(),
                    code.parse()
                        .map_err(|_| format!("mutation '{s}': '{code}' is not an error code"))?,
                ),
                None => Mutation::ErrorCode(p, REPLACEMENT_CODE),
            },
            ("add-one", Some(p)) => Mutation::AddOne(p),
            ("null-text", Some(p)) => Mutation::NullText(p),
            ("drop-last-byte", None) => Mutation::DropLastByte,
            ("correlation", None) => Mutation::Correlation,
            ("close", None) => Mutation::Close,
            ("stall", None) => Mutation::Stall,
            ("header-version", None) => Mutation::HeaderVersion,
            _ => {
                return Err(format!(
                    "mutation '{s}': expected insert:PATH, drop-last-byte, cut:PATH, error-code:PATH[=CODE], add-one:PATH, null-text:PATH, correlation, header-version, close, stall, tags-at-default, unknown-tag or long-varints"
                ))
            }
        })
    }
}

/// A mutation of the answers of one API at one version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mutant {
    /// The API whose answers change.
    pub api: ApiKey,
    /// At this version.
    pub version: i16,
    /// How.
    pub mutation: Mutation,
}

impl fmt::Display for Mutant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?} v{}: {}", self.api, self.version, self.mutation)
    }
}

/// Which answers a proxy changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// None: a transparent relay.
    None,
    /// The answers of one API at one version.
    One(Mutant),
    /// Every answer but ApiVersions' (which a broker must answer to be judged at all): a
    /// broker that answers everything wrongly, for measuring how fast a run gives up. An
    /// equivalent mutation changes ApiVersions' answers too: it changes no meaning.
    AllBut(Mutation),
}

/// Why the flags of `kconform proxy` name no scope.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScopeError {
    /// `--api all` with a version.
    #[error("--api all changes every version: drop --version")]
    VersionBesideAll,
    /// An API without a version.
    #[error("--api needs --version (or use --api all)")]
    NoVersion,
    /// An API kconform does not know.
    #[error("--api '{0}': kconform knows all, {1}")]
    UnknownApi(String, String),
}

impl Scope {
    /// The scope `--api`, `--version` and `--mutation` name: `all` for every answer but
    /// ApiVersions', an API by Apache's name (`EndTxn`) at one version, or none (a transparent
    /// relay) when no mutation is given.
    pub fn from_flags(
        api: Option<&str>,
        version: Option<i16>,
        mutation: Option<Mutation>,
    ) -> Result<Scope, ScopeError> {
        match (api, version, mutation) {
            (Some("all"), None, Some(mutation)) => Ok(Scope::AllBut(mutation)),
            (Some("all"), Some(_), _) => Err(ScopeError::VersionBesideAll),
            (Some(api), Some(version), Some(mutation)) => {
                let key = crate::api::by_name(api)
                    .map(|a| a.key)
                    .ok_or_else(|| ScopeError::UnknownApi(api.to_owned(), crate::api::names()))?;
                Ok(Scope::One(Mutant {
                    api: key,
                    version,
                    mutation,
                }))
            }
            (Some(_), None, _) => Err(ScopeError::NoVersion),
            _ => Ok(Scope::None),
        }
    }

    fn mutation_for(&self, api: i16, version: i16) -> Option<(ApiKey, &Mutation)> {
        match self {
            Scope::One(m) if m.api as i16 == api && m.version == version => {
                Some((m.api, &m.mutation))
            }
            Scope::AllBut(m)
                if api != ApiKey::ApiVersions as i16 || matches!(m, Mutation::Equivalent(_)) =>
            {
                ApiKey::try_from(api).ok().map(|key| (key, m))
            }
            _ => None,
        }
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scope::None => f.write_str("unchanged"),
            Scope::One(m) => write!(f, "mutating {m}"),
            Scope::AllBut(m) => write!(f, "mutating every answer but ApiVersions: {m}"),
        }
    }
}

/// What the proxy does with one answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// Send this frame (the bytes after the size; the size is computed).
    Send(Vec<u8>),
    /// Close the connection.
    Close,
    /// Send nothing, ever.
    Stall,
}

/// Every mutant of an answer like `frame` (a well-formed answer of `api` v`version`): an
/// insertion at each field boundary (header included) and after the last byte, the last byte
/// dropped, a cut inside the last field of two bytes or more, each error code replaced, each
/// integer field plus one, another correlation id, a close and a stall.
pub fn mutants(api: ApiKey, version: i16, frame: &[u8]) -> Result<Vec<Mutant>, frame::WalkError> {
    let spans = frame::spans(api, version, frame)?;
    let mut out = Vec::new();
    let mut starts = Vec::new();
    for s in &spans {
        if !starts.contains(&s.start) {
            starts.push(s.start);
            out.push(Mutation::Insert(s.path.clone()));
        }
    }
    out.push(Mutation::Insert("end".into()));
    out.push(Mutation::DropLastByte);
    if let Some(wide) = spans.iter().rev().find(|s| s.end - s.start >= 2) {
        out.push(Mutation::Cut(wide.path.clone()));
    }
    for s in spans.iter().filter(|s| s.path.ends_with("error_code")) {
        out.push(Mutation::ErrorCode(s.path.clone(), REPLACEMENT_CODE));
    }
    for s in spans
        .iter()
        .filter(|s| s.integer && !s.path.starts_with("header."))
    {
        out.push(Mutation::AddOne(s.path.clone()));
    }
    out.extend([Mutation::Correlation, Mutation::Close, Mutation::Stall]);
    Ok(out
        .into_iter()
        .map(|mutation| Mutant {
            api,
            version,
            mutation,
        })
        .collect())
}

fn find<'a>(spans: &'a [Span], path: &str) -> Option<&'a Span> {
    spans.iter().find(|s| s.path == path)
}

/// What `mutation` makes of `frame`, an answer of `api` v`version`. An answer that does not
/// walk, or lacks the field, passes unchanged.
pub fn apply(mutation: &Mutation, api: ApiKey, version: i16, frame: &[u8]) -> Answer {
    let mut out = frame.to_vec();
    let spans = frame::spans(api, version, frame).unwrap_or_default();
    match mutation {
        Mutation::Close => return Answer::Close,
        Mutation::Stall => return Answer::Stall,
        Mutation::DropLastByte => {
            out.pop();
        }
        Mutation::Correlation if out.len() >= 4 => {
            let c = i32::from_be_bytes([out[0], out[1], out[2], out[3]]).wrapping_add(1);
            out[..4].copy_from_slice(&c.to_be_bytes());
        }
        Mutation::Insert(path) if path == "end" => out.push(INSERTED),
        Mutation::Insert(path) => {
            if let Some(s) = find(&spans, path) {
                out.insert(s.start, INSERTED);
            }
        }
        Mutation::Cut(path) => {
            if let Some(s) = find(&spans, path) {
                out.truncate(s.start + 1);
            }
        }
        Mutation::ErrorCode(path, code) => {
            let codes = spans.iter().filter(|s| {
                s.end - s.start == 2
                    && match path.as_str() {
                        "*" => s.path.ends_with("error_code"),
                        one => s.path == one,
                    }
            });
            for s in codes {
                out[s.start..s.end].copy_from_slice(&code.to_be_bytes());
            }
        }
        Mutation::AddOne(path) => {
            if let Some(s) = find(&spans, path).filter(|s| s.integer) {
                // Big-endian plus one, carrying, wrapping at the top.
                for b in out[s.start..s.end].iter_mut().rev() {
                    let (sum, carry) = b.overflowing_add(1);
                    *b = sum;
                    if !carry {
                        break;
                    }
                }
            }
        }
        Mutation::NullText(path) => {
            if let Some(s) = find(&spans, path).filter(|s| !s.integer) {
                // A flexible version's compact length 0 is null; a classic one's is -1.
                let null: &[u8] = match api.response_header_version(version) {
                    1 => &[0],
                    _ => &[0xff, 0xff],
                };
                out.splice(s.start..s.end, null.iter().copied());
            }
        }
        Mutation::Correlation => {}
        Mutation::HeaderVersion => match api.response_header_version(version) {
            0 if out.len() >= 4 => out.insert(4, 0),
            1 if out.get(4) == Some(&0) => {
                out.remove(4);
            }
            _ => {}
        },
        Mutation::Equivalent(how) => {
            if let Some(again) = frame::rewrite(api, version, frame, *how) {
                out = again;
            }
        }
    }
    Answer::Send(out)
}

/// Largest frame the proxy relays.
const MAX_FRAME: usize = 64 * 1024 * 1024;

async fn read_frame(s: &mut TcpStream) -> Option<Vec<u8>> {
    let mut size = [0u8; 4];
    s.read_exact(&mut size).await.ok()?;
    let size = usize::try_from(i32::from_be_bytes(size)).ok()?;
    if size > MAX_FRAME {
        return None;
    }
    let mut frame = vec![0u8; size];
    s.read_exact(&mut frame).await.ok()?;
    Some(frame)
}

async fn write_frame(s: &mut TcpStream, frame: &[u8]) -> Option<()> {
    s.write_all(&(frame.len() as i32).to_be_bytes())
        .await
        .ok()?;
    s.write_all(frame).await.ok()
}

/// The first answer seen of each (API key, version), as it came from the broker.
pub type Seen = std::sync::Arc<std::sync::Mutex<std::collections::BTreeMap<(i16, i16), Vec<u8>>>>;

/// One answer as it came from the broker, with what it answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exchange {
    /// The request's API key.
    pub api: i16,
    /// The request's version.
    pub version: i16,
    /// The request's correlation id.
    pub correlation: i32,
    /// The answer, after its size.
    pub answer: Vec<u8>,
}

/// How many distinct answers a proxy keeps ([`Proxy::answers`]).
pub const KEPT_ANSWERS: usize = 20_000;

/// How many bytes of answers a proxy keeps at most: a `kconform proxy` relaying large Fetch
/// answers for hours must not grow without bound.
pub const KEPT_BYTES: usize = 64 * 1024 * 1024;

/// The distinct answers seen (by API, version and bytes, correlation ids aside), up to
/// [`KEPT_ANSWERS`] and [`KEPT_BYTES`]: a corpus of a broker's real answers.
#[derive(Debug, Default)]
pub struct AnswerLog {
    /// The answers, in the order they came.
    pub kept: Vec<Exchange>,
    distinct: std::collections::HashSet<(i16, i16, Vec<u8>)>,
    bytes: usize,
}

impl AnswerLog {
    fn note(&mut self, api: i16, version: i16, correlation: i32, answer: &[u8]) {
        // Each kept answer is held twice: as it came, and without its correlation id.
        let cost = 2 * answer.len();
        if self.kept.len() >= KEPT_ANSWERS || self.bytes + cost > KEPT_BYTES {
            return;
        }
        let body = answer.get(4..).unwrap_or_default().to_vec();
        if self.distinct.insert((api, version, body)) {
            self.bytes += cost;
            self.kept.push(Exchange {
                api,
                version,
                correlation,
                answer: answer.to_vec(),
            });
        }
    }
}

/// A proxy's [`AnswerLog`], shared with its relays.
pub type Answers = std::sync::Arc<std::sync::Mutex<AnswerLog>>;

/// Relays one client connection to `upstream`, one exchange at a time, mutating the answers
/// `mutant` names and noting the first answer of each (API, version) in `seen`.
async fn relay(
    mut client: TcpStream,
    upstream: SocketAddr,
    scope: Scope,
    (seen, answers): (Seen, Answers),
) {
    let Ok(mut broker) = TcpStream::connect(upstream).await else {
        return;
    };
    let _ = broker.set_nodelay(true);
    let _ = client.set_nodelay(true);
    while let Some(request) = read_frame(&mut client).await {
        if request.len() < 4 || write_frame(&mut broker, &request).await.is_none() {
            return;
        }
        let Some(answer) = read_frame(&mut broker).await else {
            return;
        };
        let api = i16::from_be_bytes([request[0], request[1]]);
        let version = i16::from_be_bytes([request[2], request[3]]);
        if let Ok(mut seen) = seen.lock() {
            seen.entry((api, version)).or_insert_with(|| answer.clone());
        }
        if let (Ok(mut log), Some(c)) = (answers.lock(), request.get(4..8)) {
            let correlation = i32::from_be_bytes(c.try_into().expect("4 bytes"));
            log.note(api, version, correlation, &answer);
        }
        let answer = match scope.mutation_for(api, version) {
            Some((key, mutation)) => apply(mutation, key, version, &answer),
            None => Answer::Send(answer),
        };
        match answer {
            Answer::Send(frame) => {
                if write_frame(&mut client, &frame).await.is_none() {
                    return;
                }
            }
            Answer::Close => return,
            Answer::Stall => {
                // Hold the connection open and say nothing until the client leaves.
                let mut sink = [0u8; 1024];
                while matches!(client.read(&mut sink).await, Ok(n) if n > 0) {}
                return;
            }
        }
    }
}

/// A running proxy: its address, and the task serving it (stopped when dropped).
#[derive(Debug)]
pub struct Proxy {
    /// Where clients connect.
    pub addr: SocketAddr,
    /// The first answer of each (API key, version) that passed, before any mutation.
    pub seen: Seen,
    /// Every distinct answer that passed, before any mutation.
    pub answers: Answers,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Proxy {
    /// Listens on `listen` (port 0: any) and relays to `upstream`, changing the answers in
    /// `scope`.
    pub async fn start(
        listen: SocketAddr,
        upstream: SocketAddr,
        scope: Scope,
    ) -> std::io::Result<Proxy> {
        let listener = TcpListener::bind(listen).await?;
        let addr = listener.local_addr()?;
        let seen = Seen::default();
        let answers = Answers::default();
        let noted = (seen.clone(), answers.clone());
        let task = tokio::spawn(async move {
            let mut relays = tokio::task::JoinSet::new();
            while let Ok((client, _)) = listener.accept().await {
                relays.spawn(relay(client, upstream, scope.clone(), noted.clone()));
            }
        });
        Ok(Proxy {
            addr,
            seen,
            answers,
            task,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::BytesMut;

    #[test]
    fn the_proxy_flags_name_a_scope_or_the_mend() {
        let m = || Some("drop-last-byte".parse::<Mutation>().unwrap());
        assert_eq!(Scope::from_flags(None, None, None), Ok(Scope::None));
        assert!(matches!(
            Scope::from_flags(Some("all"), None, m()),
            Ok(Scope::AllBut(_))
        ));
        assert_eq!(
            Scope::from_flags(Some("all"), Some(3), m()),
            Err(ScopeError::VersionBesideAll)
        );
        assert_eq!(
            Scope::from_flags(Some("EndTxn"), None, m()),
            Err(ScopeError::NoVersion)
        );
        match Scope::from_flags(Some("EndTxn"), Some(3), m()) {
            Ok(Scope::One(mutant)) => assert_eq!((mutant.api, mutant.version), (ApiKey::EndTxn, 3)),
            other => panic!("{other:?}"),
        }
        let e = Scope::from_flags(Some("EndTx"), Some(3), m()).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("--api 'EndTx': kconform knows all, "),
            "{e}"
        );
    }
    use kafka_protocol::messages::{EndTxnResponse, ResponseHeader};
    use kafka_protocol::protocol::Encodable;

    fn end_txn_v3() -> Vec<u8> {
        let mut buf = BytesMut::new();
        ResponseHeader::default()
            .with_correlation_id(5)
            .encode(&mut buf, 1)
            .unwrap();
        EndTxnResponse::default()
            .with_error_code(48)
            .encode(&mut buf, 3)
            .unwrap();
        buf.to_vec()
    }

    /// The header-version mutant frames an answer as the other header version would: Apache's
    /// parser then refuses it with that diagnosis, and reading past it gives the answer back.
    #[test]
    fn the_header_version_mutant_is_read_past_to_the_same_answer() {
        let frame = end_txn_v3();
        let m: Mutation = "header-version".parse().unwrap();
        assert_eq!(m.to_string(), "header-version");
        let Answer::Send(v0) = apply(&m, ApiKey::EndTxn, 3, &frame) else {
            panic!("sent")
        };
        assert_eq!(v0.len(), frame.len() - 1);
        let malformed = frame::decode(ApiKey::EndTxn, 3, 5, &v0).unwrap_err();
        let (past, header) = frame::read_past(ApiKey::EndTxn, 3, &malformed).unwrap();
        assert_eq!(header, 0);
        assert_eq!(
            past.values,
            frame::decode(ApiKey::EndTxn, 3, 5, &frame).unwrap().values
        );
        // And the other way: an EndTxn v0 answer (header v0 due) given a tagged-field byte.
        let Answer::Send(v1_of_v0) = apply(&m, ApiKey::EndTxn, 0, &v0) else {
            panic!("sent")
        };
        assert_eq!(v1_of_v0[4], 0);
        assert_eq!(v1_of_v0.len(), v0.len() + 1);
    }

    #[test]
    fn mutants_cover_every_boundary_code_and_integer_and_round_trip_as_text() {
        let frame = end_txn_v3();
        let all = mutants(ApiKey::EndTxn, 3, &frame).unwrap();
        let names: Vec<String> = all.iter().map(|m| m.mutation.to_string()).collect();
        assert_eq!(
            names,
            [
                "insert:header.correlation_id",
                "insert:header.(tagged fields)",
                "insert:throttle_time_ms",
                "insert:error_code",
                "insert:(tagged fields)",
                "insert:end",
                "drop-last-byte",
                "cut:error_code",
                "error-code:error_code",
                "add-one:throttle_time_ms",
                "add-one:error_code",
                "correlation",
                "close",
                "stall"
            ]
        );
        for n in &names {
            assert_eq!(&n.parse::<Mutation>().unwrap().to_string(), n);
        }
        assert!("explode".parse::<Mutation>().is_err());
        for e in frame::Equivalent::ALL {
            let m: Mutation = e.name().parse().unwrap();
            assert_eq!(m, Mutation::Equivalent(e));
            assert_eq!(m.to_string(), e.name());
        }
    }

    #[test]
    fn the_answer_log_keeps_distinct_answers_within_its_bounds() {
        let mut log = AnswerLog::default();
        log.note(26, 3, 1, &[0, 0, 0, 1, 9]);
        log.note(26, 3, 2, &[0, 0, 0, 2, 9]);
        log.note(26, 2, 3, &[0, 0, 0, 3, 9]);
        assert_eq!(
            log.kept.len(),
            2,
            "the same answer with another correlation id is one"
        );
        // 1 MiB answers, each different: the byte bound stops them, not the count.
        let mut big = vec![0u8; 1024 * 1024];
        let room = (KEPT_BYTES - log.bytes) / (2 * big.len());
        for i in 0..100u8 {
            big[4] = i;
            log.note(1, 12, i32::from(i), &big);
        }
        assert_eq!(log.kept.len(), 2 + room);
        assert!(room > 0 && room < 100);
        assert!(log.bytes <= KEPT_BYTES);
    }

    #[test]
    fn each_mutation_changes_the_bytes_it_names() {
        let frame = end_txn_v3();
        let send = |m: &str| match apply(&m.parse().unwrap(), ApiKey::EndTxn, 3, &frame) {
            Answer::Send(f) => f,
            other => panic!("{other:?}"),
        };
        assert_eq!(send("insert:error_code")[9], INSERTED);
        assert_eq!(send("insert:end").len(), frame.len() + 1);
        assert_eq!(send("drop-last-byte").len(), frame.len() - 1);
        assert_eq!(send("cut:error_code").len(), 10);
        assert_eq!(&send("error-code:error_code")[9..11], &99i16.to_be_bytes());
        assert_eq!(&send("error-code:*")[9..11], &99i16.to_be_bytes());
        assert_eq!(&send("error-code:*=15")[9..11], &15i16.to_be_bytes());
        assert!("error-code:*=x".parse::<Mutation>().is_err());
        assert_eq!(&send("add-one:error_code")[9..11], &49i16.to_be_bytes());
        assert_eq!(&send("correlation")[..4], &6i32.to_be_bytes());
        assert_eq!(send("add-one:no_such_field"), frame);
        assert_eq!(
            apply(&Mutation::Close, ApiKey::EndTxn, 3, &frame),
            Answer::Close
        );
    }

    /// A nullable string made null reads back as null, in a flexible version's compact form
    /// and a classic one's, and everything after it is read as before.
    #[test]
    fn null_text_makes_a_message_null_and_leaves_the_rest() {
        use kafka_protocol::messages::{BrokerId, FindCoordinatorResponse};
        use kafka_protocol::protocol::StrBytes;
        for (version, header) in [(3, 1), (1, 0)] {
            let mut buf = BytesMut::new();
            ResponseHeader::default()
                .with_correlation_id(5)
                .encode(&mut buf, header)
                .unwrap();
            FindCoordinatorResponse::default()
                .with_error_message(Some(StrBytes::from_static_str("NONE")))
                .with_node_id(BrokerId(2))
                .with_port(9092)
                .encode(&mut buf, version)
                .unwrap();
            let m: Mutation = "null-text:error_message".parse().unwrap();
            assert_eq!(m.to_string(), "null-text:error_message");
            let Answer::Send(out) = apply(&m, ApiKey::FindCoordinator, version, &buf) else {
                panic!("sent")
            };
            let read = frame::decode(ApiKey::FindCoordinator, version, 5, &out)
                .unwrap_or_else(|e| panic!("v{version}: {e:?}"));
            let body = format!("{read:?}");
            assert!(!body.contains("NONE"), "v{version}: {body}");
            assert!(body.contains("9092"), "v{version}: {body}");
        }
    }
}
