//! Text made comparable across inputs: the numbers and array indexes that vary from one
//! frame to the next taken out, so that one defect has one signature.

/// `topics[3].partitions[0].error_code` as `topics[].partitions[].error_code`.
pub fn indexes_out(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    let mut in_index = false;
    for c in path.chars() {
        match c {
            '[' => {
                in_index = true;
                out.push('[');
            }
            ']' => {
                in_index = false;
                out.push(']');
            }
            _ if in_index => {}
            c => out.push(c),
        }
    }
    out
}

/// Every number standing alone (with its sign, and what follows its first digit: a hex byte
/// `2a`) as `N`; digits inside a word (`i32`, `v0`) stay: what differs between two frames of
/// one defect goes.
pub fn numbers_out(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let digit_next = chars.peek().is_some_and(char::is_ascii_digit);
        // Digits inside a word are part of it (i32, v0): only numbers standing alone go.
        let in_word = out.ends_with(|p: char| p.is_alphanumeric() || p == '_');
        if !in_word && (c.is_ascii_digit() || (c == '-' && digit_next)) {
            while chars.peek().is_some_and(|d| d.is_ascii_alphanumeric()) {
                chars.next();
            }
            out.push('N');
        } else {
            out.push(c);
        }
    }
    out
}

/// `numbers_out`, then a run of numbers (`[N, N, N]`, a byte array as Debug prints it) as one,
/// and at most 160 characters: a decoder's error text as a signature, whatever its input.
pub fn reason_out(text: &str) -> String {
    let mut out = numbers_out(text);
    while out.contains("N, N") {
        out = out.replace("N, N", "N");
    }
    match out.char_indices().nth(160) {
        Some((at, _)) => format!("{}...", &out[..at]),
        None => out,
    }
}

/// Apache's words for a kind of refusal, whatever the input and version: numbers out and a
/// version (`v3`) as `vN`, so that "null (length -1), which v3 does not allow here" on one array
/// and "null (length -7), which v0 does not allow here" on another read as one.
pub fn kind_out(text: &str) -> String {
    let numbers = numbers_out(text);
    let mut out = String::with_capacity(numbers.len());
    let mut chars = numbers.chars().peekable();
    while let Some(c) = chars.next() {
        let word_start = !out.ends_with(|p: char| p.is_alphanumeric() || p == '_');
        if c == 'v' && word_start && chars.peek().is_some_and(char::is_ascii_digit) {
            let mut digits = String::new();
            while let Some(d) = chars.next_if(char::is_ascii_digit) {
                digits.push(d);
            }
            match chars
                .peek()
                .is_some_and(|n| n.is_alphanumeric() || *n == '_')
            {
                true => out.push_str(&format!("v{digits}")),
                false => out.push_str("vN"),
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_varies_between_inputs_goes() {
        assert_eq!(
            indexes_out("topics[3].partitions[0].x"),
            "topics[].partitions[].x"
        );
        assert_eq!(
            numbers_out("count 2147483647 at byte -2 of v3"),
            "count N at byte N of v3"
        );
        assert_eq!(
            reason_out("FromUtf8(FromUtf8Error { bytes: [107, 255, 1], error: Utf8Error { valid_up_to: 1 } })"),
            "FromUtf8(FromUtf8Error { bytes: [N], error: Utf8Error { valid_up_to: N } })"
        );
        assert!(reason_out(&"x".repeat(500)).ends_with("..."));
        assert_eq!(
            kind_out("null (length -7), which v12 does not allow here (level v2x, nv3)"),
            "null (length N), which vN does not allow here (level v2x, nv3)"
        );
    }
}
