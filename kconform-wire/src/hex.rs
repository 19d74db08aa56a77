//! Bytes as hex and back: how a frame is shown in a diagnosis, handed to Apache's parser, and
//! how `bytes` fields read in a tree.

/// `0001ff`: bytes on one line, as Apache's parser is given a frame
/// ([`crate::targets::apache::parser`]) and as a `bytes` field reads ([`crate::wire::by_schema`]).
pub fn hex_compact(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `00 01 ff`: a frame in a diagnosis.
pub fn hex(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The bytes of [`hex_compact`]'s form; `None` for an odd length or a character that is not
/// a hex digit.
pub fn unhex(text: &str) -> Option<Vec<u8>> {
    if text.len() % 2 != 0 {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_reads_back() {
        assert_eq!(hex_compact(&[0, 1, 255]), "0001ff");
        assert_eq!(hex(&[0, 1, 255]), "00 01 ff");
        assert_eq!(unhex("0aff"), Some(vec![10, 255]));
        assert_eq!(unhex("0"), None);
        assert_eq!(unhex("zz"), None);
    }
}
