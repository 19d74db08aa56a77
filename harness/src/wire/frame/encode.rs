//! A well-formed answer written again: in an equivalent encoding (what `kconform proxy` and the
//! differential test make of every answer), or canonically from its values, so that equal
//! bytes mean equal values.

use bytes::BytesMut;
use kafka_protocol::messages::{ApiKey, ResponseKind};
use kafka_protocol::protocol::Encodable;

use super::{api_name, Decoded, Equivalent};
use crate::wire::by_schema;
use crate::wire::schema;

/// `frame`, an answer of `api` v`version` that Apache's parser reads, written again with the
/// same values in the `how` encoding (header and body); `None` for a frame that does not read.
pub fn rewrite(api: ApiKey, version: i16, frame: &[u8], how: Equivalent) -> Option<Vec<u8>> {
    let hv = api.response_header_version(version);
    let header =
        kconform_wire::read::read_styled(schema::response_header(), hv, frame, 0, Some(how))
            .ok()?;
    let message = schema::response_at(&api_name(api), version)?;
    let body =
        kconform_wire::read::read_styled(message, version, frame, header.end, Some(how)).ok()?;
    (body.end == frame.len()).then(|| [header.canonical, body.canonical].concat())
}

/// A decoded answer's body written again, so that equal bytes mean equal values: by Apache's
/// definitions from the values they read, for the APIs read so, else by kafka-protocol
/// ([`encode_body`]). What the differential test holds against Apache's writer.
pub fn encode_answer(decoded: &Decoded, api: ApiKey, version: i16) -> Result<Vec<u8>, String> {
    match (&decoded.values, &decoded.response) {
        (Some(values), _) => {
            let message = schema::response_at(&api_name(api), version)
                .ok_or_else(|| format!("no definition of {api:?}"))?;
            by_schema::encode(message, version, values, &[]).map_err(|e| e.to_string())
        }
        // Produce v12 is written as the v11 it was read as.
        (None, Some(response)) => encode_body(
            response,
            by_schema::kafka_protocol_version(api, version).unwrap_or(version),
        ),
        (None, None) => Err("no reading to write again".into()),
    }
}

/// kafka-protocol's encoding of a decoded answer's body: what the differential test holds
/// against Apache's writer, so that equal bytes mean equal values.
pub fn encode_body(response: &ResponseKind, version: i16) -> Result<Vec<u8>, String> {
    let mut buf = BytesMut::new();
    macro_rules! each {
        ($($kind:ident),*) => {
            match response {
                $(ResponseKind::$kind(r) => r.encode(&mut buf, version).map_err(|e| e.to_string()),)*
                _ => Err("no encoder".to_owned()),
            }
        };
    }
    each!(
        ApiVersions,
        CreateTopics,
        DescribeConfigs,
        FindCoordinator,
        Metadata,
        Produce,
        Fetch,
        ListOffsets,
        OffsetFetch,
        JoinGroup,
        SyncGroup,
        Heartbeat,
        LeaveGroup,
        ConsumerGroupHeartbeat,
        OffsetCommit,
        DeleteGroups,
        InitProducerId,
        AddPartitionsToTxn,
        AddOffsetsToTxn,
        EndTxn,
        WriteTxnMarkers,
        TxnOffsetCommit
    )?;
    Ok(buf.to_vec())
}
