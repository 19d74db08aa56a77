//! WriteTxnMarkers (27): the coordinator's COMMIT or ABORT control batches, written on each listed
//! partition this broker leads.

use std::collections::BTreeMap;

use super::super::Ctx;
use crate::auth::{Operation, Resource};
use crate::codec::write_txn_markers::{
    WritableTxnMarkerPartitionResult, WritableTxnMarkerResult, WritableTxnMarkerTopicResult,
};
use crate::codec::{WriteTxnMarkersRequest, WriteTxnMarkersResponse};
use crate::errors;
use crate::storage::batch;

/// One producer's marker results: topic → (partition, error code).
type MarkerResults = BTreeMap<String, Vec<(i32, i16)>>;

/// Answers WriteTxnMarkers.
pub(super) fn handle(ctx: &Ctx, req: &WriteTxnMarkersRequest) -> WriteTxnMarkersResponse {
    let state = &ctx.state;
    let authorized = ctx.allowed(Operation::ClusterAction, Resource::Cluster);
    // The response is keyed by producer id; duplicate producer ids are merged.
    let mut by_pid: Vec<(i64, MarkerResults)> = Vec::new();
    let mut wrote = false;
    for m in &req.markers {
        let slot = match by_pid.iter().position(|(pid, _)| *pid == m.producer_id) {
            Some(i) => i,
            None => {
                by_pid.push((m.producer_id, BTreeMap::new()));
                by_pid.len() - 1
            }
        };
        for t in &m.topics {
            for &p in &t.partition_indexes {
                let code = if !authorized {
                    errors::CLUSTER_AUTHORIZATION_FAILED
                } else {
                    match state.led_partition(&t.name, p) {
                        Err(code) => code,
                        Ok(log) => {
                            let mut log = log.lock();
                            // Apache's receiver checks: an older producer epoch, then an
                            // older coordinator epoch (scenarios write-txn-markers-stale-epoch
                            // and write-txn-markers-coordinator-epoch-fenced).
                            let known = log.producer(m.producer_id);
                            if log.refuses_marker(m.producer_id, m.producer_epoch) {
                                errors::INVALID_PRODUCER_EPOCH
                            } else if known
                                .is_some_and(|s| m.coordinator_epoch < s.coordinator_epoch)
                            {
                                errors::TRANSACTION_COORDINATOR_FENCED
                            } else {
                                let marker = batch::control_batch(
                                    m.producer_id,
                                    m.producer_epoch,
                                    m.transaction_result,
                                    m.coordinator_epoch,
                                    super::super::now_ms(),
                                );
                                match log.append_control(marker) {
                                    Ok(_) => {
                                        wrote = true;
                                        errors::NONE
                                    }
                                    Err(e) => {
                                        tracing::warn!(error = %e, "marker append failed");
                                        errors::UNKNOWN_SERVER_ERROR
                                    }
                                }
                            }
                        }
                    }
                };
                by_pid[slot]
                    .1
                    .entry(t.name.to_string())
                    .or_default()
                    .push((p, code));
            }
        }
    }
    if wrote {
        state.appended.notify_waiters();
    }
    WriteTxnMarkersResponse {
        markers: by_pid
            .into_iter()
            .map(|(pid, topics)| WritableTxnMarkerResult {
                producer_id: pid,
                topics: topics
                    .into_iter()
                    .map(|(name, ps)| WritableTxnMarkerTopicResult {
                        name: name.into(),
                        partitions: ps
                            .into_iter()
                            .map(|(p, code)| WritableTxnMarkerPartitionResult {
                                partition_index: p,
                                error_code: code,
                                ..Default::default()
                            })
                            .collect(),
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}
