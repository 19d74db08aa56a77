//! `kconform chaos --html FILE`: a chaos run on one self-contained page, in the shell every
//! kconform page shares ([`crate::report::html::document`]): the replay line, then per
//! cluster the timeline (transactions ended per second, stacked by outcome, under the faults'
//! spans), the faults as done, what each worker did, and every anomaly the checker found, those
//! the control did not show marked.

use std::fmt::Write as _;

use super::checker::{Anomaly, Kind};
use super::history::Second;
use super::report::{control_kinds, ChaosReport, TargetChaos};
use crate::report::html::document;
use crate::report::junit::xml as esc;

/// The timeline's width when it fits (a long run takes [`MIN_PX_PER_SEC`] a second and
/// scrolls), and its height, in pixels.
const WIDTH: u64 = 900;
const MIN_PX_PER_SEC: u64 = 4;
const HEIGHT: u64 = 120;

/// The timeline as inline SVG: a bar per second, committed (green) under aborted (grey) under
/// unknown (red), scaled to the busiest second; each fault a shaded span from when it was done
/// to when the broker was back, labelled with its act and broker.
fn timeline(t: &TargetChaos, duration_secs: u64) -> String {
    let (secs, px) = scale(t, duration_secs);
    let busiest = t
        .timeline
        .iter()
        .map(|s| s.committed + s.aborted + s.unknown)
        .max()
        .unwrap_or(0)
        .max(1) as u64;
    let mut svg = open_svg("timeline", "transactions per second and faults", secs * px);
    faults(&mut svg, t, secs, px);
    for (i, s) in t.timeline.iter().enumerate() {
        let x = i as u64 * px;
        let mut y = HEIGHT;
        for (n, colour) in [
            (s.committed, "#0a7d22"),
            (s.aborted, "#999"),
            (s.unknown, "#b00020"),
        ] {
            let h = n as u64 * HEIGHT / busiest;
            if h > 0 {
                y -= h;
                let _ = write!(
                    svg,
                    "<rect x=\"{x}\" y=\"{y}\" width=\"{}\" height=\"{h}\" fill=\"{colour}\"/>",
                    px - 1
                );
            }
        }
    }
    ticks(&mut svg, secs, px);
    svg
}

/// The opening tag of a picture `width` wide, with room for its ticks below.
fn open_svg(class: &str, label: &str, width: u64) -> String {
    let height = HEIGHT + 16;
    format!(
        "<svg class=\"{class}\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" role=\"img\" aria-label=\"{label}\">"
    )
}

/// The seconds a cluster's pictures span, and the pixels a second takes.
fn scale(t: &TargetChaos, duration_secs: u64) -> (u64, u64) {
    let last_back = t.faults.iter().filter_map(|f| f.back_ms).max().unwrap_or(0);
    let secs = duration_secs
        .max(t.timeline.len() as u64)
        .max(last_back.div_ceil(1000))
        .max(1);
    (secs, (WIDTH / secs).max(MIN_PX_PER_SEC))
}

/// Each fault a shaded span from when it was done to when the broker was back, labelled.
fn faults(svg: &mut String, t: &TargetChaos, secs: u64, px: u64) {
    for f in &t.faults {
        let from = f.done_ms * px / 1000;
        let to = f.back_ms.unwrap_or(secs * 1000) * px / 1000;
        let _ = write!(
            svg,
            "<rect class=\"fault\" x=\"{from}\" y=\"0\" width=\"{}\" height=\"{HEIGHT}\" fill=\"#f4c7c3\" opacity=\"0.7\"><title>{} broker {} at {:.1} s</title></rect><text x=\"{from}\" y=\"10\" font-size=\"9\">{} {}</text>",
            to.saturating_sub(from).max(1),
            esc(f.fault.act),
            f.fault.node,
            f.done_ms as f64 / 1000.0,
            esc(f.fault.act),
            f.fault.node
        );
    }
}

/// The seconds along the bottom, and the end of the picture.
fn ticks(svg: &mut String, secs: u64, px: u64) {
    let every = if secs > 300 { 60 } else { 10 };
    for tick in (0..=secs).step_by(every) {
        let _ = write!(
            svg,
            "<text x=\"{}\" y=\"{}\" font-size=\"9\">{tick}s</text>",
            tick * px,
            HEIGHT + 12
        );
    }
    svg.push_str("</svg>");
}

