//! A finding as written: the raw frame it ends with (`frame-<hash>.bin`, its 4-byte size
//! first), the frames it needs before it when a crash needs more than one
//! (`frame-<hash>.needs-1.bin`...), and a text file beside them that says what happened, how
//! it reproduces, what of the frame matters, and the one command that replays it. Named by
//! the signature's hash: one finding a defect, never replaced by a later frame of it.

use std::path::Path;

use serde::Serialize;

use super::judge::{Judged, Kind};
use crate::fuzz::FuzzError;

/// One distinct finding, as written.
#[derive(Debug, Clone, Serialize)]
pub struct FrameFinding {
    /// What it is: the kind, and what the broker said or what the frame breaks.
    pub signature: String,
    /// The kind.
    pub kind: Kind,
    /// The raw frame's file (in the findings directory), size prefix included.
    pub file: String,
    /// What happened, in words.
    pub detail: String,
    /// What the mutations did to the seed frame.
    pub mutations: Vec<String>,
    /// Seconds into the run when it was found.
    pub found_after_secs: f64,
    /// The frame's number in the run (drawn from the seed and this number).
    pub frame_number: u64,
    /// How it reproduced before it was written: "alone" (on a fresh connection; for a crash,
    /// on a freshly started broker), or "after N frames".
    pub reproduces: String,
    /// The files of the frames it needs before it, in order (a crash of more than one frame).
    pub needs: Vec<String>,
    /// The frame's size as drawn, in bytes.
    pub found_bytes: usize,
    /// The frame's size as written, shrunk while it still showed the finding.
    pub bytes: usize,
    /// What the finding needs of the frame (a field and its value), as shrinking found.
    pub matters: Vec<String>,
    /// The APIs and versions of the frames that showed it.
    pub seen_on: Vec<String>,
    /// How many times it showed (crashes of this kind, frames judged so).
    pub seen: u64,
    /// What the broker said (a panic, an allocation failure), where its log was read.
    pub broker_said: Option<String>,
}

impl FrameFinding {
    /// `; what matters: FIELD = VALUE; ...`, or nothing when shrinking named nothing.
    pub fn what_matters(&self) -> String {
        match self.matters.is_empty() {
            true => String::new(),
            false => format!("; what matters: {}", self.matters.join("; ")),
        }
    }

    /// The command that replays it on `target`, from the findings directory `dir`.
    pub fn replay_command(&self, dir: &Path, target: &str) -> String {
        let files: Vec<String> = self
            .needs
            .iter()
            .chain(std::iter::once(&self.file))
            .map(|f| dir.join(f).display().to_string())
            .collect();
        format!(
            "kconform replay-frame {} --target {target}",
            files.join(" ")
        )
    }
}

/// What a finding is made of before it is written.
pub struct Found<'a> {
    /// The judge's word.
    pub judged: &'a Judged,
    /// The frames it needs before the last, and the last.
    pub before: &'a [Vec<u8>],
    /// The frame, shrunk.
    pub frame: &'a [u8],
}

/// The file name of a finding with this signature.
pub fn name(signature: &str) -> String {
    format!("frame-{:08x}", crate::fuzz::stable_hash(signature))
}

/// The frame with its 4-byte size first, as a broker reads it off the wire.
pub(super) fn sized(frame: &[u8]) -> Vec<u8> {
    let mut raw = (frame.len() as u32).to_be_bytes().to_vec();
    raw.extend_from_slice(frame);
    raw
}

/// Writes the frames of `found` into `dir`; the finding's file names.
pub fn write_frames(dir: &Path, found: &Found<'_>) -> Result<(String, Vec<String>), FuzzError> {
    let io = |e| FuzzError::Findings(dir.display().to_string(), e);
    let stem = name(&found.judged.signature);
    let mut needs = Vec::new();
    for (i, frame) in found.before.iter().enumerate() {
        let file = format!("{stem}.needs-{}.bin", i + 1);
        std::fs::write(dir.join(&file), sized(frame)).map_err(io)?;
        needs.push(file);
    }
    let file = format!("{stem}.bin");
    std::fs::write(dir.join(&file), sized(found.frame)).map_err(io)?;
    Ok((file, needs))
}

/// Writes (again) the text file that describes `f`, found by a run of `seed` on `target`.
pub fn write_text(
    dir: &Path,
    target: &str,
    seed: u64,
    f: &FrameFinding,
    frame: &[u8],
) -> Result<(), FuzzError> {
    let io = |e| FuzzError::Findings(dir.display().to_string(), e);
    let text = format!(
        "# signature: {}\n# {}\n# found by kconform fuzz --mode frames --seed {seed} (frame {}) on {target}, after {:.1} s\n# mutations of the seed frame: {}\n# reproduces: {}\n# shrunk: {} bytes as drawn, {} as written{}\n# seen on: {} ({} time(s))\n{}# replay: {}\n{}\n",
        f.signature,
        f.detail,
        f.frame_number,
        f.found_after_secs,
        match f.mutations.is_empty() {
            true => "none (the seed itself)".to_owned(),
            false => f.mutations.join("; "),
        },
        f.reproduces,
        f.found_bytes,
        f.bytes,
        f.what_matters(),
        f.seen_on.join(", "),
        f.seen,
        f.broker_said
            .as_ref()
            .map(|w| format!("# the broker said: {w}\n"))
            .unwrap_or_default(),
        f.replay_command(dir, target),
        crate::wire::frame::hex(frame),
    );
    let stem = f.file.trim_end_matches(".bin");
    std::fs::write(dir.join(format!("{stem}.txt")), text).map_err(io)
}
