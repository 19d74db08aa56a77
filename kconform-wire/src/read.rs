//! Reading a frame field by field along Apache's schema exactly as Apache's generated parsers
//! read it (kafka-clients 3.7.2's `*Data.read`, `ByteUtils.readUnsignedVarint`,
//! `Readable.readString`), so that kconform accepts what every Java client accepts and refuses
//! what it refuses:
//! - a varint takes at most 5 bytes, and bits past the 32nd are dropped;
//! - any negative length or count of a nullable field reads as null; of another, it is refused;
//! - a string longer than 32,767 bytes is refused; bytes that are not UTF-8 read with
//!   replacement characters;
//! - a boolean is true for any byte but 0;
//! - a tagged-field count that reads as a negative int means no tagged fields up to Apache 4.1;
//!   4.2's parsers refuse it ([`Parser`]); tags may come in any order and more than once (the
//!   last counts); a known tag's value is read by its type, whatever size precedes it; an
//!   unknown tag's bytes are kept unread.
//!
//! What it read is given back three ways: every field's bytes ([`Span`], where a mutation can
//! put a byte), the same values in the canonical encoding (what kafka-protocol then decodes:
//! minimal varints, one null marker, valid UTF-8, tags in order and once, unknown tags left
//! out), and a [`Note`] for each thing that is unusual but valid.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::schema::{Field, Kind, Message};

/// One field's bytes in a frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Span {
    /// Field path (`topics[0].name`; an array's own span is its count).
    pub path: String,
    /// First byte.
    pub start: usize,
    /// One past the last byte.
    pub end: usize,
    /// A fixed-width integer (int8 to int64): a value that can be changed in place.
    pub integer: bool,
}

/// Where and why a read stopped: what Apache's parser refuses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WalkError {
    /// The field being read.
    pub path: String,
    /// The byte where it starts or where the problem is.
    pub offset: usize,
    /// What is wrong.
    pub problem: String,
}

/// Something unusual in a frame that Apache's parser reads all the same: a tagged field at its
/// default, an unknown tag, a varint longer than it needs to be. Never a verdict by itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Note {
    /// The field (`topics[0].topic_config_error_code`, `(tagged fields)`).
    pub field: String,
    /// The byte of the frame (after its size) where it is.
    pub offset: usize,
    /// What is unusual, and how Apache reads it.
    pub what: String,
}

/// What a read gives back.
#[derive(Debug, Clone, Default)]
pub struct Read {
    /// Every field's bytes.
    pub spans: Vec<Span>,
    /// Where the read ended.
    pub end: usize,
    /// The same values in the canonical encoding.
    pub canonical: Vec<u8>,
    /// The unusual but valid encodings met.
    pub notes: Vec<Note>,
}

/// A way to write the same values in other bytes, which Apache's parser reads as it reads the
/// canonical encoding: what `kconform proxy`'s equivalent mutants do to every answer, and what
/// the differential test holds against Apache's parser. None may change a verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Equivalent {
    /// Every tagged field the version knows written, at its default where the frame leaves it
    /// out (as brokers not written in Java often do).
    TagsAtDefault,
    /// An unknown tag (`UNKNOWN_TAG`, two bytes) in every tagged-field section.
    UnknownTag,
    /// Every varint (compact lengths and counts, tag counts, tags and sizes) in five bytes.
    LongVarints,
}

impl Equivalent {
    /// Each of them.
    pub const ALL: [Equivalent; 3] = [
        Equivalent::TagsAtDefault,
        Equivalent::UnknownTag,
        Equivalent::LongVarints,
    ];

    /// The name `kconform proxy --mutation` takes (`tags-at-default`).
    pub fn name(self) -> &'static str {
        match self {
            Equivalent::TagsAtDefault => "tags-at-default",
            Equivalent::UnknownTag => "unknown-tag",
            Equivalent::LongVarints => "long-varints",
        }
    }
}

/// The tag [`Equivalent::UnknownTag`] adds: no 3.7 message has one this high.
const UNKNOWN_TAG: u32 = 9999;

