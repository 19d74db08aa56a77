//! Mutations of a request frame: structure-aware ones, which find the fields along Apache's
//! schema ([`super::shape`]) and change a value (integers to their edges, booleans to bytes
//! other than 0 and 1), a length or a count (null, negative, one off, huge, an over-long
//! varint), the tagged fields (an unknown tag added, a huge count), the version or the API
//! key in the header; and byte-wise ones (a bit flipped, a byte set, bytes cut, added,
//! removed or repeated). Each says what it did, for the finding's file.

use crate::read::Span;
use crate::seeds::APIS;
use crate::shape::{self, Parsed};
use crate::Rng;

/// The largest frame a mutation makes.
const MAX_FRAME: usize = 64 * 1024;

/// Booleans of the six requests: a byte Apache reads as true unless it is 0.
const BOOLEANS: [&str; 3] = ["committed", "verify_only", "transaction_result"];

/// Mutates `frame` one to three times (or not at all, one time in eight: the seed itself is
/// a request with edge values); what was done, in words.
pub fn mutate(frame: &mut Vec<u8>, rng: &mut Rng) -> Vec<String> {
    if rng.one_in(8) {
        return Vec::new();
    }
    mutate_along(frame, rng, |f| shape::parse(f).ok())
}

/// Mutates `frame` one to three times, finding its fields with `parse` (a request's shape, or
/// an answer's fields along its response schema, as the differential test of Apache's parser
/// mutates answers); what was done, in words.
pub fn mutate_along(
    frame: &mut Vec<u8>,
    rng: &mut Rng,
    parse: impl Fn(&[u8]) -> Option<Parsed>,
) -> Vec<String> {
    let mut done = Vec::new();
    for _ in 0..1 + rng.below(3) {
        let parsed = parse(frame);
        let what = match parsed {
            Some(p) if !rng.one_in(3) => structural(frame, &p, rng),
            _ => bytewise(frame, rng),
        };
        done.push(what);
        frame.truncate(MAX_FRAME);
    }
    done
}

