//! Shrinks a frame that shows a finding while it still shows it: structure-aware first, along
//! Apache's schema (the client id emptied, array elements dropped, strings emptied, integers
//! zeroed), then bytes (the frame cut short, runs of bytes removed). What could not be taken
//! away is what matters, and the finding names it: the field where a malformed frame stops
//! being a request ("markers (count): count 2147483647, but only 0 byte(s) follow"), or the
//! fields of a well-formed one whose values it needs ("committed_leader_epoch = -2147483648").
//! The check is the caller's: a crash reproduced on a fresh broker, a close seen again.

use super::mutate::{read_uvarint as uvarint, uvarint as encode_uvarint};
use super::shape;
use crate::wire::frame::Span;

/// Whether a candidate frame still shows the finding.
pub(crate) trait Check {
    /// Sends `frame` (as the finding needs: alone, after the frames it needs) and says
    /// whether the finding shows again.
    async fn holds(&mut self, frame: &[u8]) -> bool;
}

/// A shrunk frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shrunk {
    /// The smallest frame found that still shows the finding.
    pub frame: Vec<u8>,
    /// Checks made.
    pub tries: usize,
    /// What the finding needs of it, in words.
    pub matters: Vec<String>,
}

/// Shrinks `frame` with at most `budget` checks.
pub(crate) async fn shrink(frame: &[u8], check: &mut impl Check, budget: usize) -> Shrunk {
    let mut s = Shrinking {
        frame: frame.to_vec(),
        tries: 0,
        budget,
        matters: Vec::new(),
    };
    // What the schema says the finding needs, built in one step: a frame malformed at a count
    // past its end (the allocation a large count asks for) cut just past that count. On a
    // broker that takes seconds to start, each try that kills costs a start: trial shrinking
    // cost seventeen of them a crash on a real kaas build.
    if let Some(cut) = schema_cut(frame) {
        if s.try_one(cut, check).await {
            let matters = shape::parse(&s.frame).err().into_iter().collect();
            return Shrunk {
                frame: s.frame,
                tries: s.tries,
                matters,
            };
        }
    }
    s.client_id(check).await;
    s.header_tags(check).await;
    s.elements(check).await;
    s.strings(check).await;
    s.integers(check).await;
    s.cut(check).await;
    s.chunks(check).await;
    let mut matters = s.matters;
    if let Err(why) = shape::parse(&s.frame) {
        matters = vec![why];
    }
    Shrunk {
        frame: s.frame,
        tries: s.tries,
        matters,
    }
}

/// `frame` cut just past the count where it stops being a request, its client id emptied
/// ("topics at byte 343: count 2147483647, but only 120 byte(s) follow" gives the header, the
/// fields before `topics` and the count, nothing after it), when it is malformed so; `None`
/// otherwise.
pub(crate) fn schema_cut(frame: &[u8]) -> Option<Vec<u8>> {
    let why = shape::parse(frame).err()?;
    let defect = count_defect(&why)?;
    let at: usize = why
        .split(" at byte ")
        .nth(1)?
        .split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()?;
    let same = |f: &[u8]| {
        shape::parse(f)
            .err()
            .is_some_and(|w| count_defect(&w).as_ref() == Some(&defect))
    };
    let cut = (1..=5).find_map(|width| {
        let end = at.checked_add(width)?;
        let candidate = frame.get(..end).filter(|_| end < frame.len())?;
        same(candidate).then(|| candidate.to_vec())
    })?;
    Some(match without_client_id(&cut) {
        Some((emptied, _)) if same(&emptied) => emptied,
        _ => cut,
    })
}

/// `frame` with its header's client id (its int16 length at bytes 8..10) emptied, and where
/// the id ended; `None` when it has none, or its length runs past the frame.
fn without_client_id(frame: &[u8]) -> Option<(Vec<u8>, usize)> {
    let len = frame.get(8..10).map(|b| i16::from_be_bytes([b[0], b[1]]))?;
    let end = 10 + usize::try_from(len).unwrap_or(0);
    if len <= 0 || end > frame.len() {
        return None;
    }
    let mut emptied = frame[..8].to_vec();
    emptied.extend([0, 0]);
    emptied.extend_from_slice(&frame[end..]);
    Some((emptied, end))
}

