//! `kconform replay-frame`'s library side: a frame file `kconform fuzz` wrote, sent again on
//! a fresh connection and judged as the fuzzer judged it.

use std::path::Path;
use std::time::Duration;

use super::judge::{judge, named, Happened, Judged, Kind};
use super::send::exchange;
use crate::targets::Running;

/// After `frame` went unanswered: the "stopped answering" finding when the target then
/// refuses ApiVersions on a fresh connection ([`Running::reachable`]); `None` when it answers,
/// or when `frame` was answered (nothing to check).
pub(super) async fn unhealthy(
    target: &Running,
    frame: &[u8],
    happened: &Happened,
    deadline: Duration,
) -> Option<Judged> {
    if matches!(happened, Happened::Answered(_)) {
        return None;
    }
    let why = target.reachable(deadline).await.err()?;
    Some(Judged {
        kind: Kind::Unhealthy,
        signature: format!("{}: after {}", Kind::Unhealthy.word(), named(frame)),
        detail: format!(
            "after this frame ({}), a fresh connection's ApiVersions got: {why}",
            happened.describe()
        ),
    })
}

/// What replaying a frame file showed.
#[derive(Debug, Clone)]
pub struct Replayed {
    /// What the target did.
    pub happened: String,
    /// The finding it still shows, if it does.
    pub finding: Option<Judged>,
}

/// Why a frame file cannot be replayed.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// It cannot be read.
    #[error("{0}: {1}")]
    Read(String, std::io::Error),
    /// It is not a size-prefixed frame.
    #[error("{0}: {1}")]
    NotAFrame(String, String),
    /// The target does not answer ApiVersions.
    #[error("{0}")]
    Target(String),
}

/// Sends the raw frame in `file` (its 4-byte size, then the frame, as `kconform fuzz` writes
/// it) to `target` on a fresh connection and judges what happens, as the fuzzer did.
pub async fn replay(
    file: &Path,
    target: &Running,
    deadline: Duration,
) -> Result<Replayed, ReplayError> {
    let name = file.display().to_string();
    let raw = std::fs::read(file).map_err(|e| ReplayError::Read(name.clone(), e))?;
    let Some((size, frame)) = raw.split_first_chunk::<4>() else {
        return Err(ReplayError::NotAFrame(
            name,
            "shorter than a size prefix".into(),
        ));
    };
    let size = u32::from_be_bytes(*size) as usize;
    if size != frame.len() {
        return Err(ReplayError::NotAFrame(
            name,
            format!("its size prefix says {size} bytes, {} follow", frame.len()),
        ));
    }
    let served = target
        .served(deadline)
        .await
        .map_err(|e| ReplayError::Target(e.to_string()))?;
    let happened = exchange(&mut None, target.addr, frame, deadline).await;
    let finding = match unhealthy(target, frame, &happened, deadline).await {
        Some(dead) => Some(dead),
        None => judge(frame, &happened, &served, target.parser()),
    };
    Ok(Replayed {
        happened: format!("{}: {}", named(frame), happened.describe()),
        finding,
    })
}
