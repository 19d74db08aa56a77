//! Progress on stderr while brokers start and scenarios run: a spinner for a broker that takes
//! seconds to start (Apache), a bar per target for the scenarios. Both hide themselves when
//! stderr is not a terminal, so CI logs stay clean.

use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

/// A spinner shown while `target` starts.
pub fn starting(target: &str) -> ProgressBar {
    let bar = ProgressBar::new_spinner().with_message(format!("starting {target}"));
    bar.set_style(
        ProgressStyle::with_template("{spinner} {msg} ({elapsed})")
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    bar.enable_steady_tick(Duration::from_millis(120));
    bar
}

/// A bar over `count` scenarios on `target`, its message the scenario that started last.
pub fn scenarios(target: &str, count: usize) -> ProgressBar {
    let bar = ProgressBar::new(count as u64);
    bar.set_style(
        ProgressStyle::with_template(&format!(
            "{target:>8} [{{bar:30}}] {{pos}}/{{len}} {{elapsed}} {{wide_msg}}"
        ))
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> "),
    );
    bar.enable_steady_tick(Duration::from_millis(250));
    bar
}

#[cfg(test)]
mod tests {
    #[test]
    fn bars_build_with_their_templates() {
        let b = super::scenarios("apache", 3);
        b.inc(2);
        assert_eq!(b.position(), 2);
        assert_eq!(b.length(), Some(3));
        super::starting("ref").finish_and_clear();
    }
}
