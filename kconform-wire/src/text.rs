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