/// Which release's generated parsers a read follows. They changed once in what they accept
/// on the transaction surface: from 4.2 a tagged-field count that reads as a negative int is
/// refused ("Invalid negative number of tagged fields"), which 3.7 to 4.1 read as no tagged
/// fields (each release's kafka-clients given the same frames, `KconformFrames`). A request a
/// 4.2 broker closes on for that is malformed to it, and well-formed to kaas, which claims 3.7.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Parser {
    /// Apache 3.7 to 4.1's: the parser kaas's claim (3.7.2) is judged by.
    #[default]
    Until4_1,
    /// Apache 4.2's and later.
    From4_2,
}

impl Parser {
    /// The parser of Apache `major`.`minor`.
    pub fn of_release(major: u8, minor: u8) -> Parser {
        match (major, minor) >= (4, 2) {
            true => Parser::From4_2,
            false => Parser::Until4_1,
        }
    }
}

/// Reads `bytes[from..]` as `message` at `version`, as Apache 3.7's parser reads it.
pub fn read(message: &Message, version: i16, bytes: &[u8], from: usize) -> Result<Read, WalkError> {
    read_as(message, version, bytes, from, Parser::default())
}

/// Reads as [`read`] does, as `parser` reads it.
pub fn read_as(
    message: &Message,
    version: i16,
    bytes: &[u8],
    from: usize,
    parser: Parser,
) -> Result<Read, WalkError> {
    read_message(message, version, bytes, from, None, parser)
}

/// Reads as [`read`] does, writing what it read in the canonical encoding or, with `style`,
/// in that equivalent one.
pub fn read_styled(
    message: &Message,
    version: i16,
    bytes: &[u8],
    from: usize,
    style: Option<Equivalent>,
) -> Result<Read, WalkError> {
    read_message(message, version, bytes, from, style, Parser::default())
}

/// The one reading of a message every entry point above asks for.
fn read_message(
    message: &Message,
    version: i16,
    bytes: &[u8],
    from: usize,
    style: Option<Equivalent>,
    parser: Parser,
) -> Result<Read, WalkError> {
    let mut r = Reader::new(bytes, from, version, message.flexible.contains(version));
    r.style = style;
    r.parser = parser;
    r.fields("", &message.fields)?;
    Ok(r.finish())
}

/// Reads a tagged-field section alone (a count, then tag, size and value each) at
/// `bytes[from..]`, as a flexible request header ends, as `parser` reads it.
pub fn read_tagged_section(
    bytes: &[u8],
    from: usize,
    path: &str,
    parser: Parser,
) -> Result<Read, WalkError> {
    let mut r = Reader::new(bytes, from, 0, true);
    r.parser = parser;
    r.tags(path, &[])?;
    Ok(r.finish())
}

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
    version: i16,
    flexible: bool,
    spans: Vec<Span>,
    out: Vec<u8>,
    notes: Vec<Note>,
    style: Option<Equivalent>,
    parser: Parser,
}

fn join(prefix: &str, name: &str) -> String {
    match prefix.is_empty() {
        true => name.to_owned(),
        false => format!("{prefix}.{name}"),
    }
}

/// How many bytes the shortest varint of `v` takes.
fn varint_len(v: u32) -> usize {
    match v {
        0..=0x7f => 1,
        0x80..=0x3fff => 2,
        0x4000..=0x1f_ffff => 3,
        0x20_0000..=0x0fff_ffff => 4,
        _ => 5,
    }
}

