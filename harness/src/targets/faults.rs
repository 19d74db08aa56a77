//! What a scenario does to a broker of a cluster (kill, restart, pause, resume), and, for a
//! cluster kconform did not start (`external:N=HOST:PORT`), the commands the user gave to do
//! it (`--fault-cmd pause='kill -STOP $(cat /run/kaas-{node}.pid)'`): so the cluster scenarios
//! run on kaas pods in their own cluster as on the clusters kconform starts.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::Duration;

/// What a step does to a broker of the cluster. Whatever a scenario leaves undone (a broker
/// killed or paused) is undone when it ends, however it ended, so the next finds the cluster
/// whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum BrokerAct {
    /// Kills it (SIGKILL; a kaas-ref broker in process loses its memory and connections).
    Kill,
    /// Starts a killed broker again, and waits until it serves and the cluster is whole.
    Restart,
    /// Pauses it where it is (SIGSTOP; a kaas-ref broker in process freezes): its connections
    /// stay open, what is sent to it waits, its peers count it down.
    Pause,
    /// Lets a paused broker go on (SIGCONT), and waits until it is back in sync.
    Resume,
    /// Holds the transaction markers sent to it, the broker otherwise serving: on Apache its
    /// peers' WriteTxnMarkers wait at its gate (`apache::marker_gate`), on kaas-ref its
    /// MarkerWatcher leaves its inbox be. A transaction whose markers it owes stays Prepare*
    /// on Apache, and its partitions' last stable offset stays where it was on both.
    HoldMarkers,
    /// Lets the markers held for it through.
    ReleaseMarkers,
    /// Fills its disk: every write it makes to its data directory fails as on a full disk
    /// (ENOSPC), reads and answers going on. On kaas-ref the data directory is the volume all
    /// its brokers share, so every broker's writes fail (kaas-ref's storage fault switch); an
    /// external cluster's by the user's command. Apache's cannot be filled here (no small
    /// filesystem to mount), so a scenario that does it runs on kaas only.
    FillDisk,
    /// Frees the disk filled.
    FreeDisk,
}

impl BrokerAct {
    /// Every act, in the order a scenario file's keys are checked.
    pub const ALL: [BrokerAct; 8] = [
        BrokerAct::Kill,
        BrokerAct::Restart,
        BrokerAct::Pause,
        BrokerAct::Resume,
        BrokerAct::HoldMarkers,
        BrokerAct::ReleaseMarkers,
        BrokerAct::FillDisk,
        BrokerAct::FreeDisk,
    ];

    /// Its key in a scenario file and in `--fault-cmd`, which is also the verb a report uses.
    pub fn key(self) -> &'static str {
        match self {
            BrokerAct::Kill => "kill",
            BrokerAct::Restart => "restart",
            BrokerAct::Pause => "pause",
            BrokerAct::Resume => "resume",
            BrokerAct::HoldMarkers => "hold_markers",
            BrokerAct::ReleaseMarkers => "release_markers",
            BrokerAct::FillDisk => "fill_disk",
            BrokerAct::FreeDisk => "free_disk",
        }
    }

    /// What a refusal says a step does ("pauses a broker").
    pub fn doing(self) -> &'static str {
        match self {
            BrokerAct::Kill => "kills",
            BrokerAct::Restart => "restarts",
            BrokerAct::Pause => "pauses",
            BrokerAct::Resume => "resumes",
            BrokerAct::HoldMarkers => "holds the markers to",
            BrokerAct::ReleaseMarkers => "lets through the markers to",
            BrokerAct::FillDisk => "fills the disk of",
            BrokerAct::FreeDisk => "frees the disk of",
        }
    }

    /// The act that undoes it, for those a scenario's end must undo when it did not.
    pub fn undo(self) -> Option<BrokerAct> {
        match self {
            BrokerAct::Kill => Some(BrokerAct::Restart),
            BrokerAct::Pause => Some(BrokerAct::Resume),
            BrokerAct::HoldMarkers => Some(BrokerAct::ReleaseMarkers),
            BrokerAct::FillDisk => Some(BrokerAct::FreeDisk),
            _ => None,
        }
    }

    /// Whether it fills or frees a disk, which only kaas-ref's storage fault switch (or a
    /// user's command) can do: Apache's brokers cannot, so a scenario that does it is left out
    /// of a run with Apache, and said to be.
    pub fn needs_a_disk_switch(self) -> bool {
        matches!(self, BrokerAct::FillDisk | BrokerAct::FreeDisk)
    }

    /// Every act's key, as a refusal lists them ("kill, restart, pause, ...").
    pub fn keys() -> String {
        BrokerAct::ALL.map(BrokerAct::key).join(", ")
    }

    /// What the report says it did ("killed broker 2").
    pub fn done(self) -> &'static str {
        match self {
            BrokerAct::Kill => "killed",
            BrokerAct::Restart => "restarted",
            BrokerAct::Pause => "paused",
            BrokerAct::Resume => "resumed",
            BrokerAct::HoldMarkers => "held the markers to",
            BrokerAct::ReleaseMarkers => "let through the markers to",
            BrokerAct::FillDisk => "filled the disk of",
            BrokerAct::FreeDisk => "freed the disk of",
        }
    }
}

/// How long a fault command may take before it counts as failed (a restart command may wait
/// for its broker to listen; the broker's catching up is waited for by kconform after it).
pub const COMMAND_DEADLINE: Duration = Duration::from_secs(120);

