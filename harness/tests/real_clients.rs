//! Real clients against both secured brokers (ref+sasl, apache+sasl): the librdkafka
//! exactly-once workload — a committed transaction, an aborted one, a consume-process-produce
//! commit with sendOffsetsToTransaction, and a producer fenced by a second one with its
//! transactional id — as a SASL user granted what the workload needs, and as one missing one
//! ACL: the client must fail alike on both. (On plain listeners, `kconform clients` runs this
//! workload and nine others with librdkafka and the Java client: tests/clients.rs.)

use std::time::{Duration, Instant};

use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::error::KafkaError;
use rdkafka::message::Message;
use rdkafka::producer::{BaseRecord, DefaultProducerContext, Producer, ThreadedProducer};
use rdkafka::{Offset, TopicPartitionList};

use kconform::targets::acls::AclWire;
use kconform::targets::{Running, TargetSpec};

const T: Duration = Duration::from_secs(30);

/// What the clients saw.
#[derive(Debug, PartialEq, Eq)]
struct Seen {
    /// Values a read_committed consumer read, in order.
    committed: Vec<String>,
    /// How many records a read_uncommitted consumer read.
    uncommitted: usize,
    /// The group's committed offset after sendOffsetsToTransaction and commit.
    group_offset: Option<i64>,
    /// The first producer's error once a second one took its transactional id.
    fenced: String,
}

/// Who the client logs in as: nobody (a plain listener), or a user over SASL/PLAIN.
type Login = Option<&'static str>;

/// A client's configuration for the broker at `addr`, logged in as `login`.
fn config(addr: &str, login: Login) -> ClientConfig {
    let mut c = ClientConfig::new();
    c.set("bootstrap.servers", addr);
    if let Some(user) = login {
        c.set("security.protocol", "SASL_PLAINTEXT")
            .set("sasl.mechanism", "PLAIN")
            .set("sasl.username", user)
            .set(
                "sasl.password",
                kconform::security::password(user).expect("a known user"),
            );
    }
    c
}

fn try_producer(
    addr: &str,
    login: Login,
    id: &str,
) -> Result<ThreadedProducer<DefaultProducerContext>, KafkaError> {
    let p: ThreadedProducer<DefaultProducerContext> = config(addr, login)
        .set("transactional.id", id)
        .set("transaction.timeout.ms", "60000")
        .create()
        .expect("transactional producer");
    p.init_transactions(T)?;
    Ok(p)
}

fn producer(addr: &str, login: Login, id: &str) -> ThreadedProducer<DefaultProducerContext> {
    try_producer(addr, login, id).expect("init_transactions")
}

fn consumer(addr: &str, login: Login, group: &str, isolation: &str) -> BaseConsumer {
    config(addr, login)
        .set("group.id", group)
        .set("isolation.level", isolation)
        .set("enable.auto.commit", "false")
        .set("auto.offset.reset", "earliest")
        .create()
        .expect("consumer")
}

fn send(p: &ThreadedProducer<DefaultProducerContext>, topic: &str, values: &[String]) {
    for v in values {
        p.send(BaseRecord::<(), _>::to(topic).payload(v).partition(0))
            .map_err(|(e, _)| e)
            .expect("send");
    }
    p.flush(T).expect("flush");
}

/// Every record a fresh consumer reads from partition 0 at `isolation` until two quiet seconds.
fn read(addr: &str, login: Login, topic: &str, isolation: &str) -> Vec<String> {
    let c = consumer(
        addr,
        login,
        &format!("{topic}-reader-{}", uuid::Uuid::new_v4()),
        isolation,
    );
    let mut tpl = TopicPartitionList::new();
    tpl.add_partition_offset(topic, 0, Offset::Beginning)
        .unwrap();
    c.assign(&tpl).unwrap();
    let (mut out, mut quiet_since) = (Vec::new(), Instant::now());
    let end = Instant::now() + T;
    while Instant::now() < end && quiet_since.elapsed() < Duration::from_secs(2) {
        if let Some(Ok(m)) = c.poll(Duration::from_millis(100)) {
            out.push(String::from_utf8_lossy(m.payload().unwrap_or_default()).into_owned());
            quiet_since = Instant::now();
        }
    }
    out
}

fn values(prefix: &str, n: usize) -> Vec<String> {
    (0..n).map(|i| format!("{prefix}{i}")).collect()
}

/// A workload's names: its topic, transactional id and group.
struct Names {
    topic: String,
    txn: String,
    group: String,
}

