//! Writes the fuzzers' seed corpora: every sample message of every API, direction and version,
//! in the fuzz input format (a selector byte for direction and version, then the body).
//!
//! Run from anywhere: `cargo run -p reference-broker --example write_fuzz_seeds`. The
//! `corpus_replay` test fails when the committed seeds differ from what this writes.

use std::path::Path;

use bytes::BytesMut;
use kafka_protocol::messages::ApiKey as KpApi;
use kafka_protocol::messages::*;
use kafka_protocol::protocol::{Encodable, StrBytes};
use reference_broker::storage::batch;

use reference_broker::codec::differential::fuzz_selector;
use reference_broker::codec::samples::{encoded_samples, fuzz_target_name, seed_file_name};
use reference_broker::codec::{ApiKey, Direction};

fn main() -> std::io::Result<()> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus");
    let mut written = 0;
    for api in ApiKey::ALL {
        let dir = root.join(fuzz_target_name(api));
        std::fs::create_dir_all(&dir)?;
        for direction in [Direction::Request, Direction::Response] {
            for (i, (version, body)) in encoded_samples(api, direction).into_iter().enumerate() {
                let mut data = vec![fuzz_selector(direction, version)];
                data.extend(body);
                std::fs::write(dir.join(seed_file_name(direction, version, i)), data)?;
                written += 1;
            }
        }
    }
    let dir = root.join("broker_frames");
    std::fs::create_dir_all(&dir)?;
    for (name, frame) in broker_frames() {
        std::fs::write(dir.join(format!("seed-{name}")), frame)?;
        written += 1;
    }
    let dir = root.join("sasl_frames");
    std::fs::create_dir_all(&dir)?;
    for (name, frames) in sasl_sessions() {
        let input = reference_broker::sasl::session_input::join(&frames);
        std::fs::write(dir.join(format!("seed-{name}")), input)?;
        written += 1;
    }
    println!("wrote {written} seed files under {}", root.display());
    Ok(())
}

/// A request frame (header and body, no size prefix).
fn request(api: KpApi, version: i16, body: RequestKind) -> Vec<u8> {
    let mut out = BytesMut::new();
    RequestHeader::default()
        .with_request_api_key(api as i16)
        .with_request_api_version(version)
        .with_correlation_id(1)
        .with_client_id(Some(StrBytes::from_static_str("seed")))
        .encode(&mut out, api.request_header_version(version))
        .expect("header encodes");
    body.encode(&mut out, version).expect("body encodes");
    out.to_vec()
}

/// Connections for the sasl_frames target: logins that succeed (PLAIN at two versions, a v0
/// handshake's raw token) and go on to gated requests, and the ways a login fails.
fn sasl_sessions() -> Vec<(&'static str, Vec<Vec<u8>>)> {
    let handshake = |v, m: &'static str| {
        request(
            KpApi::SaslHandshake,
            v,
            RequestKind::SaslHandshake(
                SaslHandshakeRequest::default().with_mechanism(StrBytes::from_static_str(m)),
            ),
        )
    };
    let authenticate = |v, token: &[u8]| {
        request(
            KpApi::SaslAuthenticate,
            v,
            RequestKind::SaslAuthenticate(
                SaslAuthenticateRequest::default()
                    .with_auth_bytes(bytes::Bytes::copy_from_slice(token)),
            ),
        )
    };
    let versions = request(
        KpApi::ApiVersions,
        3,
        RequestKind::ApiVersions(ApiVersionsRequest::default()),
    );
    let metadata = request(
        KpApi::Metadata,
        12,
        RequestKind::Metadata(MetadataRequest::default().with_topics(None)),
    );
    let init = request(
        KpApi::InitProducerId,
        4,
        RequestKind::InitProducerId(
            InitProducerIdRequest::default()
                .with_transactional_id(Some(TransactionalId(StrBytes::from_static_str("t"))))
                .with_transaction_timeout_ms(60_000),
        ),
    );
    let acls = request(
        KpApi::CreateAcls,
        3,
        RequestKind::CreateAcls(CreateAclsRequest::default().with_creations(vec![
            create_acls_request::AclCreation::default()
                .with_resource_type(5)
                .with_resource_name(StrBytes::from_static_str("t"))
                .with_resource_pattern_type(3)
                .with_principal(StrBytes::from_static_str("User:alice"))
                .with_host(StrBytes::from_static_str("*"))
                .with_operation(4)
                .with_permission_type(3),
        ])),
    );
    let plain = b"\0alice\0alice-secret";
    let admin = b"\0admin\0admin-secret";
    vec![
        (
            "plain-login-then-gated",
            vec![
                versions.clone(),
                handshake(1, "PLAIN"),
                authenticate(2, plain),
                metadata.clone(),
                init.clone(),
            ],
        ),
        (
            "admin-creates-acl",
            vec![
                handshake(1, "PLAIN"),
                authenticate(0, admin),
                acls,
                init.clone(),
            ],
        ),
        (
            "raw-token-login",
            vec![handshake(0, "PLAIN"), plain.to_vec(), metadata.clone()],
        ),
        (
            "wrong-password",
            vec![handshake(1, "PLAIN"), authenticate(1, b"\0alice\0nope")],
        ),
        (
            "scram-first-message",
            vec![
                handshake(1, "SCRAM-SHA-512"),
                authenticate(2, b"n,,n=alice,r=seednonce"),
                authenticate(2, b"c=biws,r=seednonce,p=AAAA"),
            ],
        ),
        ("unknown-mechanism", vec![handshake(1, "GSSAPI")]),
        ("before-login", vec![metadata, init]),
    ]
}