/// How long transactions took, per second they ended in, as inline SVG under the same
/// faults: the median (blue) and the 99th percentile (orange), scaled to the slowest; `None`
/// when no client said when its transactions began.
fn latency(t: &TargetChaos, duration_secs: u64) -> Option<String> {
    let slowest = t.timeline.iter().filter_map(|s| s.p99_ms).max()?.max(1);
    let (secs, px) = scale(t, duration_secs);
    let mut svg = open_svg(
        "latency",
        "transaction latency per second and faults",
        secs * px,
    );
    faults(&mut svg, t, secs, px);
    for (pick, colour, name) in [
        (
            (|s| s.p50_ms) as fn(&Second) -> Option<u64>,
            "#1f5fbf",
            "p50",
        ),
        (|s| s.p99_ms, "#e07b00", "p99"),
    ] {
        // A line through consecutive seconds only: a second in which no transaction ended
        // (a broker paused) breaks it, rather than a line drawn across the gap.
        let mut runs: Vec<Vec<(u64, u64)>> = vec![Vec::new()];
        for (i, s) in t.timeline.iter().enumerate() {
            match (pick(s), runs.last_mut()) {
                (Some(ms), Some(run)) => {
                    run.push((i as u64 * px + px / 2, HEIGHT - ms * HEIGHT / slowest))
                }
                _ => runs.push(Vec::new()),
            }
        }
        for run in runs.iter().filter(|r| !r.is_empty()) {
            let points: Vec<String> = run.iter().map(|(x, y)| format!("{x},{y}")).collect();
            let _ = write!(
                svg,
                "<polyline fill=\"none\" stroke=\"{colour}\" stroke-width=\"1.5\" points=\"{}\"><title>{name}</title></polyline>",
                points.join(" ")
            );
            if let [(x, y)] = run[..] {
                let _ = write!(
                    svg,
                    "<circle cx=\"{x}\" cy=\"{y}\" r=\"1.5\" fill=\"{colour}\"/>"
                );
            }
        }
    }
    // Below the faults' labels, which take the top line.
    let _ = write!(
        svg,
        "<text x=\"2\" y=\"22\" font-size=\"9\">{slowest} ms</text>"
    );
    ticks(&mut svg, secs, px);
    Some(svg)
}

/// One cluster's section.
fn target(out: &mut String, report: &ChaosReport, t: &TargetChaos) {
    let control = control_kinds(&report.targets);
    let role = match t.control {
        true => " (the control)",
        false => "",
    };
    let _ = write!(
        out,
        "<h2>{}{role}</h2><p class=\"dim\">{} · {:.0} s · {} records checked</p>",
        esc(&t.name),
        esc(&t.origin),
        t.wall_secs,
        t.records_checked
    );
    if let Some(e) = &t.error {
        let _ = write!(out, "<p class=\"bad\">did not finish: {}</p>", esc(e));
    }
    if let Some(why) = &t.no_faults_because {
        let _ = write!(out, "<p>no faults: {}</p>", esc(why));
    }
    out.push_str("<div class=\"scroll\">");
    out.push_str(&timeline(t, report.duration_secs));
    out.push_str("</div><p class=\"dim\">transactions ended per second: <span class=\"good\">committed</span>, aborted (grey), <span class=\"bad\">outcome unknown</span>; shaded: a fault until its broker was back</p>");
    if let Some(svg) = latency(t, report.duration_secs) {
        let _ = write!(
            out,
            "<div class=\"scroll\">{svg}</div><p class=\"dim\">how long the transactions that ended in each second took, begin to end: median (blue), 99th percentile (orange); shaded: the same faults</p>"
        );
    }
    if !t.faults.is_empty() {
        out.push_str(
            "<table><tr><th>at</th><th>fault</th><th>broker</th><th>held</th><th>back</th></tr>",
        );
        for f in &t.faults {
            let back = match (f.back_ms, &f.error) {
                (_, Some(e)) => format!("<span class=\"bad\">failed: {}</span>", esc(e)),
                (Some(b), None) => format!("{:.1} s", b as f64 / 1000.0),
                (None, None) => "-".into(),
            };
            let _ = write!(
                out,
                "<tr><td>{:.1} s</td><td>{}</td><td>{}</td><td>{:.1} s</td><td>{back}</td></tr>",
                f.done_ms as f64 / 1000.0,
                esc(f.fault.act),
                f.fault.node,
                f.fault.hold_ms as f64 / 1000.0
            );
        }
        out.push_str("</table>");
    }
    out.push_str("<h3>Workers</h3><table><tr><th>worker</th><th>committed</th><th>aborted on purpose</th><th>aborted after an error</th><th>unknown</th><th>new producers</th><th>client errors</th></tr>");
    for (i, w) in t.workers.iter().enumerate() {
        let errors: Vec<String> = w.errors.iter().map(|(c, n)| format!("{c} x{n}")).collect();
        let hung = match &w.hung {
            Some(h) => format!(
                " <span class=\"bad\">hung in {} since {:.1} s</span>",
                esc(h.call),
                h.since_ms as f64 / 1000.0
            ),
            None => String::new(),
        };
        let _ = write!(
            out,
            "<tr><td>{i}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}{hung}</td></tr>",
            w.committed,
            w.aborted_on_purpose,
            w.aborted_after_error,
            w.unknown,
            w.new_producers,
            esc(&errors.join(", "))
        );
    }
    out.push_str("</table>");
    let _ = write!(
        out,
        "<h3>What the checker found ({})</h3>",
        t.anomalies.len()
    );
    match (&t.inconclusive, t.kinds().is_empty()) {
        (Some(why), _) => {
            let _ = write!(out, "<p class=\"bad\">INCONCLUSIVE: {}</p>", esc(why));
        }
        (None, true) => out.push_str("<p class=\"good\">no anomaly</p>"),
        (None, false) => {}
    }
    kinds(out, t, &control);
}