impl Names {
    fn fresh() -> Names {
        let run = uuid::Uuid::new_v4().simple().to_string();
        Names {
            topic: format!("rc-{run}"),
            txn: format!("tx-{run}"),
            group: format!("rc-{run}-group"),
        }
    }
}

/// Creates the workload's topic, logged in as `login` (the super user on a secured broker).
fn create_topic(addr: &str, login: Login, topic: &str) {
    let admin: AdminClient<DefaultClientContext> =
        config(addr, login).create().expect("admin client");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let created = rt
        .block_on(admin.create_topics(
            &[NewTopic::new(topic, 1, TopicReplication::Fixed(1))],
            &AdminOptions::new().operation_timeout(Some(T)),
        ))
        .expect("create topic");
    assert!(created.iter().all(Result::is_ok), "{created:?}");
}

/// The workload, on the broker at `addr`, logged in as `login`, on a topic that exists.
fn workload(addr: &str, login: Login, names: &Names) -> Seen {
    let Names { topic, txn, group } = names;
    let p = producer(addr, login, txn);
    p.begin_transaction().unwrap();
    send(&p, topic, &values("c", 5));
    p.commit_transaction(T).expect("commit");
    p.begin_transaction().unwrap();
    send(&p, topic, &values("a", 5));
    p.abort_transaction(T).expect("abort");

    // Consume-process-produce: the output record and the group's offset commit together.
    let input = consumer(addr, login, group, "read_committed");
    p.begin_transaction().unwrap();
    send(&p, topic, &values("x", 1));
    let mut offsets = TopicPartitionList::new();
    offsets
        .add_partition_offset(topic, 0, Offset::Offset(5))
        .unwrap();
    p.send_offsets_to_transaction(&offsets, &input.group_metadata().unwrap(), T)
        .expect("send_offsets_to_transaction");
    p.commit_transaction(T).expect("commit with offsets");

    // A second producer with the same id fences the first.
    let _second = producer(addr, login, txn);
    let fenced = (|| {
        p.begin_transaction()?;
        send(&p, topic, &values("z", 1));
        p.commit_transaction(T)
    })();
    let fenced = match fenced {
        Err(KafkaError::Transaction(e)) => {
            format!("{}{}", if e.is_fatal() { "fatal " } else { "" }, e.code())
        }
        other => format!("{other:?}"),
    };

    let mut tpl = TopicPartitionList::new();
    tpl.add_partition(topic, 0);
    let group_offset = match input
        .committed_offsets(tpl, T)
        .expect("committed offsets")
        .find_partition(topic, 0)
        .map(|e| e.offset())
    {
        Some(Offset::Offset(o)) => Some(o),
        _ => None,
    };
    Seen {
        committed: read(addr, login, topic, "read_committed"),
        uncommitted: read(addr, login, topic, "read_uncommitted").len(),
        group_offset,
        fenced,
    }
}

/// The client's error, as the application sees it: the librdkafka code, and whether it is fatal.
fn client_error<T>(result: Result<T, KafkaError>) -> String {
    match result {
        Ok(_) => "no error".into(),
        Err(KafkaError::Transaction(e)) => {
            format!("{}{:?}", if e.is_fatal() { "fatal " } else { "" }, e.code())
        }
        Err(other) => format!("{other:?}"),
    }
}

/// An ACL allowing `user` an operation on a resource (`pattern` 3 literal, 4 prefixed).
fn allow(user: &str, resource_type: i8, name: &str, pattern: i8, operation: i8) -> AclWire {
    AclWire {
        resource_type,
        resource_name: name.into(),
        pattern_type: pattern,
        principal: format!("User:{user}"),
        operation,
        permission: 3,
    }
}

/// What the workload needs on a secured broker: WRITE on its transactional id, WRITE and READ
/// on its topic, READ on its group and on its readers' groups (prefixed by the topic's name).
fn grants(user: &str, names: &Names, with_group: bool) -> Vec<AclWire> {
    let (topic, group, txn, literal, prefixed) = (2, 3, 5, 3, 4);
    let (read, write) = (3, 4);
    let mut acls = vec![
        allow(user, txn, &names.txn, literal, write),
        allow(user, topic, &names.topic, literal, write),
        allow(user, topic, &names.topic, literal, read),
        allow(
            user,
            group,
            &format!("{}-reader-", names.topic),
            prefixed,
            read,
        ),
    ];
    if with_group {
        acls.push(allow(user, group, &names.group, literal, read));
    }
    acls
}

/// What librdkafka saw on a secured broker: the workload as a user granted what it needs, then
/// the errors of a user missing one ACL (WRITE on the transactional id; READ on the group).
#[derive(Debug, PartialEq, Eq)]
struct SeenSecured {
    workload: Seen,
    without_transactional_id: String,
    without_group: String,
}

