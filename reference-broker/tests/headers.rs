//! The header version of every (API, version), and the header encodings themselves.

use kafka_protocol::messages as kp;
use kafka_protocol::protocol::HeaderVersion;
use reference_broker::codec::header::{decode_request, decode_response, encode_request};
use reference_broker::codec::*;

/// The contract, written out: (api, version, request header version, response header version).
const TABLE: &[(ApiKey, i16, i16, i16)] = &[
    (ApiKey::InitProducerId, 0, 1, 0),
    (ApiKey::InitProducerId, 1, 1, 0),
    (ApiKey::InitProducerId, 2, 2, 1),
    (ApiKey::InitProducerId, 3, 2, 1),
    (ApiKey::InitProducerId, 4, 2, 1),
    (ApiKey::AddPartitionsToTxn, 0, 1, 0),
    (ApiKey::AddPartitionsToTxn, 1, 1, 0),
    (ApiKey::AddPartitionsToTxn, 2, 1, 0),
    (ApiKey::AddPartitionsToTxn, 3, 2, 1),
    (ApiKey::AddOffsetsToTxn, 0, 1, 0),
    (ApiKey::AddOffsetsToTxn, 1, 1, 0),
    (ApiKey::AddOffsetsToTxn, 2, 1, 0),
    (ApiKey::AddOffsetsToTxn, 3, 2, 1),
    (ApiKey::EndTxn, 0, 1, 0),
    (ApiKey::EndTxn, 1, 1, 0),
    (ApiKey::EndTxn, 2, 1, 0),
    (ApiKey::EndTxn, 3, 2, 1),
    (ApiKey::WriteTxnMarkers, 0, 1, 0),
    (ApiKey::WriteTxnMarkers, 1, 2, 1),
    (ApiKey::TxnOffsetCommit, 0, 1, 0),
    (ApiKey::TxnOffsetCommit, 1, 1, 0),
    (ApiKey::TxnOffsetCommit, 2, 1, 0),
    (ApiKey::TxnOffsetCommit, 3, 2, 1),
];

fn theirs(api: ApiKey, v: i16) -> (i16, i16) {
    match api {
        ApiKey::InitProducerId => (
            kp::InitProducerIdRequest::header_version(v),
            kp::InitProducerIdResponse::header_version(v),
        ),
        ApiKey::AddPartitionsToTxn => (
            kp::AddPartitionsToTxnRequest::header_version(v),
            kp::AddPartitionsToTxnResponse::header_version(v),
        ),
        ApiKey::AddOffsetsToTxn => (
            kp::AddOffsetsToTxnRequest::header_version(v),
            kp::AddOffsetsToTxnResponse::header_version(v),
        ),
        ApiKey::EndTxn => (
            kp::EndTxnRequest::header_version(v),
            kp::EndTxnResponse::header_version(v),
        ),
        ApiKey::WriteTxnMarkers => (
            kp::WriteTxnMarkersRequest::header_version(v),
            kp::WriteTxnMarkersResponse::header_version(v),
        ),
        ApiKey::TxnOffsetCommit => (
            kp::TxnOffsetCommitRequest::header_version(v),
            kp::TxnOffsetCommitResponse::header_version(v),
        ),
    }
}

#[test]
fn header_version_of_every_api_version_matches_the_table_and_kafka_protocol() {
    let served: usize = ApiKey::ALL
        .iter()
        .map(|a| (a.versions().1 - a.versions().0 + 1) as usize)
        .sum();
    assert_eq!(TABLE.len(), served, "the table covers every served version");
    for &(api, v, req, resp) in TABLE {
        assert!(api.check_version(v).is_ok());
        assert_eq!(api.request_header_version(v), req, "{api:?} v{v} request");
        assert_eq!(
            api.response_header_version(v),
            resp,
            "{api:?} v{v} response"
        );
        assert_eq!(theirs(api, v), (req, resp), "{api:?} v{v} kafka-protocol");
    }
}