/// The commands a user gave for the acts a scenario may do to a broker of a cluster kconform
/// did not start: each a shell command (`sh -c`) in which `{node}` is the broker's node id and
/// `{addr}` its HOST:PORT from the cluster's Metadata. An act with no command cannot be done:
/// the scenarios that need it are left out, and said to be.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FaultCommands {
    commands: BTreeMap<BrokerAct, String>,
}

impl FaultCommands {
    /// Reads `ACT=COMMAND` arguments (ACT: kill, restart, pause, resume, hold_markers,
    /// release_markers, fill_disk or free_disk), each act once.
    pub fn parse(args: &[String]) -> Result<FaultCommands, String> {
        let mut commands = BTreeMap::new();
        for arg in args {
            let (key, command) = arg.split_once('=').ok_or_else(|| {
                format!(
                    "--fault-cmd '{arg}': give ACT=COMMAND, ACT one of {}",
                    BrokerAct::keys()
                )
            })?;
            let act = BrokerAct::ALL
                .into_iter()
                .find(|a| a.key() == key.trim())
                .ok_or_else(|| {
                    format!(
                        "--fault-cmd '{arg}': '{key}' is no act ({})",
                        BrokerAct::keys()
                    )
                })?;
            if command.trim().is_empty() {
                return Err(format!("--fault-cmd {key}= gives no command"));
            }
            if commands.insert(act, command.to_owned()).is_some() {
                return Err(format!("--fault-cmd {key}= is given twice"));
            }
        }
        Ok(FaultCommands { commands })
    }

    /// Whether a command was given for `act`.
    pub fn has(&self, act: BrokerAct) -> bool {
        self.commands.contains_key(&act)
    }

    /// The command for `act` on broker `node` at `addr`, placeholders filled in.
    pub fn command(&self, act: BrokerAct, node: i32, addr: SocketAddr) -> Option<String> {
        let template = self.commands.get(&act)?;
        Some(
            template
                .replace("{node}", &node.to_string())
                .replace("{addr}", &addr.to_string()),
        )
    }

    /// Runs the command for `act` on broker `node` (`sh -c`, within [`COMMAND_DEADLINE`]);
    /// why not, in one line, when it is missing, cannot start, fails or takes too long.
    pub async fn run(&self, act: BrokerAct, node: i32, addr: SocketAddr) -> Result<(), String> {
        let command = self.command(act, node, addr).ok_or_else(|| {
            format!(
                "no --fault-cmd {}=COMMAND was given (the command that does it to a broker)",
                act.key()
            )
        })?;
        tracing::info!(act = act.key(), node, %command, "fault command");
        let child = tokio::process::Command::new("sh")
            .arg("-c")
            .arg(&command)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("`{command}` did not start: {e}"))?;
        let output = tokio::time::timeout(COMMAND_DEADLINE, child.wait_with_output())
            .await
            .map_err(|_| format!("`{command}` took over {COMMAND_DEADLINE:?}"))?
            .map_err(|e| format!("`{command}`: {e}"))?;
        if output.status.success() {
            return Ok(());
        }
        let stderr = String::from_utf8_lossy(&output.stderr);
        let last = stderr.lines().rev().find(|l| !l.trim().is_empty());
        Err(match last {
            Some(line) => format!("`{command}` failed ({}): {}", output.status, line.trim()),
            None => format!("`{command}` failed ({})", output.status),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr() -> SocketAddr {
        "127.0.0.1:9093".parse().unwrap()
    }

    #[test]
    fn commands_are_read_per_act_with_their_placeholders_filled() {
        let faults = FaultCommands::parse(&[
            "pause=kill -STOP $(cat /run/{node}.pid)".into(),
            "resume=echo {addr}".into(),
        ])
        .unwrap();
        assert!(faults.has(BrokerAct::Pause) && !faults.has(BrokerAct::Kill));
        assert_eq!(
            faults.command(BrokerAct::Pause, 1, addr()).unwrap(),
            "kill -STOP $(cat /run/1.pid)"
        );
        assert_eq!(
            faults.command(BrokerAct::Resume, 1, addr()).unwrap(),
            "echo 127.0.0.1:9093"
        );
        for (bad, why) in [
            ("pause", "give ACT=COMMAND"),
            ("stop=x", "'stop' is no act"),
            ("kill=  ", "gives no command"),
        ] {
            let e = FaultCommands::parse(&[bad.into()]).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
        let e = FaultCommands::parse(&["kill=a".into(), "kill=b".into()]).unwrap_err();
        assert!(e.contains("given twice"), "{e}");
    }

    #[tokio::test]
    async fn a_command_that_fails_says_how_in_one_line() {
        let faults = FaultCommands::parse(&[
            "kill=echo noise >&2; echo 'no such pod: {node}' >&2; exit 3".into(),
            "pause=true".into(),
        ])
        .unwrap();
        faults.run(BrokerAct::Pause, 2, addr()).await.unwrap();
        let e = faults.run(BrokerAct::Kill, 2, addr()).await.unwrap_err();
        assert!(
            e.contains("no such pod: 2") && e.contains("exit status: 3"),
            "{e}"
        );
        let e = faults.run(BrokerAct::Restart, 2, addr()).await.unwrap_err();
        assert!(e.contains("no --fault-cmd restart=COMMAND"), "{e}");
    }
}
