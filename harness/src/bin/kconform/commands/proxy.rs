//! `kconform proxy`: relays to a broker, changing the answers of one API at one version (or
//! every answer), until interrupted.

use std::process::ExitCode;

use kconform::mutation::{Proxy, Scope};
use kconform::targets::{Running, TargetSpec};

use crate::args::ProxyArgs;

/// Runs `kconform proxy`; Ctrl-C ends the process.
pub async fn run(a: ProxyArgs) -> anyhow::Result<ExitCode> {
    let scope = Scope::from_flags(a.api.as_deref(), a.version, a.mutation)?;
    let target = match a.upstream.as_str() {
        "ref" => TargetSpec::REF,
        other => TargetSpec::parse(&format!("external={other}"))
            .map_err(|_| anyhow::anyhow!("--upstream '{other}': expected HOST:PORT or ref"))?,
    };
    let running = Running::start(&target).await?;
    let what = scope.to_string();
    let proxy = Proxy::start(a.listen, running.addr, scope)
        .await
        .map_err(|e| anyhow::anyhow!("cannot listen on {}: {e}", a.listen))?;
    outln!("{}", proxy.addr);
    // The address to use: said even under --quiet.
    eprintln!(
        "kconform: relaying {} to {} ({what}); Ctrl-C stops",
        proxy.addr, running.addr
    );
    std::future::pending::<()>().await;
    unreachable!("pending never completes")
}