#[test]
fn request_header_v1_fixture() {
    // EndTxn v0: header v1.
    let frame: Vec<u8> = [
        &[0x00, 0x1a][..],         // api_key 26
        &[0x00, 0x00],             // api_version 0
        &[0x00, 0x00, 0x00, 0x07], // correlation_id 7
        &[0x00, 0x01, b'c'],       // client_id 'c'
        &[0x00, 0x01, b't'],       // body: transactional_id 't'
        &[0, 0, 0, 0, 0, 0, 0, 1], // producer_id 1
        &[0x00, 0x00],             // producer_epoch 0
        &[0x00],                   // committed false
    ]
    .concat();
    let (header, decoded) = decode_request(&frame).unwrap();
    assert_eq!(
        header,
        RequestHeader {
            api_key: 26,
            api_version: 0,
            correlation_id: 7,
            client_id: Some("c".into()),
            unknown_tagged_fields: TaggedFields::new(),
        }
    );
    let Request::EndTxn(body) = &decoded.message else {
        panic!("not EndTxn: {:?}", decoded.message)
    };
    assert_eq!(body.transactional_id, "t");
    assert_eq!(encode_request(&header, &decoded.message).unwrap(), frame);
}

#[test]
fn request_header_v2_keeps_a_classic_client_id_and_adds_tags() {
    // EndTxn v3: header v2. The client id is still int16-length; then the header's tags.
    let frame: Vec<u8> = [
        &[0x00, 0x1a, 0x00, 0x03][..],
        &[0x00, 0x00, 0x00, 0x08],
        &[0xff, 0xff],             // client_id null
        &[0x01, 0x02, 0x01, 0x99], // header tags: one field, tag 2, one byte
        &[0x02, b't'],             // body: compact 't'
        &[0, 0, 0, 0, 0, 0, 0, 1],
        &[0x00, 0x00],
        &[0x01],
        &[0x00],
    ]
    .concat();
    let (header, decoded) = decode_request(&frame).unwrap();
    assert_eq!(header.client_id, None);
    assert_eq!(
        header.unknown_tagged_fields,
        [(2, [0x99])].into_iter().collect()
    );
    assert_eq!(encode_request(&header, &decoded.message).unwrap(), frame);
    // kafka-protocol reads the same header.
    let mut buf = bytes::Bytes::copy_from_slice(&frame);
    let theirs =
        <kp::RequestHeader as kafka_protocol::protocol::Decodable>::decode(&mut buf, 2).unwrap();
    assert_eq!(theirs.correlation_id, 8);
    assert_eq!(theirs.client_id, None);
    assert_eq!(theirs.unknown_tagged_fields.len(), 1);
}

#[test]
fn response_headers_v0_and_v1() {
    let v0 = ResponseHeader {
        correlation_id: 9,
        unknown_tagged_fields: TaggedFields::new(),
    };
    assert_eq!(v0.write(0).unwrap(), [0, 0, 0, 9]);
    assert_eq!(v0.write(1).unwrap(), [0, 0, 0, 9, 0]);
    let frame = [0, 0, 0, 9, 0, /* body */ 0, 0, 0, 0, 0, 0x30, 0];
    let (header, resp) = decode_response(ApiKey::EndTxn, 3, &frame).unwrap();
    assert_eq!(header, v0);
    assert_eq!(
        resp,
        Response::EndTxn(EndTxnResponse {
            error_code: 48,
            ..Default::default()
        })
    );
    // v0 has no tag byte: the same body after a v0 header.
    let frame = [0, 0, 0, 9, 0, 0, 0, 0, 0, 0x30];
    assert!(decode_response(ApiKey::EndTxn, 2, &frame).is_ok());
}

#[test]
fn frames_for_apis_or_versions_outside_the_six_are_typed_errors() {
    assert_eq!(
        decode_request(&[0x00, 0x12, 0x00, 0x00]).unwrap_err(),
        CodecError::UnknownApiKey(18)
    );
    assert!(matches!(
        decode_request(&[0x00, 0x18, 0x00, 0x04]).unwrap_err(),
        CodecError::UnsupportedVersion { version: 4, .. }
    ));
    assert!(matches!(
        decode_request(&[0x00]).unwrap_err(),
        CodecError::Truncated { .. }
    ));
}
