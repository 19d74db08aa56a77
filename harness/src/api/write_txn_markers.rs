//! WriteTxnMarkers: how a scenario step's fields become its request, and its answer the tree a
//! transcript records.

use kafka_protocol::messages::*;
use serde_json::{json, Value};

use super::request::Fields;
use super::response::by_producer;

/// WriteTxnMarkers's row of [`super::APIS`].
pub(super) const API: super::Api = super::Api {
    name: "WriteTxnMarkers",
    key: ApiKey::WriteTxnMarkers,
    cap: None,
    codes: &[-1, 0, 3, 6, 7, 19, 20, 31, 43, 47, 52],
    build,
    read,
};

/// The request at `version` from a step's fields.
fn build(_version: i16, f: &Fields<'_>) -> Result<RequestKind, String> {
    Ok(RequestKind::WriteTxnMarkers(
        WriteTxnMarkersRequest::default().with_markers(
            f.tables("markers")?
                .iter()
                .map(|m| {
                    Ok(write_txn_markers_request::WritableTxnMarker::default()
                        .with_producer_id(ProducerId(m.int("producer_id", 0)?))
                        .with_producer_epoch(m.i16("producer_epoch", 0)?)
                        .with_transaction_result(m.boolean("transaction_result", true)?)
                        .with_coordinator_epoch(m.i32("coordinator_epoch", 0)?)
                        .with_topics(
                            m.tables("topics")?
                                .iter()
                                .map(|t| {
                                    Ok(write_txn_markers_request::WritableTxnMarkerTopic::default()
                                        .with_name(TopicName(t.str("name")?))
                                        .with_partition_indexes(t.i32s("partition_indexes")?))
                                })
                                .collect::<Result<_, String>>()?,
                        ))
                })
                .collect::<Result<_, String>>()?,
        ),
    ))
}

/// The answer at `version` as a tree, when it is WriteTxnMarkers's.
fn read(response: &ResponseKind, _version: i16) -> Option<Value> {
    let ResponseKind::WriteTxnMarkers(r) = response else {
        return None;
    };
    // Apache keys the markers by producer id (a hash map): ordered by producer id here.
    Some(json!({
        "markers": by_producer(r.markers.iter().map(|m| json!({
            "producer_id": m.producer_id.0,
            "topics": partition_errors!(m.topics),
        })).collect()),
    }))
}
