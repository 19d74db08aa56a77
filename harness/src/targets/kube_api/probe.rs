//! Readiness as a kubelet decides it, for each broker's endpoint: its Kafka port accepts a
//! connection, its `/readyz` answers 200, and its pod's PartitionsReady condition is True.
//! Probed four times a second; a change is sent to the EndpointSlice watches.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::{Shared, PARTITIONS_READY};

/// How often every broker is probed.
const PERIOD: Duration = Duration::from_millis(250);

/// How long one probe may take.
const PROBE_DEADLINE: Duration = Duration::from_millis(500);

/// Probes every broker for as long as the stand-in serves.
pub async fn run(shared: Arc<Shared>) {
    loop {
        let seats = shared.store().seats().to_vec();
        let mut ready = Vec::with_capacity(seats.len());
        for seat in &seats {
            let up = answers(seat.kafka).await && readyz(seat.health).await;
            ready.push(up && shared.store().condition(&seat.pod, PARTITIONS_READY));
        }
        let change = shared.store().set_ready(&ready);
        if let Some(change) = change {
            tracing::info!(?ready, "EndpointSlice readiness");
            let _ = shared.changes.send(change);
        }
        tokio::time::sleep(PERIOD).await;
    }
}

/// Whether a TCP connection to `addr` is accepted in time.
async fn answers(addr: SocketAddr) -> bool {
    matches!(
        tokio::time::timeout(PROBE_DEADLINE, tokio::net::TcpStream::connect(addr)).await,
        Ok(Ok(_))
    )
}

/// Whether `GET /readyz` at `addr` answers 200 in time.
async fn readyz(addr: SocketAddr) -> bool {
    let probe = async {
        let mut stream = tokio::net::TcpStream::connect(addr).await.ok()?;
        let request = format!("GET /readyz HTTP/1.1\r\nhost: {addr}\r\nconnection: close\r\n\r\n");
        stream.write_all(request.as_bytes()).await.ok()?;
        let mut head = [0u8; 16];
        let mut read = 0;
        while read < head.len() {
            match stream.read(&mut head[read..]).await.ok()? {
                0 => break,
                n => read += n,
            }
        }
        let line = String::from_utf8_lossy(&head[..read]).to_string();
        Some(line.starts_with("HTTP/1.1 200") || line.starts_with("HTTP/1.0 200"))
    };
    matches!(
        tokio::time::timeout(PROBE_DEADLINE, probe).await,
        Ok(Some(true))
    )
}
