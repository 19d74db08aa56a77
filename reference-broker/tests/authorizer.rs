//! The authorization hook gates the handlers: a denied topic write is
//! TOPIC_AUTHORIZATION_FAILED to a real client, and everything else keeps working.

use std::sync::Arc;
use std::time::Duration;

use rdkafka::config::ClientConfig;
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::producer::{FutureProducer, FutureRecord};
use reference_broker::auth::{Authorizer, Operation, Resource};
use reference_broker::{Broker, BrokerConfig};

/// Denies writes to the topic "secret"; allows everything else.
#[derive(Debug)]
struct DenySecretWrites;

impl Authorizer for DenySecretWrites {
    fn authorize(&self, _principal: &str, op: Operation, resource: Resource<'_>) -> bool {
        !(op == Operation::Write && resource == Resource::Topic("secret"))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn denied_topic_writes_fail_and_others_succeed() {
    let broker = Broker::start_with(BrokerConfig::for_tests(), Arc::new(DenySecretWrites))
        .await
        .unwrap();
    let producer: FutureProducer = ClientConfig::new()
        .set("bootstrap.servers", broker.addr().to_string())
        .set("message.timeout.ms", "10000")
        .create()
        .unwrap();
    let denied = producer
        .send(
            FutureRecord::<(), _>::to("secret").payload("x"),
            Duration::from_secs(10),
        )
        .await;
    match denied {
        Err((KafkaError::MessageProduction(code), _)) => {
            assert_eq!(code, RDKafkaErrorCode::TopicAuthorizationFailed)
        }
        other => panic!("expected TopicAuthorizationFailed, got {other:?}"),
    }
    producer
        .send(
            FutureRecord::<(), _>::to("open").payload("x"),
            Duration::from_secs(10),
        )
        .await
        .expect("an allowed topic still works");
    broker.shutdown().await;
}
