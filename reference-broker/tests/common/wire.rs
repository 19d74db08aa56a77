//! Requests as wire frames built with kafka-protocol (not kaas-ref's own codecs), sent
//! through the in-process dispatcher of a broker on a fresh data directory.

use std::path::Path;
use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use kafka_protocol::messages::add_partitions_to_txn_request::AddPartitionsToTxnTopic;
use kafka_protocol::messages::create_topics_request::{CreatableTopic, CreatableTopicConfig};
use kafka_protocol::messages::produce_request::{PartitionProduceData, TopicProduceData};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::{Decodable, Encodable, HeaderVersion, StrBytes};
use reference_broker::auth::AllowAll;
use reference_broker::broker::{open_state, State};
use reference_broker::limits::Limits;
use reference_broker::storage::batch;
use reference_broker::{dispatch, BrokerConfig};

/// A broker on its own data directory, answering in process.
pub struct Broker {
    pub state: Arc<State>,
    pub dir: tempfile::TempDir,
}

/// A test broker held to `limits`.
pub fn broker(limits: Limits) -> Broker {
    let dir = tempfile::tempdir().unwrap();
    let config = BrokerConfig {
        data_dir: Some(dir.path().to_owned()),
        limits,
        ..BrokerConfig::for_tests()
    };
    let state = open_state(
        config,
        "127.0.0.1:9092".parse().unwrap(),
        Arc::new(AllowAll),
    )
    .unwrap();
    Broker {
        state: Arc::new(state),
        dir,
    }
}

pub fn s(text: &str) -> StrBytes {
    StrBytes::from_string(text.to_owned())
}

/// `request` encoded as `api` at `version` with a v1/v2 header.
pub fn frame<R: Encodable + HeaderVersion>(api: ApiKey, version: i16, request: &R) -> Bytes {
    let mut buf = BytesMut::new();
    RequestHeader::default()
        .with_request_api_key(api as i16)
        .with_request_api_version(version)
        .with_correlation_id(7)
        .with_client_id(Some(s("limits")))
        .encode(&mut buf, R::header_version(version))
        .unwrap();
    request.encode(&mut buf, version).unwrap();
    buf.freeze()
}

/// `request` through the in-process dispatcher of `state`, its answer decoded.
pub async fn call<Req, Resp>(state: &Arc<State>, api: ApiKey, version: i16, request: &Req) -> Resp
where
    Req: Encodable + HeaderVersion,
    Resp: Decodable + HeaderVersion,
{
    let answer = dispatch::handle(state, frame(api, version, request))
        .await
        .unwrap()
        .expect("an answer");
    let mut buf = Bytes::from(answer);
    let header = ResponseHeader::decode(&mut buf, Resp::header_version(version)).unwrap();
    assert_eq!(header.correlation_id, 7);
    Resp::decode(&mut buf, version).unwrap()
}

/// InitProducerId v4 for a transactional id, as a fresh producer sends it.
pub fn init_request(id: &str) -> InitProducerIdRequest {
    InitProducerIdRequest::default()
        .with_transactional_id(Some(TransactionalId(s(id))))
        .with_transaction_timeout_ms(60_000)
        .with_producer_id(ProducerId(-1))
        .with_producer_epoch(-1)
}

impl Broker {
    pub async fn call<Req, Resp>(&self, api: ApiKey, version: i16, request: &Req) -> Resp
    where
        Req: Encodable + HeaderVersion,
        Resp: Decodable + HeaderVersion,
    {
        call(&self.state, api, version, request).await
    }

    pub async fn create(
        &self,
        topics: &[(&str, i32)],
        configs: &[(&str, &str)],
    ) -> Vec<(i16, String)> {
        let request = CreateTopicsRequest::default()
            .with_timeout_ms(5000)
            .with_topics(
                topics
                    .iter()
                    .map(|(name, partitions)| {
                        CreatableTopic::default()
                            .with_name(TopicName(s(name)))
                            .with_num_partitions(*partitions)
                            .with_replication_factor(1)
                            .with_configs(
                                configs
                                    .iter()
                                    .map(|(k, v)| {
                                        CreatableTopicConfig::default()
                                            .with_name(s(k))
                                            .with_value(Some(s(v)))
                                    })
                                    .collect(),
                            )
                    })
                    .collect(),
            );
        let r: CreateTopicsResponse = self.call(ApiKey::CreateTopics, 7, &request).await;
        r.topics
            .iter()
            .map(|t| {
                let message = t.error_message.as_deref().unwrap_or_default().to_owned();
                (t.error_code, message)
            })
            .collect()
    }

    /// Topic names the broker has, and the partition directories on disk.
    pub fn topics_and_dirs(&self) -> (Vec<String>, Vec<String>) {
        let names = self
            .state
            .topics
            .read()
            .iter()
            .map(|(n, _)| n.to_owned())
            .collect();
        (names, partition_dirs(self.dir.path()))
    }