/// `v` as an unsigned varint (compact lengths and counts, tags).
pub fn uvarint(mut v: u32) -> Vec<u8> {
    let mut out = Vec::new();
    while v >= 0x80 {
        out.push((v as u8 & 0x7f) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
    out
}

/// The unsigned varint `bytes` start with, and how many bytes it takes.
pub fn read_uvarint(bytes: &[u8]) -> Option<(u32, usize)> {
    let mut v: u64 = 0;
    for (i, b) in bytes.iter().take(5).enumerate() {
        v |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return Some((v as u32, i + 1));
        }
    }
    None
}

/// An edge value of an integer `width` bytes wide, big-endian.
fn edge(width: usize, rng: &mut Rng) -> (i64, Vec<u8>) {
    let (min, max) = match width {
        1 => (i64::from(i8::MIN), i64::from(i8::MAX)),
        2 => (i64::from(i16::MIN), i64::from(i16::MAX)),
        4 => (i64::from(i32::MIN), i64::from(i32::MAX)),
        _ => (i64::MIN, i64::MAX),
    };
    let v = match rng.below(8) {
        0 => min,
        1 => max,
        2 => -1,
        3 => 0,
        4 => 1,
        5 => max - 1,
        6 => -2,
        _ => rng.below(1000) as i64,
    };
    (v, v.to_be_bytes()[8 - width..].to_vec())
}

/// One change along the schema.
fn structural(frame: &mut Vec<u8>, p: &Parsed, rng: &mut Rng) -> String {
    let s: &Span = &p.spans[rng.below(p.spans.len() as u64) as usize];
    let (start, end) = (s.start, s.end);
    let name = s.path.rsplit('.').next().unwrap_or_default();
    if s.path == "header.request_api_version" {
        let top = shape::highest_version(p.api);
        let v = match rng.below(6) {
            0 => p.version - 1,
            1 => p.version + 1,
            2 => top + 1,
            3 => -1,
            4 => i16::MAX,
            _ => rng.below(top as u64 + 1) as i16,
        };
        frame[2..4].copy_from_slice(&v.to_be_bytes());
        return format!("header version {} -> {v}", p.version);
    }
    if s.path == "header.request_api_key" {
        let key = match rng.one_in(4) {
            true => rng.below(80) as i16,
            false => APIS[rng.below(6) as usize] as i16,
        };
        frame[0..2].copy_from_slice(&key.to_be_bytes());
        return format!("header API key {} -> {key}", p.api as i16);
    }
    if s.integer {
        let (v, bytes) = edge(end - start, rng);
        frame[start..end].copy_from_slice(&bytes);
        return format!("{} = {v}", s.path);
    }
    if BOOLEANS.contains(&name) && end - start == 1 {
        let b = [2u8, 0x80, 0xff][rng.below(3) as usize];
        frame[start] = b;
        return format!("{} = byte {b:#04x}", s.path);
    }
    if s.path.ends_with("(tagged fields)") {
        return tagged(frame, s, rng);
    }
    if s.path.contains("(tag ") {
        return bytewise(frame, rng);
    }
    length(frame, p, s, rng)
}

/// An unknown tag added to an empty tagged-field section, or a count past the bytes left.
fn tagged(frame: &mut Vec<u8>, s: &Span, rng: &mut Rng) -> String {
    if frame.get(s.start) == Some(&0) && !rng.one_in(4) {
        let tag = [0u32, 1, 7, 1000, rng.below(1 << 20) as u32][rng.below(5) as usize];
        let size = [0usize, 1, 4, 20][rng.below(4) as usize];
        let mut section = vec![1];
        section.extend(uvarint(tag));
        section.extend(uvarint(size as u32));
        section.extend((0..size).map(|_| rng.next_u64() as u8));
        frame.splice(s.start..s.start + 1, section);
        return format!("{}: unknown tag {tag} of {size} bytes added", s.path);
    }
    let count = [0x7fff_ffffu32, u32::MAX, 200][rng.below(3) as usize];
    frame.splice(s.start..s.end, uvarint(count));
    format!("{}: count {count}", s.path)
}

/// A length or a count rewritten: null, negative, one off, huge, or over-long.
fn length(frame: &mut Vec<u8>, p: &Parsed, s: &Span, rng: &mut Rng) -> String {
    let fixed = s.path.starts_with("header.") || !p.flexible;
    if fixed {
        let width = match s.path.ends_with("(count)") {
            true => 4,
            false => 2,
        };
        if s.start + width > frame.len() {
            return bytewise(frame, rng);
        }
        let old = match width {
            4 => i64::from(i32::from_be_bytes(
                frame[s.start..s.start + 4].try_into().expect("4 bytes"),
            )),
            _ => i64::from(i16::from_be_bytes([frame[s.start], frame[s.start + 1]])),
        };
        let max = match width {
            4 => i64::from(i32::MAX),
            _ => i64::from(i16::MAX),
        };
        let new = [-1, -2, 0, old + 1, old - 1, max, 0x1_0000.min(max)][rng.below(7) as usize];
        frame[s.start..s.start + width].copy_from_slice(&new.to_be_bytes()[8 - width..]);
        return format!("{}: length {old} -> {new}", s.path);
    }
    let Some((raw, n)) = read_uvarint(&frame[s.start..]) else {
        return bytewise(frame, rng);
    };
    if raw < 0x80 && rng.one_in(5) {
        frame.splice(s.start..s.start + n, [raw as u8 | 0x80, 0]);
        return format!("{}: length {raw} as a two-byte varint", s.path);
    }
    let new = [
        0,
        1,
        raw.wrapping_add(1),
        raw.saturating_sub(1),
        u32::MAX,
        0x7fff_ffff,
    ][rng.below(6) as usize];
    frame.splice(s.start..s.start + n, uvarint(new));
    format!("{}: compact length {raw} -> {new}", s.path)
}

/// One change that knows nothing of the schema.
fn bytewise(frame: &mut Vec<u8>, rng: &mut Rng) -> String {
    let len = frame.len();
    let at = |rng: &mut Rng| rng.below(len as u64 + 1) as usize;
    let random = |rng: &mut Rng, n: usize| (0..n).map(|_| rng.next_u64() as u8).collect::<Vec<_>>();
    match rng.below(7) {
        0 if len > 0 => {
            let (i, bit) = (rng.below(len as u64) as usize, rng.below(8));
            frame[i] ^= 1 << bit;
            format!("bit {bit} of byte {i} flipped")
        }
        1 if len > 0 => {
            let i = rng.below(len as u64) as usize;
            let b = [0u8, 1, 0x7f, 0x80, 0xff][rng.below(5) as usize];
            frame[i] = b;
            format!("byte {i} = {b:#04x}")
        }
        2 => {
            let n = at(rng);
            frame.truncate(n);
            format!("cut to {n} bytes")
        }
        3 => {
            let n = 1 + rng.below(16) as usize;
            frame.extend(random(rng, n));
            format!("{n} bytes appended")
        }
        4 => {
            let (i, n) = (at(rng), 1 + rng.below(8) as usize);
            frame.splice(i..i, random(rng, n));
            format!("{n} bytes inserted at {i}")
        }
        5 if len > 0 => {
            let i = rng.below(len as u64) as usize;
            let n = (1 + rng.below(8) as usize).min(len - i);
            frame.drain(i..i + n);
            format!("{n} bytes removed at {i}")
        }
        _ if len > 0 => {
            let i = rng.below(len as u64) as usize;
            let n = (1 + rng.below(16) as usize).min(len - i);
            let chunk = frame[i..i + n].to_vec();
            frame.splice(i..i, chunk);
            format!("{n} bytes at {i} repeated")
        }
        _ => {
            frame.push(0);
            "a zero byte appended".into()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seeds;

    /// Mutations keep most frames of the right API (so that handlers, not only decoders, are
    /// reached), make many malformed ones, and each kind of change happens.
    #[test]
    fn mutations_reach_every_kind_and_stay_bounded() {
        let mut rng = Rng::new(11);
        let (mut well_formed, mut malformed) = (0, 0);
        let mut said = String::new();
        for i in 0..3000 {
            let api = seeds::APIS[i % 6];
            let version = rng.below(shape::highest_version(api) as u64 + 1) as i16;
            let mut frame = seeds::draw(api, version, 1, &mut rng).unwrap().frame;
            for what in mutate(&mut frame, &mut rng) {
                said.push_str(&what);
                said.push('\n');
            }
            assert!(frame.len() <= MAX_FRAME);
            match shape::parse(&frame) {
                Ok(_) => well_formed += 1,
                Err(_) => malformed += 1,
            }
        }
        assert!(
            well_formed > 600 && malformed > 600,
            "{well_formed} / {malformed}"
        );
        for kind in [
            "header version",
            "header API key",
            "unknown tag",
            "compact length",
            ": length",
            "two-byte varint",
            "= byte",
            "flipped",
            "cut to",
            "appended",
            "inserted",
            "removed",
            "repeated",
        ] {
            assert!(said.contains(kind), "no '{kind}' mutation in 3000 frames");
        }
    }

    #[test]
    fn varints_round_trip() {
        for v in [0, 1, 127, 128, 300, u32::MAX] {
            assert_eq!(read_uvarint(&uvarint(v)), Some((v, uvarint(v).len())));
        }
        assert_eq!(read_uvarint(&[0x80; 6]), None);
    }
}
