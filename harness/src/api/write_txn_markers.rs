//! WriteTxnMarkers: how a scenario step's fields become its request (written by
//! Apache's definitions past the versions kafka-protocol generates); its answer's tree is the
//! values Apache's definitions read.

use kafka_protocol::messages::*;

use super::request::Fields;

/// WriteTxnMarkers's row of [`super::APIS`].
pub(super) const API: super::Api = super::Api {
    name: "WriteTxnMarkers",
    key: ApiKey::WriteTxnMarkers,
    cap: None,
    codes: &[-1, 0, 3, 6, 7, 19, 20, 31, 43, 47, 52],
    build,
    read: super::Reading::Definitions {
        renamed: &[],
        defaults: &[("markers[].transaction_result", "true")],
    },
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
