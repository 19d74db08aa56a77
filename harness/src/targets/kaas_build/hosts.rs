//! The names a kaas build advertises (`kaas-N.<svc>.<namespace>.svc.cluster.local`, a suffix
//! it fixes) must resolve to each broker's address: written to the hosts file where kconform
//! may, else the one command that adds them is said. kaas-ref advertises addresses and needs
//! none.

use std::net::{IpAddr, ToSocketAddrs};
use std::path::Path;

/// The hosts file.
pub const HOSTS_FILE: &str = "/etc/hosts";

/// What became of the names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostsOutcome {
    /// Each resolved to its address already.
    Resolved,
    /// The lines were added to the file.
    Written(Vec<String>),
    /// The file could not be written: the command that adds them, and why.
    Refused {
        /// The command that adds them.
        command: String,
        /// Why the file could not be written.
        why: String,
    },
}

/// Whether `name` resolves to `ip`.
fn resolves(name: &str, ip: IpAddr) -> bool {
    (name, 0u16)
        .to_socket_addrs()
        .is_ok_and(|mut addrs| addrs.any(|a| a.ip() == ip))
}

/// Makes each name resolve to its address, in `file` where it may.
pub fn ensure(names: &[(String, IpAddr)], file: &Path) -> HostsOutcome {
    let missing: Vec<String> = names
        .iter()
        .filter(|(name, ip)| !resolves(name, *ip))
        .map(|(name, ip)| format!("{ip} {name}"))
        .collect();
    if missing.is_empty() {
        return HostsOutcome::Resolved;
    }
    let mut text = missing.join("\n");
    text.push('\n');
    let written = std::fs::OpenOptions::new()
        .append(true)
        .open(file)
        .and_then(|mut f| {
            std::io::Write::write_all(
                &mut f,
                format!("# kconform build cluster\n{text}").as_bytes(),
            )
        });
    match written {
        Ok(()) => HostsOutcome::Written(missing),
        Err(e) => HostsOutcome::Refused {
            command: format!(
                "printf '{}' | sudo tee -a {}",
                text.replace('\n', "\\n"),
                file.display()
            ),
            why: e.to_string(),
        },
    }
}
