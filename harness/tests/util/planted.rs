//! kaas-ref with bugs planted, as a process of its own: a crash must kill a process that is not
//! the test's. The process is this test binary started again to run [`broker_process`] alone
//! (an ignored test, which does nothing unless started so), with the bugs to plant and the
//! address to listen on in its environment. [`command`] is the shell command that starts it,
//! for `kconform fuzz --broker-cmd` and the wire fuzzer's keeper.

#![allow(dead_code)]

use std::net::{IpAddr, SocketAddr};

use reference_broker::planted::{Bug, Planted};
use reference_broker::{Broker, BrokerConfig};

/// The bugs to plant, by name, separated by commas.
const BUGS: &str = "KCONFORM_PLANTED_CHILD";
/// Where to listen.
const LISTEN: &str = "KCONFORM_PLANTED_LISTEN";

/// The planted broker process: serves until it is killed when started by [`command`].
#[test]
#[ignore = "the planted broker process the crash tests start (KCONFORM_PLANTED_CHILD); nothing to check alone"]
fn broker_process() {
    let Ok(bugs) = std::env::var(BUGS) else {
        return;
    };
    let listen: SocketAddr = std::env::var(LISTEN)
        .expect("a listen address")
        .parse()
        .expect("a socket address");
    let planted = bugs
        .split(',')
        .filter(|b| !b.is_empty())
        .map(|b| Bug::named(b).unwrap_or_else(|| panic!("no planted bug {b}")))
        .fold(Planted::default(), Planted::with);
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    runtime.block_on(async {
        let _broker = Broker::start(BrokerConfig {
            planted,
            listen,
            ..BrokerConfig::for_tests()
        })
        .await
        .expect("the planted broker starts");
        eprintln!("planted broker listening on {listen} with {bugs}");
        std::future::pending::<()>().await;
    });
}

/// The shell command that starts [`broker_process`] with `bugs` planted, listening on `addr`.
pub fn command(bugs: &[Bug], addr: SocketAddr) -> String {
    let exe = std::env::current_exe().expect("the test binary");
    let names: Vec<String> = bugs.iter().map(|b| format!("{b:?}")).collect();
    // libtest names a test by its module path without the crate's name.
    let module = module_path!().split_once("::").map_or("", |(_, m)| m);
    format!(
        "exec env {BUGS}={} {LISTEN}={addr} '{}' {module}::broker_process --exact --ignored --nocapture --quiet",
        names.join(","),
        exe.display()
    )
}

/// A free address on the loopback for a broker to listen on.
pub fn free_addr() -> SocketAddr {
    let ip = IpAddr::from([127, 0, 0, 1]);
    let port = reference_broker::ports::free_port(ip).expect("a free port");
    SocketAddr::new(ip, port)
}