async fn seen_secured(spec: TargetSpec) -> SeenSecured {
    let target = Running::start(&spec).await.expect("target starts");
    let (addr, user) = (target.addr, "alice");
    let (names, partial) = (Names::fresh(), Names::fresh());
    let acls = [grants(user, &names, true), grants(user, &partial, false)].concat();
    kconform::targets::acls::create(&[addr], T, &acls)
        .await
        .expect("ACLs created");
    let admin = Some(kconform::security::SUPER_USER);
    let seen = tokio::task::spawn_blocking(move || {
        let addr = addr.to_string();
        create_topic(&addr, admin, &names.topic);
        create_topic(&addr, admin, &partial.topic);
        let workload = workload(&addr, Some(user), &names);
        let denied_id = format!("{}-denied", partial.txn);
        let without_transactional_id = client_error(try_producer(&addr, Some(user), &denied_id));
        let p = producer(&addr, Some(user), &partial.txn);
        let input = consumer(&addr, Some(user), &partial.group, "read_committed");
        p.begin_transaction().unwrap();
        send(&p, &partial.topic, &values("y", 1));
        let mut offsets = TopicPartitionList::new();
        offsets
            .add_partition_offset(&partial.topic, 0, Offset::Offset(0))
            .unwrap();
        let without_group = client_error(p.send_offsets_to_transaction(
            &offsets,
            &input.group_metadata().unwrap(),
            T,
        ));
        let _ = p.abort_transaction(T);
        SeenSecured {
            workload,
            without_transactional_id,
            without_group,
        }
    })
    .await
    .expect("workload");
    kconform::targets::acls::delete(&[addr], T, &acls)
        .await
        .expect("ACLs deleted");
    target.stop().await;
    seen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn librdkafka_as_a_sasl_user_sees_the_same_on_both_secured_brokers() {
    let kaas = seen_secured(TargetSpec::REF.sasl()).await;
    let mut expected: Vec<String> = values("c", 5);
    expected.extend(values("x", 1));
    assert_eq!(
        kaas.workload.committed, expected,
        "read_committed on kaas-ref"
    );
    assert_eq!(kaas.workload.group_offset, Some(5));
    assert!(
        kaas.without_transactional_id
            .contains("TransactionalIdAuthorizationFailed"),
        "{}",
        kaas.without_transactional_id
    );
    assert!(
        kaas.without_group.contains("GroupAuthorizationFailed"),
        "{}",
        kaas.without_group
    );
    match kconform::targets::apache::available() {
        Ok(()) => {
            let apache =
                seen_secured(TargetSpec::apache(kconform::targets::apache::Backend::Jvm).sasl())
                    .await;
            assert_eq!(
                kaas, apache,
                "kaas-ref (left) and Apache (right) differ for librdkafka as a SASL user"
            );
            println!("librdkafka as a SASL user saw the same on both: {kaas:?}");
        }
        Err(why) => println!("SKIPPED the Apache half: {why}"),
    }
}

/// What the container backend does after its start, tried on the JVM one (no Docker here):
/// SCRAM-SHA-512 credentials sent with AlterUserScramCredentials replace those the storage
/// format wrote, and a SCRAM login with them succeeds, so the salted password kconform computes
/// is the one Apache checks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn apache_takes_scram_credentials_over_the_wire() {
    if let Err(why) = kconform::targets::apache::available() {
        println!("SKIPPED: {why}");
        return;
    }
    let target =
        Running::start(&TargetSpec::apache(kconform::targets::apache::Backend::Jvm).sasl())
            .await
            .expect("target starts");
    kconform::wire::sasl::upsert_scram_users(target.addr, T)
        .await
        .expect("credentials upserted");
    for (user, password) in kconform::security::USERS {
        let mut conn = kconform::wire::client::Connection::connect(target.addr, T)
            .await
            .unwrap();
        kconform::wire::sasl::authenticate(
            &mut conn,
            kconform::wire::sasl::SCRAM_SHA_512,
            user,
            password,
        )
        .await
        .unwrap_or_else(|e| panic!("{user}: {e}"));
    }
    let mut conn = kconform::wire::client::Connection::connect(target.addr, T)
        .await
        .unwrap();
    let wrong = kconform::wire::sasl::authenticate(
        &mut conn,
        kconform::wire::sasl::SCRAM_SHA_512,
        "alice",
        "x",
    )
    .await;
    assert!(wrong.is_err(), "a wrong password logged in");
    target.stop().await;
}
