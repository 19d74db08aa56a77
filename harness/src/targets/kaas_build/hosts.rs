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

/// The marker above the lines kconform writes, before the domain of the cluster's names (one
/// marker per cluster: two clusters' lines live side by side, each taken out on its own).
const MARKER: &str = "# kconform build cluster";

/// The marker for a cluster whose names are `names`: [`MARKER`] and the domain they share.
fn marker(names: &[(String, IpAddr)]) -> String {
    let domain = names
        .first()
        .and_then(|(name, _)| name.split_once('.'))
        .map_or("", |(_, domain)| domain);
    format!("{MARKER} {domain}")
}

/// Rewrites `file` in place (it may be a bind mount, which a rename would not reach) with the
/// lines of an earlier cluster for these names, and its marker, left out, and `lines` added.
fn rewrite(file: &Path, names: &[(String, IpAddr)], lines: &str) -> std::io::Result<()> {
    let before = std::fs::read_to_string(file)?;
    let marker = marker(names);
    let ours = |line: &str| {
        line == marker
            || line == MARKER
            || line
                .split_whitespace()
                .skip(1)
                .any(|n| names.iter().any(|(name, _)| name == n))
    };
    let mut text: String = before
        .lines()
        .filter(|l| !ours(l))
        .map(|l| format!("{l}\n"))
        .collect();
    if !lines.is_empty() {
        text.push_str(&format!("{marker}\n{lines}"));
    }
    std::fs::write(file, text)
}

/// Takes the lines for these names out of `file` again (a cluster stopped); what else the
/// file says stays.
pub fn remove(names: &[(String, IpAddr)], file: &Path) {
    let _ = rewrite(file, names, "");
}

/// Makes each name resolve to its address, in `file` where it may (the lines an earlier
/// cluster wrote for the same names are replaced: the first line for a name is the one that
/// resolves).
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
    let written = rewrite(file, names, &text);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_earlier_clusters_lines_are_replaced_and_removed_at_the_end() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("hosts");
        let name = "kaas-0.kaas.kconform.svc.cluster.local".to_owned();
        std::fs::write(
            &file,
            format!("127.0.0.1 localhost\n{MARKER}\n127.77.9.1 {name}\n"),
        )
        .unwrap();
        let names = vec![(name.clone(), "127.77.3.1".parse().unwrap())];
        let outcome = ensure(&names, &file);
        assert_eq!(
            outcome,
            HostsOutcome::Written(vec![format!("127.77.3.1 {name}")])
        );
        let text = std::fs::read_to_string(&file).unwrap();
        assert_eq!(
            text,
            format!("127.0.0.1 localhost\n{MARKER} kaas.kconform.svc.cluster.local\n127.77.3.1 {name}\n")
        );
        remove(&names, &file);
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            "127.0.0.1 localhost\n"
        );
    }

    #[test]
    fn two_clusters_lines_live_side_by_side_and_leave_one_by_one() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("hosts");
        std::fs::write(&file, "127.0.0.1 localhost\n").unwrap();
        let one = vec![(
            "kaas-0.kaas.kconform-1.svc.cluster.local".to_owned(),
            "127.77.3.1".parse().unwrap(),
        )];
        let two = vec![(
            "kaas-0.kaas.kconform-2.svc.cluster.local".to_owned(),
            "127.77.3.1".parse().unwrap(),
        )];
        assert!(matches!(ensure(&one, &file), HostsOutcome::Written(_)));
        assert!(matches!(ensure(&two, &file), HostsOutcome::Written(_)));
        let both = std::fs::read_to_string(&file).unwrap();
        assert!(
            both.contains("kconform-1.svc") && both.contains("kconform-2.svc"),
            "{both}"
        );
        remove(&one, &file);
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            format!("127.0.0.1 localhost\n{MARKER} kaas.kconform-2.svc.cluster.local\n127.77.3.1 kaas-0.kaas.kconform-2.svc.cluster.local\n")
        );
    }
}