/// Valid request frames (header and body, no size prefix) for the broker_frames target: one
/// or two per API the broker serves, at a low and a high version.
fn broker_frames() -> Vec<(String, Vec<u8>)> {
    fn frame(api: KpApi, version: i16, body: RequestKind) -> (String, Vec<u8>) {
        (format!("{api:?}-v{version}"), request(api, version, body))
    }
    let topic = || TopicName(StrBytes::from_static_str("t"));
    let records = batch::build(
        0,
        0,
        0,
        0,
        -1,
        -1,
        -1,
        &[batch::record(0, 0, None, Some(b"v"))],
    );
    let produce = |v| {
        frame(
            KpApi::Produce,
            v,
            RequestKind::Produce(
                ProduceRequest::default()
                    .with_acks(-1)
                    .with_timeout_ms(1000)
                    .with_topic_data(vec![produce_request::TopicProduceData::default()
                        .with_name(topic())
                        .with_partition_data(vec![
                            produce_request::PartitionProduceData::default()
                                .with_index(0)
                                .with_records(Some(records.clone().into())),
                        ])]),
            ),
        )
    };
    let fetch = |v| {
        frame(
            KpApi::Fetch,
            v,
            RequestKind::Fetch(
                FetchRequest::default()
                    .with_max_wait_ms(10)
                    .with_max_bytes(1 << 20)
                    .with_topics(vec![fetch_request::FetchTopic::default()
                        .with_topic(topic())
                        .with_partitions(vec![fetch_request::FetchPartition::default()
                            .with_partition_max_bytes(1 << 20)])]),
            ),
        )
    };
    let metadata = |v| {
        frame(
            KpApi::Metadata,
            v,
            RequestKind::Metadata(MetadataRequest::default().with_topics(Some(vec![
                metadata_request::MetadataRequestTopic::default().with_name(Some(topic())),
            ]))),
        )
    };
    let join = |v| {
        frame(
            KpApi::JoinGroup,
            v,
            RequestKind::JoinGroup(
                JoinGroupRequest::default()
                    .with_group_id(GroupId(StrBytes::from_static_str("g")))
                    .with_session_timeout_ms(10_000)
                    .with_rebalance_timeout_ms(10_000)
                    .with_protocol_type(StrBytes::from_static_str("consumer"))
                    .with_protocols(vec![join_group_request::JoinGroupRequestProtocol::default(
                    )
                    .with_name(StrBytes::from_static_str("range"))]),
            ),
        )
    };
    vec![
        frame(
            KpApi::ApiVersions,
            0,
            RequestKind::ApiVersions(ApiVersionsRequest::default()),
        ),
        frame(
            KpApi::ApiVersions,
            3,
            RequestKind::ApiVersions(ApiVersionsRequest::default()),
        ),
        metadata(1),
        metadata(12),
        frame(
            KpApi::CreateTopics,
            7,
            RequestKind::CreateTopics(CreateTopicsRequest::default().with_topics(vec![
                create_topics_request::CreatableTopic::default()
                    .with_name(topic())
                    .with_num_partitions(2)
                    .with_replication_factor(1),
            ])),
        ),
        produce(3),
        produce(9),
        fetch(4),
        fetch(12),
        frame(
            KpApi::ListOffsets,
            7,
            RequestKind::ListOffsets(ListOffsetsRequest::default().with_topics(vec![
                list_offsets_request::ListOffsetsTopic::default()
                    .with_name(topic())
                    .with_partitions(vec![list_offsets_request::ListOffsetsPartition::default()
                        .with_timestamp(-1)]),
            ])),
        ),
        frame(
            KpApi::FindCoordinator,
            4,
            RequestKind::FindCoordinator(
                FindCoordinatorRequest::default()
                    .with_coordinator_keys(vec![StrBytes::from_static_str("g")]),
            ),
        ),
        join(2),
        join(9),
        frame(
            KpApi::OffsetFetch,
            7,
            RequestKind::OffsetFetch(
                OffsetFetchRequest::default()
                    .with_group_id(GroupId(StrBytes::from_static_str("g"))),
            ),
        ),
        frame(
            KpApi::InitProducerId,
            4,
            RequestKind::InitProducerId(
                InitProducerIdRequest::default()
                    .with_transactional_id(None)
                    .with_transaction_timeout_ms(60_000),
            ),
        ),
    ]
}