/// The field and count of a parse error at a count past the frame's end, its byte left out
/// (`topics: count 2147483647`); `None` for another error.
pub(crate) fn count_defect(why: &str) -> Option<(String, String)> {
    let (defect, _) = why.split_once(", but only ")?;
    let (place, count) = defect.split_once(": count ")?;
    let field = place.split(" at byte ").next()?;
    Some((field.to_owned(), count.to_owned()))
}

struct Shrinking {
    frame: Vec<u8>,
    tries: usize,
    budget: usize,
    matters: Vec<String>,
}

impl Shrinking {
    /// Tries `candidate`: kept when it still shows the finding.
    async fn try_one(&mut self, candidate: Vec<u8>, check: &mut impl Check) -> bool {
        if self.tries >= self.budget || candidate == self.frame {
            return false;
        }
        self.tries += 1;
        let holds = check.holds(&candidate).await;
        if holds {
            self.frame = candidate;
        }
        holds
    }

    /// Asks about `candidate` without keeping it; `None` once the budget is spent.
    async fn probe(&mut self, candidate: &[u8], check: &mut impl Check) -> Option<bool> {
        if self.tries >= self.budget {
            return None;
        }
        self.tries += 1;
        Some(check.holds(candidate).await)
    }

    /// The header's client id emptied (its int16 length at bytes 8..10).
    async fn client_id(&mut self, check: &mut impl Check) {
        let Some((candidate, end)) = without_client_id(&self.frame) else {
            return;
        };
        if self.tries < self.budget && !self.try_one(candidate, check).await {
            // It needs its client id: a header a broker cannot read (bytes that are not UTF-8,
            // which Apache reads as replacement characters) is one defect on every API.
            let id = &self.frame[10..end];
            let what = match std::str::from_utf8(id) {
                Ok(text) => format!("{text:?}"),
                Err(_) => "bytes that are not UTF-8".to_owned(),
            };
            self.matters.push(format!("header.client_id = {what}"));
        }
    }

    /// A header's tagged-field count that reads as a negative int (which Apache up to 4.1 reads
    /// as none) written as 0: when the finding then goes, the count is what it needs, a header
    /// defect on every API (a real kaas build closed on it at every flexible version).
    async fn header_tags(&mut self, check: &mut impl Check) {
        let Ok(p) = shape::parse(&self.frame) else {
            return;
        };
        let Some(span) = p.spans.iter().find(|s| s.path == "header.(tagged fields)") else {
            return;
        };
        let Some((count, _)) = uvarint(&self.frame[span.start..span.end]) else {
            return;
        };
        if (count as i32) >= 0 || self.tries >= self.budget {
            return;
        }
        let mut candidate = self.frame[..span.start].to_vec();
        candidate.push(0);
        candidate.extend_from_slice(&self.frame[span.end..]);
        if !self.try_one(candidate, check).await {
            self.matters.push(format!(
                "header.(tagged fields): count {} (as Java's int; Apache up to 4.1 reads none)",
                count as i32
            ));
        }
    }

    /// Array elements dropped, the last first, each array's count lowered to match.
    async fn elements(&mut self, check: &mut impl Check) {
        let mut progress = true;
        while progress && self.tries < self.budget {
            progress = false;
            let Ok(p) = shape::parse(&self.frame) else {
                return;
            };
            for count in p
                .spans
                .iter()
                .filter(|s| s.path.ends_with(" (count)"))
                .rev()
            {
                let array = count.path.trim_end_matches(" (count)");
                let Some(last) = last_element(&p.spans, array) else {
                    continue;
                };
                let Some(candidate) = without_element(&self.frame, count, last, p.flexible) else {
                    continue;
                };
                if self.try_one(candidate, check).await {
                    progress = true;
                    break;
                }
            }
        }
    }

