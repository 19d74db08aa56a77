//! The TCP side: size-prefixed frames in, one request at a time per connection (as Apache
//! mutes a connection until its response is sent), responses out in order. A malformed or
//! oversized frame closes that connection with a logged reason; the others keep working.

use std::sync::Arc;

use bytes::Bytes;
use tokio::io::{AsyncReadExt, AsyncWriteExt, BufWriter};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

use crate::broker::State;
use crate::dispatch;

/// Accepts connections until shutdown, then waits for every connection task to end.
pub async fn serve(listener: TcpListener, state: Arc<State>, mut shutdown: watch::Receiver<bool>) {
    let mut connections = tokio::task::JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => {
                    let _ = stream.set_nodelay(true);
                    let state = state.clone();
                    let shutdown = shutdown.clone();
                    connections.spawn(async move {
                        if let Err(reason) = connection(stream, state, shutdown).await {
                            tracing::info!(%peer, %reason, "connection closed");
                        }
                    });
                }
                Err(e) => {
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                }
            },
            _ = shutdown.changed() => break,
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
    connections.shutdown().await;
}

async fn connection(
    stream: TcpStream,
    state: Arc<State>,
    mut shutdown: watch::Receiver<bool>,
) -> Result<(), String> {
    let (mut read, write) = stream.into_split();
    let mut write = BufWriter::new(write);
    let max = state.config.max_frame_bytes;
    loop {
        let mut size = [0u8; 4];
        tokio::select! {
            r = read.read_exact(&mut size) => match r {
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(()),
                Err(e) => return Err(e.to_string()),
            },
            _ = shutdown.changed() => return Ok(()),
        }
        let size = i32::from_be_bytes(size);
        if size < 0 || size as usize > max {
            return Err(format!("frame size {size} outside 0..={max}"));
        }
        let mut frame = vec![0u8; size as usize];
        read.read_exact(&mut frame)
            .await
            .map_err(|e| format!("reading a {size}-byte frame: {e}"))?;
        let response = tokio::select! {
            r = dispatch::handle(&state, Bytes::from(frame)) => r.map_err(|e| e.to_string())?,
            _ = shutdown.changed() => return Ok(()),
        };
        if let Some(body) = response {
            write
                .write_all(&(body.len() as i32).to_be_bytes())
                .await
                .map_err(|e| e.to_string())?;
            write.write_all(&body).await.map_err(|e| e.to_string())?;
            write.flush().await.map_err(|e| e.to_string())?;
        }
    }
}
