//! Ports for listeners whose address must be known before they listen: a local cluster's
//! brokers (each peer is told the others' addresses first, and a restarted broker comes back
//! on its own), and the listeners of an Apache JVM the harness launches. The usual trick, bind
//! port 0 and release it, draws from the kernel's ephemeral range, which every outbound
//! connection also takes its local port from: between the release and the broker's bind, any
//! connection the tests make may take it ("Address already in use", seen in CI). So ports are
//! chosen below that range, each tried by binding it, and one process never hands out the same
//! port twice.

use std::collections::BTreeSet;
use std::net::{IpAddr, TcpListener};
use std::sync::Mutex;

/// The ports this process has handed out (a port handed out is not bound until its broker
/// starts, so a bind test alone would hand it out again).
static HANDED_OUT: Mutex<BTreeSet<u16>> = Mutex::new(BTreeSet::new());

/// The lowest port chosen: above the ports services conventionally listen on.
const LOWEST: u16 = 10_000;

/// The first port of the kernel's ephemeral range (Linux's
/// `/proc/sys/net/ipv4/ip_local_port_range`; 32768, its default, where that cannot be read).
fn ephemeral_start() -> u16 {
    std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|t| t.split_whitespace().next()?.parse().ok())
        .unwrap_or(32_768)
}

/// A port on `host` that nothing listens on now, below the ephemeral range, not handed out
/// before by this process; where that range leaves no room (a kernel configured so), a port
/// the kernel picks, as before.
pub fn free_port(host: IpAddr) -> std::io::Result<u16> {
    let top = ephemeral_start();
    if top > LOWEST {
        let span = u32::from(top - LOWEST);
        // Start somewhere different in each process, so that processes running side by
        // side rarely try the same ports first.
        let seed = std::process::id().wrapping_mul(2_654_435_761)
            ^ std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.subsec_nanos());
        let mut handed = HANDED_OUT.lock().unwrap_or_else(|e| e.into_inner());
        for i in 0..span {
            let port = LOWEST + ((seed.wrapping_add(i.wrapping_mul(7919))) % span) as u16;
            if handed.contains(&port) {
                continue;
            }
            if TcpListener::bind((host, port)).is_ok() {
                handed.insert(port);
                return Ok(port);
            }
        }
    }
    Ok(TcpListener::bind((host, 0))?.local_addr()?.port())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ports come from below the ephemeral range, free, and never twice from one process.
    #[test]
    fn ports_are_below_the_ephemeral_range_free_and_never_handed_out_twice() {
        let host: IpAddr = "127.0.0.1".parse().unwrap();
        let ports: Vec<u16> = (0..50).map(|_| free_port(host).unwrap()).collect();
        let distinct: BTreeSet<u16> = ports.iter().copied().collect();
        assert_eq!(distinct.len(), ports.len());
        let top = ephemeral_start();
        assert!(ports.iter().all(|p| (LOWEST..top).contains(p)), "{ports:?}");
        for p in &ports {
            TcpListener::bind((host, *p)).expect("each is free");
        }
    }
}
