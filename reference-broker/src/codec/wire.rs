//! Primitive Kafka wire types: fixed-width integers, booleans, (compact) strings and arrays,
//! unsigned varints and tagged-field sections.
//!
//! The reader follows Apache's generated readers where they are lenient (any non-zero boolean
//! byte is true; an overlong varint of at most five bytes is accepted) and is strict where they
//! are strict (strings above 32767 bytes, varints longer than five bytes). It also notes whether
//! what it read was in canonical form, so callers can tell when re-encoding will not give back
//! the same bytes. Every length and count is checked against the bytes left *before* anything
//! is allocated.

use super::error::{CodecError, Result};
use super::tagged::{put_uvarint, TaggedFields};
use super::CompactString;

/// Longest string Apache's generated code reads or writes.
pub const MAX_STRING_LEN: usize = 0x7fff;

/// A bounded cursor over one message body.
#[derive(Debug)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    flexible: bool,
    lenient: Leniency,
}

/// The non-canonical forms a reader accepted, because Apache's generated readers accept them.
/// Re-encoding a message read with any of these gives different bytes (the canonical form).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Leniency {
    /// A boolean byte other than 0 or 1 (read as true).
    pub boolean_byte: bool,
    /// A varint in more bytes than needed, or with fifth-byte bits beyond 32 (dropped).
    pub overlong_varint: bool,
    /// A nullable string whose length was negative but not -1 (read as null, as Apache does).
    pub negative_null_length: bool,
    /// A tagged-field count at or above 2^31 (a negative Java int: Apache reads no fields).
    pub negative_tag_count: bool,
    /// A string whose bytes are not UTF-8 (read with replacement characters, as Java's
    /// `new String(bytes, UTF_8)` reads it).
    pub lossy_utf8: bool,
}

impl Leniency {
    /// True when nothing non-canonical was read.
    #[inline]
    pub fn is_canonical(&self) -> bool {
        *self == Leniency::default()
    }
}

/// `bytes` as Java's `new String(bytes, UTF_8)` reads them, which is how Apache's parsers read
/// every string: each malformed sequence becomes one U+FFFD covering the longest start of a
/// valid sequence (Unicode's "maximal subpart"), except that Java takes `ed` with any
/// continuation byte as the start of a three-byte sequence and replaces an encoded surrogate
/// whole; a sequence cut short by the end is one U+FFFD. (Rust's `from_utf8_lossy` differs on
/// surrogates; the harness checks this reading against a JVM.)
fn java_lossy_utf8(bytes: &[u8]) -> CompactString {
    const REPLACEMENT: &str = "\u{fffd}";
    let mut out = String::with_capacity(bytes.len() + 8);
    let mut i = 0;
    while i < bytes.len() {
        // The sequence's length and the range its second byte must be in.
        let (len, second) = match bytes[i] {
            0x00..=0x7f => (1, 0..=0),
            0xc2..=0xdf => (2, 0x80..=0xbf),
            0xe0 => (3, 0xa0..=0xbf),
            0xe1..=0xef => (3, 0x80..=0xbf),
            0xf0 => (4, 0x90..=0xbf),
            0xf1..=0xf3 => (4, 0x80..=0xbf),
            0xf4 => (4, 0x80..=0x8f),
            _ => (0, 0..=0),
        };
        if len <= 1 {
            match len {
                1 => out.push(char::from(bytes[i])),
                _ => out.push_str(REPLACEMENT),
            }
            i += 1;
            continue;
        }
        let mut valid = 1;
        while valid < len && i + valid < bytes.len() {
            let b = bytes[i + valid];
            let fits = match valid {
                1 => second.contains(&b),
                _ => b & 0xc0 == 0x80,
            };
            if !fits {
                break;
            }
            valid += 1;
        }
        match std::str::from_utf8(&bytes[i..i + valid]) {
            Ok(whole) if valid == len => out.push_str(whole),
            _ => out.push_str(REPLACEMENT),
        }
        i += match valid < len && i + valid == bytes.len() {
            true => bytes.len() - i,
            false => valid,
        };
    }
    CompactString::from(out)
}

