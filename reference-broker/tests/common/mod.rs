//! Helpers shared by the tests that run `kaas-ref` as a separate process.
#![allow(dead_code)]

pub mod wire;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

/// A running `kaas-ref` process; killed (SIGKILL) when dropped.
pub struct KaasRef {
    /// The process.
    pub child: Child,
    /// The address it printed.
    pub addr: String,
}

impl KaasRef {
    /// Starts `kaas-ref` on `listen` with `data_dir` and extra flags, and waits for its address.
    pub fn start(data_dir: &Path, listen: &str, extra: &[&str]) -> KaasRef {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_kaas-ref"));
        // Gone with a test binary killed from outside: every test starts its brokers on its
        // own thread, which lives until it ends.
        reference_broker::child::dies_with_its_thread(&mut cmd);
        let mut child = cmd
            .args(["--listen", listen, "--data-dir"])
            .arg(data_dir)
            .args(["--group-initial-rebalance-delay-ms", "0"])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("kaas-ref starts");
        let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
        let addr = loop {
            let line = lines
                .next()
                .expect("kaas-ref printed its address")
                .expect("readable stdout");
            if let Some(a) = line.strip_prefix("kaas-ref listening on ") {
                break a.to_owned();
            }
        };
        // Keep draining stdout so the broker never writes into a closed pipe.
        std::thread::spawn(move || lines.for_each(drop));
        KaasRef { child, addr }
    }

    /// kill -9, and wait for the process to be gone.
    pub fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Whether the process is still running.
    pub fn running(&mut self) -> bool {
        self.child.try_wait().map(|s| s.is_none()).unwrap_or(false)
    }
}

impl Drop for KaasRef {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