/// Appends the shortest varint of `v`.
fn put_uvarint(out: &mut Vec<u8>, mut v: u32) {
    while v >= 0x80 {
        out.push((v as u8 & 0x7f) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Appends a length or count in the canonical form: compact (n + 1, 0 for null) in flexible
/// versions, else an int16 (strings) or an int32 (-1 for null).
fn put_length(out: &mut Vec<u8>, flexible: bool, wide: bool, n: Option<usize>) {
    match (flexible, wide) {
        (true, _) => put_uvarint(out, n.map_or(0, |n| n as u32 + 1)),
        (false, true) => out.extend(n.map_or(-1, |n| n as i32).to_be_bytes()),
        (false, false) => out.extend(n.map_or(-1, |n| n as i16).to_be_bytes()),
    }
}

impl<'a> Reader<'a> {
    fn new(bytes: &'a [u8], from: usize, version: i16, flexible: bool) -> Reader<'a> {
        Reader {
            bytes,
            pos: from,
            version,
            flexible,
            spans: Vec::new(),
            out: Vec::new(),
            notes: Vec::new(),
            style: None,
            parser: Parser::default(),
        }
    }

    /// A varint in the style asked for: the shortest, or five bytes.
    fn put_varint(&mut self, v: u32) {
        if self.style != Some(Equivalent::LongVarints) {
            return put_uvarint(&mut self.out, v);
        }
        for i in 0..4 {
            self.out.push((v >> (7 * i)) as u8 & 0x7f | 0x80);
        }
        self.out.push((v >> 28) as u8);
    }

    fn put_len(&mut self, wide: bool, n: Option<usize>) {
        match self.flexible {
            true => self.put_varint(n.map_or(0, |n| n as u32 + 1)),
            false => put_length(&mut self.out, false, wide, n),
        }
    }

    fn finish(self) -> Read {
        Read {
            spans: self.spans,
            end: self.pos,
            canonical: self.out,
            notes: self.notes,
        }
    }

    fn fail<T>(&self, path: &str, offset: usize, problem: String) -> Result<T, WalkError> {
        Err(WalkError {
            path: path.to_owned(),
            offset,
            problem,
        })
    }

    fn note(&mut self, field: &str, offset: usize, what: String) {
        self.notes.push(Note {
            field: field.to_owned(),
            offset,
            what,
        });
    }

    fn left(&self) -> usize {
        self.bytes.len() - self.pos
    }

    fn take(&mut self, path: &str, n: usize) -> Result<&'a [u8], WalkError> {
        let left = self.left();
        if n > left {
            let what = match left {
                0 => "the frame ends here".to_owned(),
                _ => format!("the frame ends {left} byte(s) into it"),
            };
            return self.fail(path, self.pos, format!("needs {n} byte(s); {what}"));
        }
        let start = self.pos;
        self.pos += n;
        Ok(&self.bytes[start..self.pos])
    }

    fn span(&mut self, path: &str, start: usize, integer: bool) {
        self.spans.push(Span {
            path: path.to_owned(),
            start,
            end: self.pos,
            integer,
        });
    }

    /// `ByteUtils.readUnsignedVarint`: at most 5 bytes, the fifth without a continuation bit;
    /// what lies past 32 bits is dropped.
    fn uvarint(&mut self, path: &str) -> Result<u32, WalkError> {
        let start = self.pos;
        let mut wide: u64 = 0;
        for i in 0..5 {
            let b = self.take(path, 1)?[0];
            if i == 4 && b & 0x80 != 0 {
                return self.fail(path, start, "varint longer than 5 bytes".into());
            }
            wide |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                let value = wide as u32;
                let used = self.pos - start;
                if wide > u64::from(u32::MAX) {
                    self.note(
                        path,
                        start,
                        format!("varint {wide} is past 32 bits: Java keeps the low 32, {value}"),
                    );
                } else if used > varint_len(value) {
                    self.note(
                        path,
                        start,
                        format!(
                            "varint {value} in {used} bytes, where {} would do",
                            varint_len(value)
                        ),
                    );
                }
                return Ok(value);
            }
        }
        unreachable!("the fifth byte returns or fails")
    }

    fn int(&mut self, path: &str, n: usize) -> Result<i32, WalkError> {
        let b = self.take(path, n)?;
        Ok(match n {
            2 => i16::from_be_bytes([b[0], b[1]]).into(),
            _ => i32::from_be_bytes([b[0], b[1], b[2], b[3]]),
        })
    }

    /// A length or count as the generated parsers read it: `readUnsignedVarint() - 1` (int
    /// arithmetic) in flexible versions, else an int16 (strings) or int32; negative is null.
    /// `None` for null.
    fn length(
        &mut self,
        path: &str,
        wide: bool,
        nullable: bool,
    ) -> Result<Option<usize>, WalkError> {
        let start = self.pos;
        let n: i32 = match self.flexible {
            true => (self.uvarint(path)? as i32).wrapping_sub(1),
            false => self.int(path, if wide { 4 } else { 2 })?,
        };
        if n >= 0 {
            return Ok(Some(n as usize));
        }
        if !nullable {
            return self.fail(
                path,
                start,
                format!(
                    "null (length {n}), which v{} does not allow here",
                    self.version
                ),
            );
        }
        if n != -1 {
            self.note(
                path,
                start,
                format!("length {n} reads as null (Java reads any negative length so)"),
            );
        }
        Ok(None)
    }

    fn fields(&mut self, prefix: &str, fields: &[Field]) -> Result<(), WalkError> {
        for f in fields {
            if !f.versions.contains(self.version) {
                continue;
            }
            let tagged = f.tagged.is_some_and(|(_, v)| v.contains(self.version));
            if self.flexible && tagged {
                continue;
            }
            self.value(
                &join(prefix, &f.name),
                &f.kind,
                f.nullable.contains(self.version),
            )?;
        }
        if self.flexible {
            self.tags(prefix, fields)?;
        }
        Ok(())
    }

    fn value(&mut self, path: &str, kind: &Kind, nullable: bool) -> Result<(), WalkError> {
        let start = self.pos;
        let fixed = match kind {
            Kind::Bool | Kind::Int8 => Some(1),
            Kind::Int16 | Kind::Uint16 => Some(2),
            Kind::Int32 => Some(4),
            Kind::Int64 | Kind::Float64 => Some(8),
            Kind::Uuid => Some(16),
            _ => None,
        };
        if let Some(n) = fixed {
            let b = self.take(path, n)?;
            match kind {
                Kind::Bool => {
                    if b[0] > 1 {
                        self.note(
                            path,
                            start,
                            format!("boolean byte {:02x}, which Java reads as true", b[0]),
                        );
                    }
                    self.out.push(u8::from(b[0] != 0));
                }
                _ => self.out.extend_from_slice(b),
            }
            let integer = matches!(
                kind,
                Kind::Int8 | Kind::Int16 | Kind::Uint16 | Kind::Int32 | Kind::Int64
            );
            self.span(path, start, integer);
            return Ok(());
        }
        match kind {
            Kind::String => {
                let len = self.length(path, false, nullable)?;
                let text = match len {
                    Some(n) if n > 0x7fff => {
                        return self.fail(
                            path,
                            start,
                            format!("string length {n} is over 32767, which Java refuses"),
                        )
                    }
                    Some(n) => {
                        let bytes = self.take(path, n)?;
                        match crate::java_utf8::decode(bytes) {
                            None => Some(String::from_utf8_lossy(bytes)),
                            Some(replaced) => {
                                self.note(
                                    path,
                                    start,
                                    "not UTF-8: Java reads it with replacement characters".into(),
                                );
                                Some(std::borrow::Cow::Owned(replaced))
                            }
                        }
                    }
                    None => None,
                };
                self.put_len(false, text.as_ref().map(|t| t.len()));
                if let Some(t) = text {
                    self.out.extend_from_slice(t.as_bytes());
                }
                self.span(path, start, false);
            }
            Kind::Bytes | Kind::Records => {
                let len = self.length(path, true, nullable)?;
                self.put_len(true, len);
                if let Some(n) = len {
                    let b = self.take(path, n)?;
                    self.out.extend_from_slice(b);
                }
                self.span(path, start, false);
            }
            Kind::Array(inner) => {
                let count = self.length(path, true, nullable)?;
                self.put_len(true, count);
                let Some(count) = count else {
                    self.span(path, start, false);
                    return Ok(());
                };
                // As the generated parsers do: a count past the bytes left is refused before
                // anything is allocated.
                let left = self.left();
                if count > left {
                    return self.fail(
                        path,
                        start,
                        format!("count {count}, but only {left} byte(s) follow"),
                    );
                }
                self.span(&format!("{path} (count)"), start, false);
                for i in 0..count {
                    self.value(&format!("{path}[{i}]"), inner, false)?;
                }
            }
            Kind::Struct(fields) => {
                // A nullable structure follows a marker byte, as Apache's generated code writes
                // and reads it: negative for null; otherwise the structure.
                if nullable {
                    let marker = self.take(path, 1)?[0] as i8;
                    let canonical = if marker < 0 { -1i8 } else { 1 };
                    self.out.push(canonical as u8);
                    if marker != canonical {
                        self.note(
                            path,
                            start,
                            format!(
                                "null marker {marker}: Java reads it as {}",
                                if marker < 0 { "null" } else { "present" }
                            ),
                        );
                    }
                    if marker < 0 {
                        self.span(path, start, false);
                        return Ok(());
                    }
                }
                self.fields(path, fields)?
            }
            _ => unreachable!("fixed widths handled above"),
        }
        Ok(())
    }

    /// The tagged fields of a structure: a count, then (tag, size, value) each.
    fn tags(&mut self, prefix: &str, fields: &[Field]) -> Result<(), WalkError> {
        let section = join(prefix, "(tagged fields)");
        let start = self.pos;
        let count = self.uvarint(&section)? as i32;
        if count < 0 && self.parser == Parser::From4_2 {
            return self.fail(
                &section,
                start,
                format!("tagged-field count {count} (as Java's int): Apache 4.2 and later refuse a negative count"),
            );
        }
        if count < 0 {
            self.note(
                &section,
                start,
                format!("tagged-field count {count} (as Java's int): Java reads no tagged field"),
            );
        }
        let count = count.max(0) as usize;
        // Each tagged field takes two bytes at least: a count past the bytes left cannot be
        // read, by Apache's parser or any other.
        if count > self.left() {
            return self.fail(
                &section,
                start,
                format!(
                    "{count} tagged fields, but only {} byte(s) follow",
                    self.left()
                ),
            );
        }
        self.span(&section, start, false);
        let mut known: BTreeMap<u32, Vec<u8>> = BTreeMap::new();
        let mut highest: Option<u32> = None;
        for _ in 0..count {
            let at = self.pos;
            let tag = self.uvarint(&section)?;
            let size = self.uvarint(&section)?;
            match highest {
                Some(h) if tag == h || known.contains_key(&tag) => self.note(
                    &section,
                    at,
                    format!("tag {tag} again: Java reads each, and the last counts"),
                ),
                Some(h) if tag < h => self.note(
                    &section,
                    at,
                    format!("tag {tag} after tag {h}: out of order, which Java reads all the same"),
                ),
                _ => {}
            }
            highest = highest.max(Some(tag));
            let field = fields.iter().find(|f| {
                f.versions.contains(self.version)
                    && f.tagged
                        .is_some_and(|(t, v)| t == tag && v.contains(self.version))
            });
            let Some(f) = field else {
                let path = join(prefix, &format!("(tag {tag})"));
                // The generated parsers know each tag a field of the structure ever has, and
                // refuse it in a version that lacks the field.
                if let Some(f) = fields
                    .iter()
                    .find(|f| f.tagged.is_some_and(|(t, _)| t == tag))
                {
                    return self.fail(
                        &path,
                        at,
                        format!(
                            "tag {tag} is {}'s, which v{} does not have (Java refuses it)",
                            f.name, self.version
                        ),
                    );
                }
                if (size as i32) < 0 {
                    return self.fail(
                        &path,
                        at,
                        format!("tagged size {} is negative", size as i32),
                    );
                }
                self.take(&path, size as usize)?;
                self.span(&path, at, false);
                self.note(
                    &path,
                    at,
                    format!("unknown tag {tag} ({size} byte(s)), which Java keeps unread"),
                );
                continue;
            };
            let path = join(prefix, &f.name);
            let value_start = self.pos;
            let outer = std::mem::take(&mut self.out);
            let walked = self.value(&path, &f.kind, f.nullable.contains(self.version));
            let value = std::mem::replace(&mut self.out, outer);
            walked?;
            let took = self.pos - value_start;
            if took != size as usize {
                self.note(
                    &path,
                    at,
                    format!("tagged size {size}, but its value takes {took}: Java reads the value by its type and ignores the size"),
                );
            }
            if default_bytes(f, self.version, self.flexible) == value {
                self.note(
                    &path,
                    at,
                    "present at its default value, which Apache's writer leaves out".into(),
                );
            }
            known.insert(tag, value);
        }
        match self.style {
            Some(Equivalent::TagsAtDefault) => {
                for f in fields.iter().filter(|f| f.versions.contains(self.version)) {
                    if let Some((tag, _)) = f.tagged.filter(|(_, v)| v.contains(self.version)) {
                        known
                            .entry(tag)
                            .or_insert_with(|| default_bytes(f, self.version, self.flexible));
                    }
                }
            }
            Some(Equivalent::UnknownTag) => {
                known.insert(UNKNOWN_TAG, vec![0xab, 0xcd]);
            }
            _ => {}
        }
        self.put_varint(known.len() as u32);
        for (tag, value) in known {
            self.put_varint(tag);
            self.put_varint(value.len() as u32);
            self.out.extend(value);
        }
        Ok(())
    }
}

/// A field's default in the canonical encoding: what a parser reads when a tagged field is
/// absent (Apache's `default`, else zero, false, empty, or null where the default says null).
fn default_bytes(f: &Field, version: i16, flexible: bool) -> Vec<u8> {
    let mut out = Vec::new();
    let given = f.default.as_deref().unwrap_or("");
    let null = given == "null" && f.nullable.contains(version);
    // A nullable structure present by default still follows its marker byte.
    if matches!(f.kind, Kind::Struct(_)) && f.nullable.contains(version) && !null {
        out.push(1);
    }
    put_default(&mut out, &f.kind, given, null, version, flexible);
    out
}

fn put_default(
    out: &mut Vec<u8>,
    kind: &Kind,
    given: &str,
    null: bool,
    version: i16,
    flexible: bool,
) {
    let int = || -> i64 {
        match given.strip_prefix("0x") {
            Some(hex) => i64::from_str_radix(hex, 16).unwrap_or(0),
            None => given.parse().unwrap_or(0),
        }
    };
    match kind {
        Kind::Bool => out.push(u8::from(given == "true")),
        Kind::Int8 => out.push(int() as i8 as u8),
        Kind::Int16 | Kind::Uint16 => out.extend((int() as i16).to_be_bytes()),
        Kind::Int32 => out.extend((int() as i32).to_be_bytes()),
        Kind::Int64 => out.extend(int().to_be_bytes()),
        Kind::Float64 => out.extend(given.parse::<f64>().unwrap_or(0.0).to_be_bytes()),
        Kind::Uuid => out.extend([0u8; 16]),
        Kind::String => {
            let text = (!null).then_some(given);
            put_length(out, flexible, false, text.map(str::len));
            out.extend(text.unwrap_or_default().as_bytes());
        }
        Kind::Bytes | Kind::Records | Kind::Array(_) => {
            put_length(out, flexible, true, (!null).then_some(0));
        }
        Kind::Struct(_) if null => out.push(0xff),
        Kind::Struct(fields) => {
            for f in fields {
                let tagged = f.tagged.is_some_and(|(_, v)| v.contains(version));
                if f.versions.contains(version) && !(flexible && tagged) {
                    out.extend(default_bytes(f, version, flexible));
                }
            }
            if flexible {
                out.push(0);
            }
        }
    }
}