impl<'a> Reader<'a> {
    /// A reader over `buf`; `flexible` selects compact strings, compact arrays and tagged fields.
    #[inline]
    pub fn new(buf: &'a [u8], flexible: bool) -> Self {
        Reader {
            buf,
            pos: 0,
            flexible,
            lenient: Leniency::default(),
        }
    }

    /// Whether the message version being read is a flexible one.
    #[inline]
    pub fn flexible(&self) -> bool {
        self.flexible
    }

    /// Bytes not read yet.
    #[inline]
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// Bytes read so far.
    #[inline]
    pub fn position(&self) -> usize {
        self.pos
    }

    /// What was read in a form the writer would not produce.
    #[inline]
    pub fn leniency(&self) -> Leniency {
        self.lenient
    }

    /// False once anything was read in a form the writer would not produce.
    #[inline]
    pub fn canonical(&self) -> bool {
        self.lenient.is_canonical()
    }

    #[inline]
    fn take(&mut self, n: usize, field: &'static str) -> Result<&'a [u8]> {
        if n > self.remaining() {
            return Err(CodecError::Truncated {
                field,
                needed: n,
                remaining: self.remaining(),
            });
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    #[inline]
    fn array<const N: usize>(&mut self, field: &'static str) -> Result<[u8; N]> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N, field)?);
        Ok(out)
    }

    /// int8.
    #[inline]
    pub fn i8(&mut self, field: &'static str) -> Result<i8> {
        Ok(i8::from_be_bytes(self.array(field)?))
    }
    /// int16, big-endian.
    #[inline]
    pub fn i16(&mut self, field: &'static str) -> Result<i16> {
        Ok(i16::from_be_bytes(self.array(field)?))
    }
    /// int32, big-endian.
    #[inline]
    pub fn i32(&mut self, field: &'static str) -> Result<i32> {
        Ok(i32::from_be_bytes(self.array(field)?))
    }
    /// int64, big-endian.
    #[inline]
    pub fn i64(&mut self, field: &'static str) -> Result<i64> {
        Ok(i64::from_be_bytes(self.array(field)?))
    }

    /// boolean: any non-zero byte is true, as the protocol guide says; 0 and 1 are canonical.
    #[inline]
    pub fn bool(&mut self, field: &'static str) -> Result<bool> {
        let b = self.array::<1>(field)?[0];
        if b > 1 {
            self.lenient.boolean_byte = true;
        }
        Ok(b != 0)
    }

    /// Unsigned varint of at most five bytes, with Apache's wrap-around of the fifth byte.
    #[inline]
    pub fn uvarint(&mut self, field: &'static str) -> Result<u32> {
        let mut value: u32 = 0;
        for i in 0..5 {
            let b = self.array::<1>(field)?[0];
            value |= u32::from(b & 0x7f).wrapping_shl(7 * i);
            if b & 0x80 == 0 {
                let used = i as usize + 1;
                if used != uvarint_len(value) || (i == 4 && b > 0x0f) {
                    self.lenient.overlong_varint = true;
                }
                return Ok(value);
            }
        }
        Err(CodecError::VarintTooLong { field })
    }

    /// A length prefix as Apache computes it: an int16, or a varint minus one in Java int
    /// arithmetic (so a varint of 2^31 or more is negative).
    #[inline]
    fn length_prefix(&mut self, field: &'static str, wide: bool) -> Result<i32> {
        Ok(match (self.flexible, wide) {
            (true, _) => (self.uvarint(field)? as i32).wrapping_sub(1),
            (false, false) => i32::from(self.i16(field)?),
            (false, true) => self.i32(field)?,
        })
    }

    #[inline]
    fn string_len(&mut self, field: &'static str, nullable: bool) -> Result<Option<usize>> {
        match self.length_prefix(field, false)? {
            -1 if nullable => Ok(None),
            l if l < 0 && nullable => {
                self.lenient.negative_null_length = true;
                Ok(None)
            }
            -1 => Err(CodecError::UnexpectedNull { field }),
            l if l < 0 => Err(CodecError::InvalidLength {
                field,
                length: l.into(),
            }),
            l if l as usize > MAX_STRING_LEN => Err(CodecError::StringTooLong {
                field,
                length: l as usize,
            }),
            l => Ok(Some(l as usize)),
        }
    }

    /// A string's bytes, as Apache's parsers read them: bytes that are not UTF-8 become
    /// replacement characters, never a refusal.
    #[inline]
    fn utf8(&mut self, len: usize, field: &'static str) -> Result<CompactString> {
        let bytes = self.take(len, field)?;
        match CompactString::from_utf8(bytes) {
            Ok(s) => Ok(s),
            Err(_) => {
                self.lenient.lossy_utf8 = true;
                Ok(java_lossy_utf8(bytes))
            }
        }
    }

    /// A string that may be null (compact in flexible versions).
    #[inline]
    pub fn nullable_string(&mut self, field: &'static str) -> Result<Option<CompactString>> {
        match self.string_len(field, true)? {
            None => Ok(None),
            Some(len) => self.utf8(len, field).map(Some),
        }
    }

    /// A nullable string with an int16 length even in a flexible structure (the request
    /// header's client id).
    #[inline]
    pub fn classic_nullable_string(
        &mut self,
        field: &'static str,
    ) -> Result<Option<CompactString>> {
        let flexible = std::mem::replace(&mut self.flexible, false);
        let s = self.nullable_string(field);
        self.flexible = flexible;
        s
    }

    /// A string that must not be null (compact in flexible versions).
    #[inline]
    pub fn string(&mut self, field: &'static str) -> Result<CompactString> {
        match self.string_len(field, false)? {
            None => Err(CodecError::UnexpectedNull { field }),
            Some(len) => self.utf8(len, field),
        }
    }

    /// An array that must not be null, each element at least `min_element_size` bytes on the
    /// wire. The count is checked against the bytes left before any allocation.
    #[inline]
    pub fn array_of<T>(
        &mut self,
        field: &'static str,
        min_element_size: usize,
        mut element: impl FnMut(&mut Self) -> Result<T>,
    ) -> Result<Vec<T>> {
        let count = self.length_prefix(field, true)?;
        if count < 0 && crate::planted::in_codec(crate::planted::Bug::NegativeArrayReadsEmpty) {
            return Ok(Vec::new());
        }
        if count == -1 {
            return Err(CodecError::UnexpectedNull { field });
        }
        if count < 0 {
            return Err(CodecError::InvalidLength {
                field,
                length: count.into(),
            });
        }
        let count = count as u64;
        if crate::planted::in_codec(crate::planted::Bug::ArrayCountAllocates) {
            scratch_per_element(count);
        }
        if count.saturating_mul(min_element_size.max(1) as u64) > self.remaining() as u64 {
            return Err(CodecError::CountExceedsInput {
                field,
                count,
                remaining: self.remaining(),
            });
        }
        let mut out = Vec::with_capacity(count as usize);
        for _ in 0..count {
            out.push(element(self)?);
        }
        Ok(out)
    }

    /// An array of int32.
    #[inline]
    pub fn i32_array(&mut self, field: &'static str) -> Result<Vec<i32>> {
        self.array_of(field, 4, |r| r.i32(field))
    }

    /// The tagged-field section that ends every structure of a flexible version; empty (and
    /// nothing read) in other versions. The messages here define no named tagged fields in
    /// Apache 3.7, so every tag is kept as unknown, in wire order.
    #[inline]
    pub fn tagged_fields(&mut self, field: &'static str) -> Result<TaggedFields> {
        if !self.flexible {
            return Ok(TaggedFields::new());
        }
        let count = match self.uvarint(field)? as i32 {
            c if c < 0 => {
                // Apache's `for (i = 0; i < count; i++)` with a negative int runs zero times.
                self.lenient.negative_tag_count = true;
                0
            }
            c => c as u32,
        };
        // Each tagged field takes at least two bytes (tag and size).
        if u64::from(count) * 2 > self.remaining() as u64 {
            return Err(CodecError::CountExceedsInput {
                field,
                count: u64::from(count),
                remaining: self.remaining(),
            });
        }
        let start = self.pos;
        let was_overlong = std::mem::take(&mut self.lenient.overlong_varint);
        for _ in 0..count {
            self.uvarint(field)?;
            let size = self.uvarint(field)?;
            if (size as i32) < 0 {
                return Err(CodecError::InvalidLength {
                    field,
                    length: i64::from(size as i32),
                });
            }
            self.take(size as usize, field)?;
        }
        let section = &self.buf[start..self.pos];
        let overlong_here = self.lenient.overlong_varint;
        self.lenient.overlong_varint |= was_overlong;
        if !overlong_here {
            // Canonical already: keep the bytes as they are.
            return Ok(TaggedFields::from_canonical_entries(count, section));
        }
        // Rebuild with shortest varints, so equal fields compare equal.
        let mut again = Reader::new(section, true);
        let mut out = TaggedFields::new();
        for _ in 0..count {
            let tag = again.uvarint(field)?;
            let size = again.uvarint(field)? as usize;
            out.push(tag, again.take(size, field)?);
        }
        Ok(out)
    }

    /// Fails unless every byte was read.
    #[inline]
    pub fn finish(&self) -> Result<()> {
        match self.remaining() {
            0 => Ok(()),
            count => Err(CodecError::TrailingBytes { count }),
        }
    }
}

/// Bytes an unsigned varint of this value takes.
pub fn uvarint_len(value: u32) -> usize {
    match value {
        0..=0x7f => 1,
        0x80..=0x3fff => 2,
        0x4000..=0x1f_ffff => 3,
        0x20_0000..=0xfff_ffff => 4,
        _ => 5,
    }
}

/// Appends Kafka wire types to a byte vector.
#[derive(Debug)]
pub struct Writer {
    buf: Vec<u8>,
    flexible: bool,
    version: i16,
}

impl Writer {
    /// A writer for a message of `version`; `flexible` as for [`Reader::new`].
    #[inline]
    pub fn new(version: i16, flexible: bool) -> Self {
        Writer {
            buf: Vec::with_capacity(64),
            flexible,
            version,
        }
    }

    /// The version being written.
    #[inline]
    pub fn version(&self) -> i16 {
        self.version
    }

    /// The bytes written.
    #[inline]
    pub fn into_bytes(self) -> Vec<u8> {
        self.buf
    }

    /// int8.
    #[inline]
    pub fn i8(&mut self, v: i8) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }
    /// int16.
    #[inline]
    pub fn i16(&mut self, v: i16) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }
    /// int32.
    #[inline]
    pub fn i32(&mut self, v: i32) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }
    /// int64.
    #[inline]
    pub fn i64(&mut self, v: i64) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }
    /// boolean, as 0 or 1.
    #[inline]
    pub fn bool(&mut self, v: bool) {
        self.buf.push(u8::from(v));
    }

    /// Unsigned varint, shortest form.
    #[inline]
    pub fn uvarint(&mut self, v: u32) {
        put_uvarint(&mut self.buf, v);
    }

    #[inline]
    fn length(&mut self, len: Option<usize>) {
        match (self.flexible, len) {
            (true, None) => self.uvarint(0),
            (true, Some(l)) => self.uvarint(l as u32 + 1),
            (false, None) => self.i16(-1),
            (false, Some(l)) => self.i16(l as i16),
        }
    }

    /// A string that may be null.
    #[inline]
    pub fn nullable_string(&mut self, field: &'static str, v: Option<&str>) -> Result<()> {
        if let Some(s) = v {
            if s.len() > MAX_STRING_LEN {
                return Err(CodecError::StringTooLong {
                    field,
                    length: s.len(),
                });
            }
        }
        self.length(v.map(str::len));
        if let Some(s) = v {
            self.buf.extend_from_slice(s.as_bytes());
        }
        Ok(())
    }

    /// A nullable string with an int16 length even in a flexible structure.
    #[inline]
    pub fn classic_nullable_string(&mut self, field: &'static str, v: Option<&str>) -> Result<()> {
        let flexible = std::mem::replace(&mut self.flexible, false);
        let result = self.nullable_string(field, v);
        self.flexible = flexible;
        result
    }

    /// A string that is never null.
    #[inline]
    pub fn string(&mut self, field: &'static str, v: &str) -> Result<()> {
        self.nullable_string(field, Some(v))
    }

    /// An array, each element written by `element`.
    #[inline]
    pub fn array_of<T>(
        &mut self,
        field: &'static str,
        items: &[T],
        mut element: impl FnMut(&mut Self, &T) -> Result<()>,
    ) -> Result<()> {
        if items.len() >= i32::MAX as usize {
            return Err(CodecError::TooLargeToEncode { field });
        }
        if self.flexible {
            self.uvarint(items.len() as u32 + 1);
        } else {
            self.i32(items.len() as i32);
        }
        items.iter().try_for_each(|item| element(self, item))
    }

    /// An array of int32.
    #[inline]
    pub fn i32_array(&mut self, field: &'static str, items: &[i32]) -> Result<()> {
        self.array_of(field, items, |w, v| {
            w.i32(*v);
            Ok(())
        })
    }

    /// The tagged-field section of a flexible version; in other versions it must be empty.
    #[inline]
    pub fn tagged_fields(&mut self, field: &'static str, fields: &TaggedFields) -> Result<()> {
        if !self.flexible {
            return match fields.is_empty() {
                true => Ok(()),
                false => Err(CodecError::FieldNotInVersion {
                    field,
                    version: self.version,
                }),
            };
        }
        self.uvarint(fields.len() as u32);
        self.buf.extend_from_slice(fields.encoded_entries());
        Ok(())
    }

    /// Refuses a field that this version cannot carry unless it holds its default.
    #[inline]
    pub fn require_default<T: PartialEq>(
        &self,
        field: &'static str,
        value: &T,
        default: &T,
    ) -> Result<()> {
        match value == default {
            true => Ok(()),
            false => Err(CodecError::FieldNotInVersion {
                field,
                version: self.version,
            }),
        }
    }
}

