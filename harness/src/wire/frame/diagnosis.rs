//! Why an answer is malformed, said so a kaas engineer can act on it: the problem where Apache's
//! parser stopped, and, when the other response header version or one byte fewer would make
//! the frame well-formed, that instead.

use kafka_protocol::messages::ApiKey;

use super::{api_name, read_answer, spans, Span};

/// What [`super::decode`] found wrong, before the diagnosis is dressed.
pub(super) struct Problem {
    pub(super) field: Option<String>,
    pub(super) offset: usize,
    pub(super) text: String,
}

/// Bytes after the last field: what the Java client ignores and kconform does not.
pub(super) fn left_over(n: usize, at: usize, last: Option<&Span>) -> Problem {
    Problem {
        field: None,
        offset: at,
        text: format!(
            "{n} byte(s) left over after the last field{}",
            last.map(|s| format!(" ({}, bytes {}..{})", s.path, s.start, s.end))
                .unwrap_or_default()
        ),
    }
}

/// Whether Apache's parser reads `frame` as the answer: the definition of well-formed alone,
/// without the second reading a decode adds (each candidate byte of a diagnosis is tried).
fn well_formed(
    api: ApiKey,
    version: i16,
    header_version: i16,
    correlation: i32,
    frame: &[u8],
) -> bool {
    read_answer(api, version, header_version, correlation, frame).is_ok()
}

/// A diagnosis a kaas engineer can act on: when the frame would be well-formed with the other
/// header version, or without one byte, that is what it says (both, when both would do: a
/// frame of zeros can be read either way).
pub(super) fn explain(
    api: ApiKey,
    version: i16,
    header_version: i16,
    correlation: i32,
    frame: &[u8],
    problem: Problem,
) -> Problem {
    let mut fixes: Vec<Problem> = Vec::new();
    let other = 1 - header_version.clamp(0, 1);
    if well_formed(api, version, other, correlation, frame) {
        fixes.push(Problem {
            field: Some("header".into()),
            offset: 4,
            text: format!(
                "the response header is v{other}, but {} v{version} answers with header v{header_version}",
                api_name(api),
            ),
        });
    }
    // One byte too many: the bytes without which the frame is well-formed. A frame of zeros
    // often has several; a non-zero one is the likelier intruder, and the others are named.
    if frame.len() <= 4096 {
        let candidates: Vec<usize> = (0..frame.len())
            .filter(|&i| {
                let mut without = frame.to_vec();
                without.remove(i);
                well_formed(api, version, header_version, correlation, &without)
            })
            .collect();
        let likeliest = candidates
            .iter()
            .copied()
            .find(|&i| frame[i] != 0)
            .or(candidates.first().copied());
        if let Some(i) = likeliest {
            let mut without = frame.to_vec();
            let stray = without.remove(i);
            let field = spans(api, version, &without)
                .ok()
                .and_then(|s| s.into_iter().find(|s| s.start >= i))
                .map(|s| s.path);
            let place = match &field {
                Some(f) => format!(", before {f}"),
                None => ", after the last field".to_owned(),
            };
            let others: Vec<String> = candidates
                .iter()
                .filter(|&&c| c != i)
                .map(|c| c.to_string())
                .collect();
            let also = match others.len() {
                0 => String::new(),
                1..=3 => format!(" (so it is without byte {})", others.join(" or ")),
                n => format!(
                    " (so it is without byte {} or {} others)",
                    others[..3].join(", "),
                    n - 3
                ),
            };
            fixes.push(Problem {
                text: format!(
                    "a stray byte {stray:02x} at byte {i}{place}: without it the answer is well-formed{also}"
                ),
                field,
                offset: i,
            });
        }
    }
    if fixes.is_empty() {
        return problem;
    }
    let text = fixes
        .iter()
        .map(|f| f.text.as_str())
        .collect::<Vec<_>>()
        .join("; or ");
    let first = fixes.swap_remove(0);
    Problem {
        text: format!("{text} (as sent: {})", problem.text),
        ..first
    }
}