    /// The broker still answers: ApiVersions, and a topic created and listed.
    pub async fn still_answers(&self) {
        let r: ApiVersionsResponse = self
            .call(ApiKey::ApiVersions, 3, &ApiVersionsRequest::default())
            .await;
        assert_eq!(r.error_code, 0);
        let name = format!("after-{}", uuid::Uuid::new_v4());
        assert_eq!(self.create(&[(&name, 1)], &[]).await[0].0, 0);
    }

    pub async fn init_txn(&self, id: &str) -> (i64, i16) {
        let r: InitProducerIdResponse = self
            .call(ApiKey::InitProducerId, 4, &init_request(id))
            .await;
        assert_eq!(r.error_code, 0);
        (r.producer_id.0, r.producer_epoch)
    }

    pub async fn add_partitions(
        &self,
        id: &str,
        pid: i64,
        epoch: i16,
        parts: &[(&str, i32)],
    ) -> Vec<i16> {
        let mut topics: Vec<AddPartitionsToTxnTopic> = Vec::new();
        for (t, p) in parts {
            match topics.iter_mut().find(|x| x.name.0.as_str() == *t) {
                Some(x) => x.partitions.push(*p),
                None => topics.push(
                    AddPartitionsToTxnTopic::default()
                        .with_name(TopicName(s(t)))
                        .with_partitions(vec![*p]),
                ),
            }
        }
        let r: AddPartitionsToTxnResponse = self
            .call(
                ApiKey::AddPartitionsToTxn,
                3,
                &AddPartitionsToTxnRequest::default()
                    .with_v3_and_below_transactional_id(TransactionalId(s(id)))
                    .with_v3_and_below_producer_id(ProducerId(pid))
                    .with_v3_and_below_producer_epoch(epoch)
                    .with_v3_and_below_topics(topics),
            )
            .await;
        r.results_by_topic_v3_and_below
            .iter()
            .flat_map(|t| {
                t.results_by_partition
                    .iter()
                    .map(|p| p.partition_error_code)
            })
            .collect()
    }

    pub async fn add_offsets(&self, id: &str, pid: i64, epoch: i16, group: &str) -> i16 {
        let r: AddOffsetsToTxnResponse = self
            .call(
                ApiKey::AddOffsetsToTxn,
                3,
                &AddOffsetsToTxnRequest::default()
                    .with_transactional_id(TransactionalId(s(id)))
                    .with_producer_id(ProducerId(pid))
                    .with_producer_epoch(epoch)
                    .with_group_id(GroupId(s(group))),
            )
            .await;
        r.error_code
    }

    pub async fn produce(&self, topic: &str, producer_id: i64) -> i16 {
        let records = [batch::record(0, 0, Some(b"k"), Some(b"v"))];
        let payload = batch::build(0, 0, 1, 1, producer_id, 0, 0, &records);
        let r: ProduceResponse = self
            .call(
                ApiKey::Produce,
                9,
                &ProduceRequest::default()
                    .with_acks(1)
                    .with_timeout_ms(5000)
                    .with_topic_data(vec![TopicProduceData::default()
                        .with_name(TopicName(s(topic)))
                        .with_partition_data(vec![PartitionProduceData::default()
                            .with_index(0)
                            .with_records(Some(Bytes::from(payload)))])]),
            )
            .await;
        r.responses[0].partition_responses[0].error_code
    }
}

/// `logs/<topic>-<partition>` directories under a data directory.
pub fn partition_dirs(data_dir: &Path) -> Vec<String> {
    let mut dirs: Vec<String> = std::fs::read_dir(data_dir.join("logs"))
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    dirs.sort();
    dirs
}

/// `request` over TCP to a broker process at `addr`, its answer decoded (a 10 s deadline on
/// every wait).
pub fn tcp_call<Req, Resp>(addr: &str, api: ApiKey, version: i16, request: &Req) -> Resp
where
    Req: Encodable + HeaderVersion,
    Resp: Decodable + HeaderVersion,
{
    use std::io::{Read, Write};
    let deadline = Some(std::time::Duration::from_secs(10));
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(deadline).unwrap();
    stream.set_write_timeout(deadline).unwrap();
    let body = frame(api, version, request);
    stream
        .write_all(&(body.len() as u32).to_be_bytes())
        .unwrap();
    stream.write_all(&body).unwrap();
    let mut size = [0u8; 4];
    stream.read_exact(&mut size).unwrap();
    let mut answer = vec![0u8; u32::from_be_bytes(size) as usize];
    stream.read_exact(&mut answer).unwrap();
    let mut buf = Bytes::from(answer);
    let header = ResponseHeader::decode(&mut buf, Resp::header_version(version)).unwrap();
    assert_eq!(header.correlation_id, 7);
    Resp::decode(&mut buf, version).unwrap()
}
