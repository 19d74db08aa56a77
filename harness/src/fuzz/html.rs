//! `kconform fuzz --html FILE`: a fuzzing run on one self-contained page, in the same shell as
//! the run's report ([`crate::report::html::document`]): the figures, then each finding by
//! defect: a sequence finding with its scenario file, a frame finding with how it reproduces,
//! what of the frame matters, the APIs it was seen on, the broker's last words, the frame in
//! hex and the replay command.

use std::fmt::Write as _;
use std::path::Path;

use super::report::FuzzReport;
use crate::report::html::document;
use crate::report::junit::xml as esc;

/// The most bytes of a frame the page shows (the file has them all).
const FRAME_SHOWN: usize = 4096;

fn file_text(dir: &Path, file: &str) -> Option<String> {
    std::fs::read_to_string(dir.join(file)).ok()
}

fn frame_hex(dir: &Path, file: &str) -> String {
    let Ok(bytes) = std::fs::read(dir.join(file)) else {
        return "(the frame file is not there)".into();
    };
    let shown = &bytes[..bytes.len().min(FRAME_SHOWN)];
    let mut hex = crate::wire::hex::hex(shown);
    if bytes.len() > FRAME_SHOWN {
        let _ = write!(hex, " ... ({} bytes)", bytes.len());
    }
    hex
}

/// The page of `report`, whose finding files are in its findings directory.
pub fn page(report: &FuzzReport) -> String {
    let dir = Path::new(&report.findings_dir);
    let mut out = String::new();
    let _ = write!(
        out,
        "<p>{} against {}, seed {}, {:.0} s: {} sequences ({:.1}/s), {} requests</p>",
        esc(&report.target),
        esc(&report.oracle),
        report.seed,
        report.secs,
        report.sequences,
        report.sequences_per_sec,
        report.requests
    );
    let _ = write!(
        out,
        "<h2>Sequence findings ({})</h2>",
        report.findings.len()
    );
    for f in &report.findings {
        let _ = write!(
            out,
            "<details class=\"cause undocumented\"><summary><span class=\"sig\">{}</span> · {} action(s) (drawn {}) · after {:.0} s{}</summary>",
            esc(&f.signature),
            f.actions,
            f.drawn_actions,
            f.found_after_secs,
            match f.reproduced {
                true => "",
                false => " · <b>did not show again when written</b>",
            }
        );
        let scenario = file_text(dir, &f.file).unwrap_or_else(|| "(not there)".into());
        let _ = write!(
            out,
            "<p class=\"dim\">replay: <code>kconform run --scenarios {} {}</code></p><pre>{}</pre></details>",
            esc(&report.findings_dir),
            esc(f.file.trim_end_matches(".toml")),
            esc(&scenario)
        );
    }
    if let Some(frames) = &report.frames {
        let _ = write!(
            out,
            "<h2>Frame findings ({})</h2><p>{} frames ({:.0}/s), {} answered, {} closed; {} crash(es), {} restart(s)</p>",
            frames.findings.len(),
            frames.frames,
            frames.frames_per_sec,
            frames.answered,
            frames.closed,
            frames.crashes,
            frames.restarts
        );
        for f in &frames.findings {
            let _ = write!(
                out,
                "<details class=\"cause undocumented\"><summary><span class=\"sig\">{}</span> · seen {} time(s) on {}</summary>\
                 <p>reproduces {}; {} bytes as drawn, {} as written; what matters: {}</p>",
                esc(&f.signature),
                f.seen,
                esc(&f.seen_on.join(", ")),
                esc(&f.reproduces),
                f.found_bytes,
                f.bytes,
                esc(&f.what_matters())
            );
            if let Some(said) = &f.broker_said {
                let _ = write!(out, "<p>the broker said: <code>{}</code></p>", esc(said));
            }
            let mut files: Vec<&str> = f.needs.iter().map(String::as_str).collect();
            files.push(&f.file);
            let paths: Vec<String> = files
                .iter()
                .map(|file| dir.join(file).display().to_string())
                .collect();
            let _ = write!(
                out,
                "<pre>{}</pre><p class=\"dim\">replay: <code>kconform replay-frame {} --target {}</code></p></details>",
                esc(&frame_hex(dir, &f.file)),
                esc(&paths.join(" ")),
                esc(&frames.replay_target)
            );
        }
    }
    let verdict = match report.new_findings() {
        0 => "<span class=\"good\">no new finding</span>".to_owned(),
        n => format!("<span class=\"bad\">{n} new finding(s)</span>"),
    };
    document("kconform fuzz", &verdict, &out)
}