    /// Strings emptied; an empty one given a byte, to learn whether its emptiness matters.
    async fn strings(&mut self, check: &mut impl Check) {
        let mut i = 0;
        while self.tries < self.budget {
            let Ok(p) = shape::parse(&self.frame) else {
                return;
            };
            let strings: Vec<&Span> = p
                .spans
                .iter()
                .filter(|s| !s.integer && !s.path.starts_with("header.") && !s.path.contains('('))
                .filter(|s| string_length(&self.frame, s, p.flexible).is_some())
                .collect();
            let Some(s) = strings.get(i).copied().cloned() else {
                return;
            };
            i += 1;
            let len = string_length(&self.frame, &s, p.flexible).unwrap_or(0);
            if len > 0 {
                let candidate = with_string(&self.frame, &s, p.flexible, b"");
                self.try_one(candidate, check).await;
                continue;
            }
            // Already empty: does the finding need it so? Asked, not kept either way.
            let candidate = with_string(&self.frame, &s, p.flexible, b"k");
            if !self.probe(&candidate, check).await.unwrap_or(true) {
                self.matters.push(format!("{} = \"\"", s.path));
            }
        }
    }

    /// Integers set to zero; those that cannot be are what matters.
    async fn integers(&mut self, check: &mut impl Check) {
        let Ok(p) = shape::parse(&self.frame) else {
            return;
        };
        for s in p
            .spans
            .iter()
            .filter(|s| s.integer && !s.path.starts_with("header."))
        {
            let bytes = &self.frame[s.start..s.end];
            if bytes.iter().all(|b| *b == 0) {
                continue;
            }
            let value = be_int(bytes);
            let mut candidate = self.frame.clone();
            candidate[s.start..s.end].fill(0);
            if !self.try_one(candidate, check).await {
                self.matters.push(format!("{} = {value}", s.path));
            }
        }
    }

