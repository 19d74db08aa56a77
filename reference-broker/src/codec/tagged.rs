//! Unknown tagged fields, kept as one encoded block.
//!
//! Apache 3.7 names no tagged field in the six transaction APIs, so every tag a peer sends is
//! unknown here. They are kept (in arrival order, so re-encoding gives back the bytes) in one
//! buffer holding the canonical encoding of the entries: no allocation when there are none,
//! one when there are some.

use std::fmt;

/// The unknown tagged fields of one structure, in the order they arrived.
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct TaggedFields {
    count: u32,
    /// Each entry as `uvarint tag, uvarint size, bytes`, canonical varints.
    entries: Vec<u8>,
}

impl TaggedFields {
    /// No tagged fields.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends a field.
    pub fn push(&mut self, tag: u32, value: &[u8]) {
        put_uvarint(&mut self.entries, tag);
        put_uvarint(&mut self.entries, value.len() as u32);
        self.entries.extend_from_slice(value);
        self.count += 1;
    }

    /// How many fields.
    pub fn len(&self) -> usize {
        self.count as usize
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The fields as (tag, value), in order.
    pub fn iter(&self) -> impl Iterator<Item = (u32, &[u8])> + '_ {
        let mut rest = self.entries.as_slice();
        std::iter::from_fn(move || {
            let tag = take_uvarint(&mut rest)?;
            let size = take_uvarint(&mut rest)? as usize;
            let (value, tail) = rest.split_at_checked(size)?;
            rest = tail;
            Some((tag, value))
        })
    }

    /// The entries' encoding (without the count), as written on the wire.
    pub(crate) fn encoded_entries(&self) -> &[u8] {
        &self.entries
    }

    /// Builds from entries already known to be canonical (the reader checked them).
    pub(crate) fn from_canonical_entries(count: u32, entries: &[u8]) -> Self {
        TaggedFields {
            count,
            entries: entries.to_vec(),
        }
    }
}

impl<V: AsRef<[u8]>> FromIterator<(u32, V)> for TaggedFields {
    fn from_iter<I: IntoIterator<Item = (u32, V)>>(iter: I) -> Self {
        let mut t = TaggedFields::new();
        for (tag, value) in iter {
            t.push(tag, value.as_ref());
        }
        t
    }
}

impl fmt::Debug for TaggedFields {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

/// Appends an unsigned varint in its shortest form.
pub(crate) fn put_uvarint(out: &mut Vec<u8>, mut v: u32) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn take_uvarint(rest: &mut &[u8]) -> Option<u32> {
    let mut value = 0u32;
    for i in 0..5 {
        let (&b, tail) = rest.split_first()?;
        *rest = tail;
        value |= u32::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return Some(value);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_then_iterate_gives_the_fields_in_order() {
        let t: TaggedFields = [(300u32, vec![1u8, 2]), (0, vec![]), (7, vec![9])]
            .into_iter()
            .collect();
        assert_eq!(t.len(), 3);
        let got: Vec<(u32, Vec<u8>)> = t.iter().map(|(k, v)| (k, v.to_vec())).collect();
        assert_eq!(got, vec![(300, vec![1, 2]), (0, vec![]), (7, vec![9])]);
        assert_eq!(t.encoded_entries(), [0xac, 0x02, 2, 1, 2, 0, 0, 7, 1, 9]);
    }

    #[test]
    fn empty_fields_hold_no_allocation() {
        assert_eq!(TaggedFields::new().entries.capacity(), 0);
    }
}
