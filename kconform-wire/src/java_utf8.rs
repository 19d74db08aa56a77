//! Strings as Java reads them: `new String(bytes, UTF_8)`, which Apache's parsers call on every
//! string field, replaces each malformed sequence with U+FFFD, and does not always draw the
//! sequence's bounds where Rust's `from_utf8_lossy` does (an encoded surrogate, `ed a0 80`, is
//! one replacement in Java and three in Rust). So the values kconform reads are Java's: each
//! rule below is the JDK's UTF-8 decoder's, checked against a JVM by `tests/apache_parser.rs`.

/// Java's reading of `bytes` as UTF-8; `None` when they are UTF-8 already (nothing replaced).
pub fn decode(bytes: &[u8]) -> Option<String> {
    if std::str::from_utf8(bytes).is_ok() {
        return None;
    }
    let mut out = String::with_capacity(bytes.len() + 8);
    let mut at = 0;
    while at < bytes.len() {
        let (c, used) = next(&bytes[at..]);
        out.push(c);
        at += used;
    }
    Some(out)
}

const REPLACEMENT: char = '\u{fffd}';

fn continuation(b: u8) -> bool {
    b & 0xc0 == 0x80
}

/// The first character of `b` (not empty) and how many bytes it takes; a malformed sequence is
/// one U+FFFD over as many bytes as Java's decoder gives it.
fn next(b: &[u8]) -> (char, usize) {
    let b1 = b[0];
    let replaced = |n: usize| (REPLACEMENT, n);
    match b1 {
        0x00..=0x7f => (char::from(b1), 1),
        // Two bytes; C0 and C1 would be overlong and are malformed alone.
        0xc2..=0xdf => match b.get(1) {
            None => replaced(1),
            Some(&b2) if !continuation(b2) => replaced(1),
            Some(&b2) => {
                let c = (u32::from(b1 & 0x1f) << 6) | u32::from(b2 & 0x3f);
                (char::from_u32(c).unwrap_or(REPLACEMENT), 2)
            }
        },
        0xe0..=0xef => {
            // E0 must be followed by A0..BF (else overlong); the second byte a continuation.
            let bad2 = |b2: u8| (b1 == 0xe0 && b2 & 0xe0 == 0x80) || !continuation(b2);
            match (b.get(1), b.get(2)) {
                (Some(&b2), Some(&b3)) => {
                    if bad2(b2) {
                        return replaced(1);
                    }
                    if !continuation(b3) {
                        return replaced(2);
                    }
                    let c = (u32::from(b1 & 0x0f) << 12)
                        | (u32::from(b2 & 0x3f) << 6)
                        | u32::from(b3 & 0x3f);
                    // An encoded surrogate: one replacement for the three bytes.
                    (char::from_u32(c).unwrap_or(REPLACEMENT), 3)
                }
                (Some(&b2), None) if bad2(b2) => replaced(1),
                // Cut short by the end: one replacement for what is left.
                (Some(_), None) => replaced(2),
                _ => replaced(1),
            }
        }
        0xf0..=0xf7 => {
            let bad2 = |b2: u8| {
                b1 > 0xf4
                    || (b1 == 0xf0 && !(0x90..=0xbf).contains(&b2))
                    || (b1 == 0xf4 && b2 & 0xf0 != 0x80)
                    || !continuation(b2)
            };
            match (b.get(1), b.get(2), b.get(3)) {
                (Some(&b2), Some(&b3), Some(&b4)) => {
                    if bad2(b2) {
                        return replaced(1);
                    }
                    if !continuation(b3) {
                        return replaced(2);
                    }
                    if !continuation(b4) {
                        return replaced(3);
                    }
                    let c = (u32::from(b1 & 0x07) << 18)
                        | (u32::from(b2 & 0x3f) << 12)
                        | (u32::from(b3 & 0x3f) << 6)
                        | u32::from(b4 & 0x3f);
                    (char::from_u32(c).unwrap_or(REPLACEMENT), 4)
                }
                _ if b1 > 0xf4 => replaced(1),
                (Some(&b2), _, _) if bad2(b2) => replaced(1),
                (Some(_), Some(&b3), None) if !continuation(b3) => replaced(2),
                // Cut short by the end: one replacement for what is left.
                (Some(_), Some(_), None) => replaced(3),
                (Some(_), None, None) => replaced(2),
                _ => replaced(1),
            }
        }
        // A continuation byte alone, C0, C1, F8..FF.
        _ => replaced(1),
    }
}

#[cfg(test)]
mod tests {
    use super::decode;

    #[test]
    fn malformed_sequences_are_replaced_where_java_replaces_them() {
        assert_eq!(decode(b"abc"), None);
        // A surrogate in three bytes: one replacement (Rust's from_utf8_lossy gives three).
        assert_eq!(
            decode(&[0xed, 0xa0, 0xaa, b'x']).as_deref(),
            Some("\u{fffd}x")
        );
        assert_eq!(
            String::from_utf8_lossy(&[0xed, 0xa0, 0xaa]).chars().count(),
            3
        );
        // A lead byte whose next byte does not continue it: one for the lead alone.
        assert_eq!(decode(&[0xd0, b'u']).as_deref(), Some("\u{fffd}u"));
        // Cut short by the end.
        assert_eq!(decode(&[b'a', 0xe2, 0x82]).as_deref(), Some("a\u{fffd}"));
        assert_eq!(decode(&[0xf0, 0x9f, 0x98]).as_deref(), Some("\u{fffd}"));
        // Overlong forms and bytes no sequence starts with.
        assert_eq!(decode(&[0xc0, 0xaf]).as_deref(), Some("\u{fffd}\u{fffd}"));
        assert_eq!(
            decode(&[0xe0, 0x80, 0xaf]).as_deref(),
            Some("\u{fffd}\u{fffd}\u{fffd}")
        );
        assert_eq!(decode(&[0xf5, 0x80]).as_deref(), Some("\u{fffd}\u{fffd}"));
        // Valid characters around a bad byte stay.
        assert_eq!(
            decode(
                "é\u{1f600}"
                    .as_bytes()
                    .iter()
                    .copied()
                    .chain([0xff])
                    .collect::<Vec<_>>()
                    .as_slice()
            )
            .as_deref(),
            Some("é\u{1f600}\u{fffd}")
        );
    }
}
