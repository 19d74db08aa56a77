//! `/readyz` and `/healthz` over HTTP, as a kaas pod serves them on `KAAS_HEALTH_ADDR`: what
//! decides, with the pod's PartitionsReady condition, whether its endpoint is ready. kaas-ref
//! starts it once it serves, so both answer 200 while the process lives.

use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// How long a health request may take to arrive: a prober that stalls is dropped.
const REQUEST_DEADLINE: Duration = Duration::from_secs(5);

/// Listens on `addr` and answers every GET 200 (`ok`), anything unreadable 400. The bound
/// address, or why it could not listen.
pub async fn serve(addr: SocketAddr) -> std::io::Result<SocketAddr> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let bound = listener.local_addr()?;
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            tokio::spawn(answer(stream));
        }
    });
    Ok(bound)
}

/// Reads one request's head (up to 8 KiB) and answers it, then closes.
async fn answer(mut stream: tokio::net::TcpStream) {
    let mut head = Vec::with_capacity(512);
    let mut buf = [0u8; 512];
    let read = tokio::time::timeout(REQUEST_DEADLINE, async {
        while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 8192 {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => head.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await;
    let status = match read.is_ok() && head.starts_with(b"GET ") {
        true => "200 OK",
        false => "400 Bad Request",
    };
    let body = if status.starts_with("200") {
        "ok"
    } else {
        "bad request"
    };
    let reply = format!(
        "HTTP/1.1 {status}\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(reply.as_bytes()).await;
    let _ = stream.shutdown().await;
}