    /// The frame cut as short as it still shows the finding (the header kept).
    async fn cut(&mut self, check: &mut impl Check) {
        let (mut lo, mut hi) = (8usize.min(self.frame.len()), self.frame.len());
        while lo < hi && self.tries < self.budget {
            let mid = lo + (hi - lo) / 2;
            if self.try_one(self.frame[..mid].to_vec(), check).await {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
    }

    /// Runs of 8, 4, 2 and 1 bytes removed wherever the finding still shows without them.
    async fn chunks(&mut self, check: &mut impl Check) {
        for size in [8usize, 4, 2, 1] {
            let mut at = 10;
            while at + size <= self.frame.len() && self.tries < self.budget {
                let mut candidate = self.frame[..at].to_vec();
                candidate.extend_from_slice(&self.frame[at + size..]);
                if !self.try_one(candidate, check).await {
                    at += size;
                }
            }
        }
    }
}

/// The bytes of the last element of `array` (`markers`, `topics[0].partitions`).
fn last_element(spans: &[Span], array: &str) -> Option<(usize, usize)> {
    let prefix = format!("{array}[");
    let last_index = spans
        .iter()
        .filter_map(|s| s.path.strip_prefix(&prefix))
        .filter_map(|rest| rest.split(']').next()?.parse::<usize>().ok())
        .max()?;
    let own = format!("{array}[{last_index}]");
    let mine: Vec<&Span> = spans.iter().filter(|s| s.path.starts_with(&own)).collect();
    let start = mine.iter().map(|s| s.start).min()?;
    let end = mine.iter().map(|s| s.end).max()?;
    Some((start, end))
}

/// `frame` without one element of an array, its count one lower.
fn without_element(
    frame: &[u8],
    count: &Span,
    element: (usize, usize),
    flexible: bool,
) -> Option<Vec<u8>> {
    let old = &frame[count.start..count.end];
    let new_count = match flexible {
        false => {
            let n = i32::from_be_bytes(old.try_into().ok()?);
            (n.checked_sub(1)?).to_be_bytes().to_vec()
        }
        true => {
            let (n, _) = uvarint(old)?;
            encode_uvarint(n.checked_sub(1)?)
        }
    };
    let mut out = frame[..count.start].to_vec();
    out.extend(new_count);
    out.extend_from_slice(&frame[count.end..element.0]);
    out.extend_from_slice(&frame[element.1..]);
    Some(out)
}

/// A span's string length, when it is a string: an int16 (or compact) length and as many
/// bytes.
pub(super) fn string_length(frame: &[u8], s: &Span, flexible: bool) -> Option<usize> {
    let bytes = &frame[s.start..s.end];
    match flexible {
        false => {
            let len = i16::from_be_bytes([*bytes.first()?, *bytes.get(1)?]);
            (usize::try_from(len).ok()? == bytes.len() - 2).then_some(bytes.len() - 2)
        }
        true => {
            let (n, used) = uvarint(bytes)?;
            let len = usize::try_from(n.checked_sub(1)?).ok()?;
            (len == bytes.len() - used).then_some(len)
        }
    }
}

/// `frame` with the string at `s` replaced by `with`.
fn with_string(frame: &[u8], s: &Span, flexible: bool, with: &[u8]) -> Vec<u8> {
    let mut out = frame[..s.start].to_vec();
    match flexible {
        false => out.extend((with.len() as i16).to_be_bytes()),
        true => out.extend(encode_uvarint(with.len() as u32 + 1)),
    }
    out.extend_from_slice(with);
    out.extend_from_slice(&frame[s.end..]);
    out
}

/// A big-endian signed integer of 1 to 8 bytes.
pub(super) fn be_int(bytes: &[u8]) -> i64 {
    let mut v: i64 = if bytes.first().is_some_and(|b| b & 0x80 != 0) {
        -1
    } else {
        0
    };
    for b in bytes {
        v = (v << 8) | i64::from(*b);
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fuzz::model::Rng;
    use crate::fuzz::wire::seeds;
    use kafka_protocol::messages::ApiKey;

    /// A check that holds on what a planted decoder would die of.
    struct Pure<F: Fn(&[u8]) -> bool>(F, usize);

    impl<F: Fn(&[u8]) -> bool> Check for Pure<F> {
        async fn holds(&mut self, frame: &[u8]) -> bool {
            self.1 += 1;
            (self.0)(frame)
        }
    }

    fn write_txn_markers_v0() -> Vec<u8> {
        let mut rng = Rng::new(3);
        loop {
            let seed = seeds::draw(ApiKey::WriteTxnMarkers, 0, 1, &mut rng).unwrap();
            if seed.frame.len() > 60 {
                return seed.frame;
            }
        }
    }

    /// The huge-count killer: what is left is the header and the count, and the finding names
    /// the count.
    #[tokio::test]
    async fn a_count_killer_shrinks_to_its_count() {
        let mut frame = write_txn_markers_v0();
        let client = i16::from_be_bytes([frame[8], frame[9]]) as usize;
        let count_at = 10 + client;
        frame[count_at..count_at + 4].copy_from_slice(&0x7fff_ffffi32.to_be_bytes());
        // Dies when the frame reaches a marker count of 2^27 or more.
        let dies = |f: &[u8]| {
            let Some(len) = f.get(8..10).map(|b| i16::from_be_bytes([b[0], b[1]])) else {
                return false;
            };
            let at = 10 + len.max(0) as usize;
            f.get(at..at + 4)
                .map(|b| u32::from_be_bytes(b.try_into().unwrap()))
                .is_some_and(|n| n >= 1 << 27)
                && f[..4] == [0, 27, 0, 0]
        };
        let mut check = Pure(dies, 0);
        let shrunk = shrink(&frame, &mut check, 200).await;
        assert_eq!(shrunk.frame.len(), 14, "{:?}", shrunk.frame);
        assert!(shrunk.frame.len() < frame.len());
        assert!(dies(&shrunk.frame));
        assert_eq!(shrunk.tries, check.1);
        // Built from the schema in one try, not shrunk by trial.
        assert_eq!(shrunk.tries, 1);
        assert!(
            shrunk.matters[0].contains("markers") && shrunk.matters[0].contains("2147483647"),
            "{:?}",
            shrunk.matters
        );
    }

    /// A close that needs its client id (bytes that are not UTF-8) names it: a header defect.
    #[tokio::test]
    async fn a_client_id_the_finding_needs_is_named() {
        // EndTxn v0: client id one byte 0xff, id "t", producer 7, epoch 1, commit.
        let frame = [
            0, 26, 0, 0, 0, 0, 0, 1, 0, 1, 0xff, 0, 1, b't', 0, 0, 0, 0, 0, 0, 0, 7, 0, 1, 1,
        ];
        let closes = |f: &[u8]| f.get(8..11) == Some(&[0, 1, 0xff][..]) && shape::parse(f).is_ok();
        assert!(closes(&frame));
        let mut check = Pure(closes, 0);
        let shrunk = shrink(&frame, &mut check, 200).await;
        assert!(
            shrunk
                .matters
                .contains(&"header.client_id = bytes that are not UTF-8".to_owned()),
            "{:?}",
            shrunk.matters
        );
    }

    /// A close that needs a header's negative tagged-field count names it: a header defect.
    #[tokio::test]
    async fn a_negative_header_tag_count_the_finding_needs_is_named() {
        // InitProducerId v4 (as real kaas closed on it): header tags count 0xffffffff.
        let frame = [
            0, 22, 0, 4, 0, 0, 5, 0x2f, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f, 1, 0, 0, 0, 0, 0, 0, 0,
            0, 0, 0, 0, 0, 0, 0, 0,
        ];
        assert!(shape::parse(&frame).is_ok());
        let closes = |f: &[u8]| {
            f.get(10..15) == Some(&[0xff, 0xff, 0xff, 0xff, 0x0f][..]) && shape::parse(f).is_ok()
        };
        let mut check = Pure(closes, 0);
        let shrunk = shrink(&frame, &mut check, 200).await;
        assert!(
            shrunk
                .matters
                .iter()
                .any(|m| m.starts_with("header.(tagged fields): count -1")),
            "{:?}",
            shrunk.matters
        );
    }

    /// A value killer of a well-formed frame: the elements and strings go, the integer that
    /// matters stays and is named; a budget of checks is kept.
    #[tokio::test]
    async fn a_value_killer_keeps_and_names_its_value() {
        let mut rng = Rng::new(9);
        let frame = loop {
            let f = seeds::draw(ApiKey::EndTxn, 3, 1, &mut rng).unwrap().frame;
            let p = shape::parse(&f).unwrap();
            let pid = p.spans.iter().find(|s| s.path == "producer_id").unwrap();
            if be_int(&f[pid.start..pid.end]) != 0 {
                break f;
            }
        };
        let pid_of = |f: &[u8]| {
            let p = shape::parse(f).ok()?;
            let s = p.spans.iter().find(|s| s.path == "producer_id")?;
            Some(be_int(&f[s.start..s.end]))
        };
        let want = pid_of(&frame).unwrap();
        let mut check = Pure(move |f: &[u8]| pid_of(f) == Some(want), 0);
        let shrunk = shrink(&frame, &mut check, 200).await;
        assert!(
            shrunk.matters.contains(&format!("producer_id = {want}")),
            "{:?}",
            shrunk.matters
        );
        assert!(shrunk.frame.len() <= frame.len());
        let mut stingy = Pure(|_: &[u8]| true, 0);
        assert_eq!(shrink(&frame, &mut stingy, 3).await.tries, 3);
    }
}