/// How many examples of a kind the page shows before the rest, behind a click.
const EXAMPLES: usize = 3;

/// The anomalies grouped by kind, worst first: each kind with its count, whether the control
/// shows it, where its transactions were placed, a few examples, and the rest behind a click.
fn kinds(out: &mut String, t: &TargetChaos, control: &std::collections::BTreeSet<Kind>) {
    for (kind, allowed, of) in t.by_kind() {
        let new = !allowed && !t.control && !control.contains(&kind);
        let together = of
            .iter()
            .filter_map(|a| a.placement.as_ref())
            .filter(|p| p.leaders.values().all(|&l| l == p.coordinator))
            .count();
        let placed = of.iter().filter(|a| a.placement.is_some()).count();
        let placement = match placed {
            0 => String::new(),
            n => format!(
                " · {together} with coordinator and leaders together, {} apart",
                n - together
            ),
        };
        let _ = write!(
            out,
            "<div class=\"cause {}\"><p><b>{}</b> × {}{}{placement}</p><pre>{}</pre>",
            match new {
                true => "undocumented",
                false => "documented",
            },
            esc(kind.name()),
            of.len(),
            match (allowed, new, t.control) {
                (true, _, _) => " · allowed: Kafka allows it, never a failure",
                (false, true, _) => " · <strong class=\"bad\">not shown by the control</strong>",
                (false, false, true) => " · the control's own",
                (false, false, false) => " · the control shows it too",
            },
            esc(&examples(&of[..of.len().min(EXAMPLES)]))
        );
        if of.len() > EXAMPLES {
            let _ = write!(
                out,
                "<details><summary>{} more</summary><pre>{}</pre></details>",
                of.len() - EXAMPLES,
                esc(&examples(&of[EXAMPLES..]))
            );
        }
        out.push_str("</div>");
    }
}

/// Findings, one per line.
fn examples(of: &[&Anomaly]) -> String {
    of.iter()
        .map(|a| a.detail.as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The page of `report`.
pub fn page(report: &ChaosReport) -> String {
    let verdict = match report.verdict {
        super::report::Verdict::Inconclusive => "<span class=\"bad\">INCONCLUSIVE</span>",
        _ => crate::report::html::verdict(report.passed),
    };
    let mut out = String::new();
    let _ = write!(
        out,
        "<p>seed {}, {} s, {} workers, {} output partitions, replication {}, coordinators {}</p><p class=\"dim\">replay: <code>{}</code></p>",
        report.seed,
        report.duration_secs,
        report.shape.workers,
        report.shape.outputs,
        report.shape.replication,
        report.placement.name(),
        esc(&report.replay)
    );
    for t in &report.targets {
        target(&mut out, report, t);
    }
    document("kconform chaos", verdict, &out)
}
