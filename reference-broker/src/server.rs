//! The TCP side: size-prefixed frames in, requests handled one at a time per connection in
//! arrival order (as Apache handles them), responses out in that order. Only the durability
//! wait of an acks=all Produce overlaps the next requests, so that the requests a producer
//! pipelines share fsyncs. A malformed or oversized frame closes that connection with a logged
//! reason; the others keep working.

use std::sync::Arc;

use bytes::Bytes;
use futures::stream::{FuturesOrdered, StreamExt};
use tokio::io::{AsyncReadExt, AsyncWriteExt, BufWriter};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

use crate::dispatch;
use crate::state::State;

/// How long a failed authentication waits before its answer (Apache's
/// `connection.failed.authentication.delay.ms` default), which slows password guessing.
pub const FAILED_AUTHENTICATION_DELAY: std::time::Duration = std::time::Duration::from_millis(100);

/// Accepts connections until shutdown, then waits for every connection task to end.
pub async fn serve(listener: TcpListener, state: Arc<State>, mut shutdown: watch::Receiver<bool>) {
    let mut connections = tokio::task::JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                // Over `max_connections` (`crate::limits`): closed at once, as Apache closes
                // a connection over `max.connections`.
                Ok((_, peer)) if connections.len() >= state.config.limits.max_connections => {
                    tracing::warn!(%peer, max = state.config.limits.max_connections,
                        "connection refused: at --max-connections");
                }
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

/// Reads frames off the connection into `frames` (bounded, so an unread backlog stays in the
/// socket), until the peer closes, a frame is refused, or the receiver is gone.
async fn read_frames(
    mut read: tokio::net::tcp::OwnedReadHalf,
    max: usize,
    frames: tokio::sync::mpsc::Sender<Result<Bytes, String>>,
) {
    loop {
        let mut size = [0u8; 4];
        let frame = match read.read_exact(&mut size).await {
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return,
            Err(e) => Err(e.to_string()),
            Ok(_) => {
                let size = i32::from_be_bytes(size);
                if size < 0 || size as usize > max {
                    Err(format!("frame size {size} outside 0..={max}"))
                } else {
                    let mut frame = vec![0u8; size as usize];
                    read.read_exact(&mut frame)
                        .await
                        .map(|_| Bytes::from(frame))
                        .map_err(|e| format!("reading a {size}-byte frame: {e}"))
                }
            }
        };
        let last = frame.is_err();
        if frames.send(frame).await.is_err() || last {
            return;
        }
    }
}

/// Whether the planted bug [`Bug::RequestDroppedWithItsConnection`] drops this request: its
/// client has closed the connection (the reader has seen the end, given a moment to). Always
/// false on a clean broker, without a wait.
///
/// [`Bug::RequestDroppedWithItsConnection`]: crate::planted::Bug::RequestDroppedWithItsConnection
async fn gone_before_handled(
    state: &State,
    frames: &tokio::sync::mpsc::Receiver<Result<Bytes, String>>,
) -> bool {
    if !state
        .config
        .planted
        .has(crate::planted::Bug::RequestDroppedWithItsConnection)
    {
        return false;
    }
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    frames.is_closed()
}

/// Ends the reader task with the connection.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// One connection: requests are handled one at a time, in order, as Apache handles them; an
/// acks=all Produce's wait for durability may overlap the handling of the requests after it
/// (up to `max_in_flight_per_connection`), and the responses go out in request order.
async fn connection(
    stream: TcpStream,
    state: Arc<State>,
    mut shutdown: watch::Receiver<bool>,
) -> Result<(), String> {
    let (read, write) = stream.into_split();
    let mut write = BufWriter::new(write);
    let (frames_tx, mut frames) = tokio::sync::mpsc::channel(1);
    let _reader = AbortOnDrop(tokio::spawn(read_frames(
        read,
        state.config.max_frame_bytes,
        frames_tx,
    )));
    let mut pending: FuturesOrdered<dispatch::Pending> = FuturesOrdered::new();
    // How many answered-but-not-yet-written requests the connection may have before the broker
    // stops reading from it (the idempotent producer sends at most five at once).
    let in_flight = state.config.limits.max_in_flight_per_connection.max(1);
    // Set when no more requests will be read: the peer closed, or a frame closes the
    // connection (after the responses already owed are written).
    let mut peer_done = false;
    let mut closing: Option<String> = None;
    // A secured broker's connection authenticates first (`crate::sasl`).
    let mut sasl = state.users.clone().map(crate::sasl::Authenticator::new);
    loop {
        if peer_done && pending.is_empty() {
            return closing.map_or(Ok(()), Err);
        }
        tokio::select! {
            // Answers first: a durable Produce's response goes out as soon as it can.
            Some(done) = pending.next(), if !pending.is_empty() => {
                // A frozen broker writes nothing (`crate::freeze`).
                tokio::select! {
                    _ = state.freeze.thawed() => {}
                    _ = shutdown.changed() => return Ok(()),
                }
                if let Some(body) = done.map_err(|e| e.to_string())? {
                    write
                        .write_all(&(body.len() as i32).to_be_bytes())
                        .await
                        .map_err(|e| e.to_string())?;
                    write.write_all(&body).await.map_err(|e| e.to_string())?;
                    write.flush().await.map_err(|e| e.to_string())?;
                }
            }
            frame = frames.recv(), if !peer_done && pending.len() < in_flight => {
                let frame = match frame {
                    None => {
                        peer_done = true;
                        continue;
                    }
                    Some(Err(reason)) => {
                        (peer_done, closing) = (true, Some(reason));
                        continue;
                    }
                    Some(Ok(frame)) => frame,
                };
                if gone_before_handled(&state, &frames).await {
                    continue;
                }
                // A frozen broker handles nothing: the request waits as it would in a stopped
                // process's socket (`crate::freeze`).
                let turn = tokio::select! {
                    t = async {
                        state.freeze.thawed().await;
                        dispatch::handle_on(&state, sasl.as_mut(), frame).await
                    } => t,
                    _ = shutdown.changed() => return Ok(()),
                };
                let reply = match turn {
                    dispatch::Turn::Reply(reply) => reply,
                    dispatch::Turn::Fail(body, reason) => {
                        // As Apache (`connection.failed.authentication.delay.ms`, 100 ms by
                        // default): the failure is answered after a pause, then the
                        // connection closes.
                        pending.push_back(Box::pin(async move {
                            tokio::time::sleep(FAILED_AUTHENTICATION_DELAY).await;
                            Ok(Some(body))
                        }));
                        (peer_done, closing) = (true, Some(reason));
                        continue;
                    }
                    dispatch::Turn::Close(reason) => {
                        (peer_done, closing) = (true, Some(reason));
                        continue;
                    }
                };
                pending.push_back(match reply {
                    dispatch::Reply::Now(response) => Box::pin(std::future::ready(Ok(response))),
                    dispatch::Reply::Later(later) => later,
                });
            }
            _ = shutdown.changed() => return Ok(()),
        }
    }
}
