//! One frame sent and what became of it: an answer, a close, silence past the deadline, an
//! answer that cannot be read whole, or no connection at all.

use std::net::SocketAddr;
use std::time::Duration;

use super::judge::{transaction_api, Happened};
use crate::wire::client::{ClientError, Connection};

/// How long to wait for an answer to `frame`: `deadline` for the six transaction APIs, at
/// most a second for the others (whose silence is no finding).
pub(super) fn wait_for(frame: &[u8], deadline: Duration) -> Duration {
    match transaction_api(frame) {
        Some(_) => deadline,
        None => deadline.min(Duration::from_secs(1)),
    }
}

/// Sends `frame` on `conn` (connecting first when there is none); the connection is kept
/// only while it answers.
pub(super) async fn exchange(
    conn: &mut Option<Connection>,
    addr: SocketAddr,
    frame: &[u8],
    deadline: Duration,
) -> Happened {
    if conn.is_none() {
        match Connection::connect(addr, deadline).await {
            Ok(c) => *conn = Some(c),
            Err(e) => return Happened::Unreachable(e.to_string()),
        }
    }
    let Some(c) = conn.as_mut() else {
        return Happened::Unreachable("no connection".into());
    };
    let happened = match c.send_raw(frame, wait_for(frame, deadline)).await {
        Ok(answer) => Happened::Answered(answer),
        Err(ClientError::Closed) | Err(ClientError::Io(_)) => Happened::Closed,
        Err(ClientError::Timeout(d)) => Happened::Silent(d),
        Err(e) => Happened::Unreadable(e.to_string()),
    };
    if !matches!(happened, Happened::Answered(_)) {
        *conn = None;
    }
    happened
}
