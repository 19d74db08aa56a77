//! Where log lines go: kconform's own warnings to stderr; the logs of what kconform runs in its
//! own process for a run (kaas-ref's, the stand-in Kubernetes API's) to a file of the run,
//! named on stderr the first time it is written to, so that a PASSED run is not strewn with a
//! broker's `WARN ... marker refused` lines, nor a chaos run's output with the stand-in API's
//! every second. `RUST_LOG` still decides what stderr shows; `--quiet` leaves only errors.

use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use tracing_subscriber::filter::{EnvFilter, Targets};
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::Layer;

/// The log targets of what kconform runs in its own process for a run: a broker's log, not
/// kconform's.
const BROKER_TARGETS: [&str; 2] = ["reference_broker", "kconform::targets::kube_api"];

/// Sets the logs up: stderr as `RUST_LOG` says (default: warnings, without the brokers' and
/// librdkafka's own lines; `quiet`: errors alone), the brokers' lines to a file of the run.
pub fn init(quiet: bool) {
    let default = match quiet {
        true => "error".to_owned(),
        false => {
            let brokers: Vec<String> = BROKER_TARGETS.iter().map(|t| format!("{t}=off")).collect();
            // librdkafka's own error lines are silenced: what a client raised is in the
            // transcript of `kconform clients`, said once.
            format!("warn,rdkafka=off,librdkafka=off,{}", brokers.join(","))
        }
    };
    let stderr_filter = match quiet {
        true => EnvFilter::new(default),
        false => EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default)),
    };
    let stderr = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        // Colour only where stderr is a terminal (and NO_COLOR is not set), as the report's.
        .with_ansi(console::colors_enabled_stderr())
        .with_filter(stderr_filter);
    let to_file = BROKER_TARGETS.iter().fold(Targets::new(), |t, target| {
        t.with_target(*target, tracing::Level::WARN)
    });
    let file = tracing_subscriber::fmt::layer()
        .with_writer(RunLog::default())
        .with_ansi(false)
        .with_filter(to_file);
    tracing_subscriber::registry()
        .with(stderr)
        .with(file)
        .init();
}

/// The brokers' log of this run, made when first written to (a run that logs nothing makes no
/// file), its path said on stderr then.
#[derive(Clone, Default)]
struct RunLog {
    file: Arc<Mutex<Option<std::fs::File>>>,
}

impl RunLog {
    fn path() -> PathBuf {
        std::env::temp_dir().join(format!("kconform-{}-brokers.log", std::process::id()))
    }
}

impl Write for RunLog {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut file = self
            .file
            .lock()
            .map_err(|_| std::io::Error::other("the log's lock is poisoned"))?;
        if file.is_none() {
            let path = RunLog::path();
            let opened = std::fs::File::create(&path)?;
            note!(
                "kconform: the logs of the brokers it runs in its own process (kaas-ref, the stand-in Kubernetes API) are in {}",
                path.display()
            );
            *file = Some(opened);
        }
        match file.as_mut() {
            Some(f) => f.write(buf),
            None => Ok(buf.len()),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self.file.lock().ok().as_mut().and_then(|f| f.as_mut()) {
            Some(f) => f.flush(),
            None => Ok(()),
        }
    }
}

impl<'a> MakeWriter<'a> for RunLog {
    type Writer = RunLog;

    fn make_writer(&'a self) -> Self::Writer {
        self.clone()
    }
}