/// The planted allocation ([`crate::planted::Bug::ArrayCountAllocates`], only in a
/// `planted-bugs` build): a 1 MiB scratch buffer reserved per element `count` claims, as
/// address space (the broker's allocator reserves large requests without backing them): a
/// count of 2^27 or more asks for more than the machine's address space, and the failure
/// aborts the process (`memory allocation of N bytes failed`), in this function whichever
/// array of whichever API asked.
#[inline(never)]
fn scratch_per_element(count: u64) {
    let scratch: Vec<[u8; 1 << 20]> = Vec::with_capacity(count as usize);
    std::hint::black_box(&scratch);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varint_boundaries_round_trip_in_shortest_form() {
        for v in [
            0u32,
            1,
            0x7f,
            0x80,
            0x3fff,
            0x4000,
            0x1f_ffff,
            0x20_0000,
            u32::MAX,
        ] {
            let mut w = Writer::new(0, true);
            w.uvarint(v);
            let bytes = w.into_bytes();
            assert_eq!(bytes.len(), uvarint_len(v), "length of {v:#x}");
            let mut r = Reader::new(&bytes, true);
            assert_eq!(r.uvarint("v").unwrap(), v);
            assert!(r.canonical());
            assert_eq!(r.remaining(), 0);
        }
    }

    #[test]
    fn overlong_varint_is_accepted_but_not_canonical() {
        let mut r = Reader::new(&[0x80, 0x00], true);
        assert_eq!(r.uvarint("v").unwrap(), 0);
        assert!(!r.canonical());
    }

    #[test]
    fn fifth_varint_byte_high_bits_wrap_like_apache_and_are_not_canonical() {
        // Apache computes `b << 28` in an int: bits above 32 are lost.
        let mut r = Reader::new(&[0xff, 0xff, 0xff, 0xff, 0x7f], true);
        assert_eq!(r.uvarint("v").unwrap(), u32::MAX);
        assert!(!r.canonical());
    }

    #[test]
    fn six_byte_varint_is_rejected() {
        let mut r = Reader::new(&[0x80, 0x80, 0x80, 0x80, 0x80, 0x00], true);
        assert_eq!(
            r.uvarint("v"),
            Err(CodecError::VarintTooLong { field: "v" })
        );
    }

    #[test]
    fn any_non_zero_boolean_is_true_and_only_zero_and_one_are_canonical() {
        let mut r = Reader::new(&[0, 1, 2, 0xff], false);
        assert!(!r.bool("b").unwrap());
        assert!(r.bool("b").unwrap());
        assert!(r.canonical());
        assert!(r.bool("b").unwrap());
        assert!(!r.canonical());
        assert!(r.bool("b").unwrap());
    }

    #[test]
    fn hostile_array_count_fails_before_allocating() {
        // i32::MAX elements claimed, four bytes present.
        let bytes = [0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 1];
        let mut r = Reader::new(&bytes, false);
        assert_eq!(
            r.i32_array("a"),
            Err(CodecError::CountExceedsInput {
                field: "a",
                count: i32::MAX as u64,
                remaining: 4
            })
        );
    }

    #[test]
    fn string_longer_than_apache_allows_is_rejected_on_read_and_write() {
        let mut bytes = Vec::new();
        let mut w = Writer::new(3, true);
        w.uvarint(0x8000 + 1);
        bytes.extend(w.into_bytes());
        bytes.extend(std::iter::repeat_n(b'a', 0x8000));
        let mut r = Reader::new(&bytes, true);
        assert_eq!(
            r.string("s"),
            Err(CodecError::StringTooLong {
                field: "s",
                length: 0x8000
            })
        );
        let long = "a".repeat(0x8000);
        assert!(Writer::new(3, true).string("s", &long).is_err());
    }

    #[test]
    fn null_in_a_non_nullable_string_or_array_is_an_error() {
        let mut r = Reader::new(&[0xff, 0xff], false);
        assert_eq!(
            r.string("s"),
            Err(CodecError::UnexpectedNull { field: "s" })
        );
        let mut r = Reader::new(&[0x00], true);
        assert_eq!(
            r.i32_array("a"),
            Err(CodecError::UnexpectedNull { field: "a" })
        );
    }

    #[test]
    fn overlong_varints_in_tagged_fields_are_rebuilt_canonically() {
        // One field: tag 5 written as 0x85 0x00, size 1, value 0xaa.
        let mut r = Reader::new(&[1, 0x85, 0x00, 1, 0xaa], true);
        let t = r.tagged_fields("t").unwrap();
        assert!(!r.canonical());
        assert_eq!(t, [(5u32, [0xaa])].into_iter().collect());
    }

    #[test]
    fn tagged_fields_keep_wire_order() {
        let bytes = [2, 5, 1, 0xaa, 1, 0];
        let mut r = Reader::new(&bytes, true);
        let t = r.tagged_fields("t").unwrap();
        let pairs: Vec<(u32, &[u8])> = t.iter().collect();
        assert_eq!(pairs, vec![(5, &[0xaa][..]), (1, &[][..])]);
        let mut w = Writer::new(3, true);
        w.tagged_fields("t", &t).unwrap();
        assert_eq!(w.into_bytes(), bytes);
    }
}
