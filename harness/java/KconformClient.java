// A Java kafka-clients 3.7 workload runner for kconform: runs a named client workload against
// a bootstrap address and prints what the client saw as one JSON object on stdout:
//
//   {"workload": NAME, "client": "java",
//    "calls": [{"call": NAME, "result": "ok" | EXCEPTION_CLASS, "message": ...}, ...],
//    "observed": {NAME: JSON, ...}}
//
// (each client call with "ok" or the exception's class and message; what consumers read at
// each isolation level; the group's offsets as the Admin client lists them). kconform compiles
// it with javac against the kafka-clients jar the Apache target caches, runs the same workload
// on two brokers and diffs what a Java application would notice. librdkafka runs the same
// workloads (harness/src/clients/librdkafka.rs) and prints the same shape.
//
//   java -cp <classes>:<libs>/* KconformClient WORKLOAD BOOTSTRAP RUN_ID [TOPIC]
//
// With TOPIC (a provisioned topic, one partition), the workload does not create its topic, and
// reads from the end the topic had when the workload began, so earlier runs change nothing.

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

public final class KconformClient {
    static final String WORKLOADS = "eos, fencing, fenced-send, abort-redo, timeout-past, empty-id, unusual-id, "
            + "timeout-above-max, mid-transaction-consumer, idempotent, empty-group-offsets, group-offsets, "
            + "stale-generation-offsets";
    private static final Duration WAIT = Duration.ofSeconds(30);
    // How long a read_committed reader waits for the last stable offset to reach the high
    // watermark (markers still to come, or a transaction left open) before it reports.
    private static final Duration SETTLE = Duration.ofSeconds(3);
    private final String bootstrap;
    private final String run;
    // The transactional id and group kconform gave this run (placed by it on a cluster).
    private final String txn;
    private final String group;
    private final String topic;
    private final boolean provisioned;
    private final TopicPartition tp;
    private long base;
    private KafkaConsumer<String, String> watcher;
    private final List<String> calls = new ArrayList<>();
    private final List<String> observed = new ArrayList<>();

    private KconformClient(String bootstrap, String run, String txn, String group, String topic) {
        this.bootstrap = bootstrap;
        this.run = run;
        this.txn = txn;
        this.group = group;
        this.provisioned = topic != null;
        this.topic = provisioned ? topic : "java-" + run;
        this.tp = new TopicPartition(this.topic, 0);
    }

    interface Step {
        void run() throws Exception;
    }

    /** Runs one client call and records its outcome; true when it succeeded. */
    private boolean call(String name, Step step) {
        try {
            step.run();
            calls.add("{\"call\":" + str(name) + ",\"result\":\"ok\"}");
            return true;
        } catch (Exception e) {
            Throwable t = e;
            while ((t instanceof java.util.concurrent.ExecutionException
                    || t.getClass() == org.apache.kafka.common.KafkaException.class)
                    && t.getCause() != null
                    && t.getCause() != t) {
                t = t.getCause();
            }
            calls.add("{\"call\":" + str(name) + ",\"result\":" + str(t.getClass().getName())
                    + ",\"message\":" + str(String.valueOf(t.getMessage())) + "}");
            return false;
        }
    }

    /**
     * Aborts what a failed commit left open, where the client still can (after an abortable
     * error), so that no transaction of this run holds a provisioned topic's last stable offset
     * until its timeout. Not a compared call: it is clean-up.
     */
    private static void abandon(KafkaProducer<String, String> p) {
        try {
            p.abortTransaction();
        } catch (Exception ignored) {
            // A fatal error: the broker's timeout ends the transaction.
        }
    }

    /** Records what the workload observed under `name` (a JSON value). */
    private void observe(String name, String json) {
        observed.add(str(name) + ":" + json);
    }

    private static String list(List<String> values) {
        StringBuilder b = new StringBuilder("[");
        for (String v : values) {
            b.append(b.length() > 1 ? "," : "").append(str(v));
        }
        return b.append("]").toString();
    }

    private Properties common() {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        return p;
    }

    private Properties producerConfig() {
        Properties p = common();
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "30000");
        return p;
    }

    private KafkaProducer<String, String> producer(String transactionalId, int timeoutMs) {
        Properties p = producerConfig();
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
        p.put(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, String.valueOf(timeoutMs));
        return new KafkaProducer<>(p);
    }

    private KafkaProducer<String, String> producer(String transactionalId) {
        return producer(transactionalId, 60000);
    }

    private KafkaConsumer<String, String> consumer(String group, String isolation) {
        Properties p = common();
        p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation);
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        return new KafkaConsumer<>(p);
    }

    private void send(KafkaProducer<String, String> p, String prefix, int n) throws Exception {
        for (int i = 0; i < n; i++) {
            p.send(new ProducerRecord<>(topic, 0, null, prefix + i)).get();
        }
    }

    /** Creates the topic (unless provisioned) and notes where its log ends now. */
    private void setUp(Admin admin) throws Exception {
        if (!provisioned) {
            call("createTopics", () -> admin.createTopics(Collections.singletonList(
                    new NewTopic(topic, 1, (short) 1))).all().get());
        }
        watcher = consumer("java-base-" + run, "read_uncommitted");
        base = highWatermark();
    }

    /** The high watermark now, as a read_uncommitted client sees it. */
    private long highWatermark() {
        return watcher.endOffsets(Collections.singletonList(tp), WAIT).get(tp);
    }

    /** A consumer assigned the workload's partition from where the workload began. */
    private KafkaConsumer<String, String> reader(String isolation) {
        KafkaConsumer<String, String> c = consumer("java-reader-" + run, isolation);
        c.assign(Collections.singletonList(tp));
        c.seek(tp, base);
        return c;
    }

    /**
     * Polls `c` until its position reaches the high watermark, or, where it cannot (markers
     * still to come, a transaction left open), for SETTLE once it stops getting records: the
     * values read.
     */
    private List<String> drain(KafkaConsumer<String, String> c) {
        List<String> out = new ArrayList<>();
        long deadline = System.nanoTime() + WAIT.toNanos();
        long end = highWatermark();
        long quietSince = System.nanoTime();
        while (System.nanoTime() < deadline && System.nanoTime() - quietSince < SETTLE.toNanos()
                && c.position(tp, WAIT) < end) {
            for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(100))) {
                out.add(r.value());
                quietSince = System.nanoTime();
            }
        }
        return out;
    }

    /** What a fresh consumer at `isolation` reads of what the workload wrote. */
    private List<String> read(String isolation) {
        try (KafkaConsumer<String, String> c = reader(isolation)) {
            return drain(c);
        }
    }

    private void observeReads() {
        observe("read_committed", list(read("read_committed")));
        observe("read_uncommitted", list(read("read_uncommitted")));
    }

    private void observeGroupOffsets(Admin admin, String group) {
        StringBuilder offsets = new StringBuilder("{");
        call("listConsumerGroupOffsets", () -> {
            Map<TopicPartition, OffsetAndMetadata> listed = admin
                    .listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
            Map<TopicPartition, OffsetAndMetadata> sorted =
                    new TreeMap<>((a, b) -> Integer.compare(a.partition(), b.partition()));
            sorted.putAll(listed);
            for (Map.Entry<TopicPartition, OffsetAndMetadata> e : sorted.entrySet()) {
                offsets.append(offsets.length() > 1 ? "," : "")
                        .append(str("partition " + e.getKey().partition()))
                        .append(":")
                        .append(e.getValue() == null ? -1 : e.getValue().offset() - base);
            }
        });
        observe("group_offsets", offsets.append("}").toString());
    }

    private Map<TopicPartition, OffsetAndMetadata> offsets(long relative) {
        return Collections.singletonMap(tp, new OffsetAndMetadata(base + relative));
    }

    /**
     * The exactly-once loop: a committed transaction, an aborted one, a consume-process-produce
     * commit with sendOffsetsToTransaction, then a second producer with the same id fencing the
     * first; what read_committed and read_uncommitted consumers read, and the group's offsets.
     */
    private void eos(Admin admin) throws Exception {
        KafkaProducer<String, String> p = producer(txn);
        call("initTransactions", p::initTransactions);
        call("commit", () -> {
            p.beginTransaction();
            send(p, "c", 5);
            p.commitTransaction();
        });
        call("abort", () -> {
            p.beginTransaction();
            send(p, "a", 5);
            p.abortTransaction();
        });
        try (KafkaConsumer<String, String> input = consumer(group, "read_committed")) {
            call("sendOffsetsToTransaction", () -> {
                p.beginTransaction();
                send(p, "x", 1);
                p.sendOffsetsToTransaction(offsets(5), input.groupMetadata());
                p.commitTransaction();
            });
        }
        KafkaProducer<String, String> second = producer(txn);
        call("initTransactions (second producer)", second::initTransactions);
        call("commit (fenced producer)", () -> {
            p.beginTransaction();
            send(p, "z", 1);
            p.commitTransaction();
        });
        p.close(Duration.ZERO);
        second.close(WAIT);
        observeReads();
        observeGroupOffsets(admin, group);
    }

    /**
     * A producer fenced in the middle of a transaction: a second producer with its id starts
     * while the first has records in an open transaction, commits its own, and the first tries
     * to commit.
     */
    private void fencing(Admin admin) throws Exception {
        KafkaProducer<String, String> first = producer(txn);
        call("initTransactions", first::initTransactions);
        call("send in an open transaction", () -> {
            first.beginTransaction();
            send(first, "o", 2);
        });
        KafkaProducer<String, String> second = producer(txn);
        call("initTransactions (second producer)", second::initTransactions);
        call("commit (second producer)", () -> {
            second.beginTransaction();
            send(second, "n", 1);
            second.commitTransaction();
        });
        call("commit (fenced producer)", first::commitTransaction);
        first.close(Duration.ZERO);
        second.close(WAIT);
        observeReads();
    }

    /**
     * A second producer with the same id starts while the first has a transaction open; the
     * first then sends again and ends its transaction as the client's documentation says (a
     * fenced producer, or one past an unrecoverable error, is closed; after any other error the
     * transaction is aborted); then the second sends and commits.
     */
    private void fencedSend(Admin admin) throws Exception {
        KafkaProducer<String, String> first = producer(txn);
        call("initTransactions", first::initTransactions);
        call("send in an open transaction", () -> {
            first.beginTransaction();
            send(first, "o", 1);
        });
        KafkaProducer<String, String> second = producer(txn);
        call("initTransactions (second producer)", second::initTransactions);
        boolean ok = call("send (fenced producer)",
                () -> first.send(new ProducerRecord<>(topic, 0, null, "o1")).get());
        if (ok) {
            ok = call("commit (fenced producer)", first::commitTransaction);
        }
        if (!ok) {
            endAfterError(first, "fenced producer");
        }
        if (!call("commit (second producer)", () -> {
            second.beginTransaction();
            send(second, "n", 1);
            second.commitTransaction();
        })) {
            endAfterError(second, "second producer");
        }
        first.close(Duration.ZERO);
        second.close(WAIT);
        observeReads();
    }

    /**
     * What the Javadoc of KafkaProducer tells an application to do after a transactional call
     * failed (the error is the last call's): close on ProducerFencedException,
     * OutOfOrderSequenceException or an authorization error, abort on any other.
     */
    private void endAfterError(KafkaProducer<String, String> p, String who) {
        String last = calls.get(calls.size() - 1);
        if (last.contains("ProducerFencedException") || last.contains("OutOfOrderSequenceException")
                || last.contains("AuthorizationException")) {
            return;
        }
        call("abort (" + who + ")", p::abortTransaction);
    }

    /** A transaction left open past its 2 s timeout, then committed. */
    private void timeoutPast(Admin admin) throws Exception {
        KafkaProducer<String, String> p = producer(txn, 2000);
        call("initTransactions", p::initTransactions);
        call("send", () -> {
            p.beginTransaction();
            send(p, "t", 2);
        });
        Thread.sleep(4000);
        call("commit after the timeout", p::commitTransaction);
        p.close(Duration.ZERO);
        KafkaProducer<String, String> next = producer(txn, 2000);
        call("initTransactions (new producer)", next::initTransactions);
        call("commit (new producer)", () -> {
            next.beginTransaction();
            send(next, "n", 1);
            next.commitTransaction();
        });
        next.close(WAIT);
        observeReads();
    }

    /** A transactional producer whose transactional.id is empty. */
    private void emptyId(Admin admin) throws Exception {
        transactionWithId("");
    }

    /** A transactional id with spaces, a path, dots and non-ASCII letters, 300 characters. */
    private void unusualId(Admin admin) throws Exception {
        StringBuilder id = new StringBuilder("tx ü∆ ../../etc/" + run + " ");
        while (id.length() < 300) {
            id.append('.');
        }
        transactionWithId(id.toString());
    }

    private void transactionWithId(String id) throws Exception {
        List<KafkaProducer<String, String>> made = new ArrayList<>();
        if (!call("new KafkaProducer", () -> made.add(producer(id)))) {
            observeReads();
            return;
        }
        KafkaProducer<String, String> p = made.get(0);
        call("initTransactions", p::initTransactions);
        call("commit", () -> {
            p.beginTransaction();
            send(p, "u", 2);
            p.commitTransaction();
        });
        p.close(Duration.ZERO);
        observeReads();
    }

    /** A transaction timeout above Apache's default transaction.max.timeout.ms (900000). */
    private void timeoutAboveMax(Admin admin) throws Exception {
        KafkaProducer<String, String> p = producer(txn, 900001);
        call("initTransactions", p::initTransactions);
        call("commit", () -> {
            p.beginTransaction();
            send(p, "m", 2);
            p.commitTransaction();
        });
        p.close(Duration.ZERO);
        observeReads();
    }

    /** Consumers that start reading while a transaction is open, and read on after it commits. */
    private void midTransactionConsumer(Admin admin) throws Exception {
        KafkaProducer<String, String> p = producer(txn);
        call("initTransactions", p::initTransactions);
        call("send in an open transaction", () -> {
            p.beginTransaction();
            send(p, "m", 3);
        });
        try (KafkaConsumer<String, String> committed = reader("read_committed");
                KafkaConsumer<String, String> uncommitted = reader("read_uncommitted")) {
            observe("read_committed before the commit", list(drain(committed)));
            observe("read_uncommitted before the commit", list(drain(uncommitted)));
            call("commit", p::commitTransaction);
            observe("read_committed after the commit", list(drain(committed)));
        }
        p.close(WAIT);
    }

    /** A transaction aborted, then its work done again in the next, which commits. */
    private void abortRedo(Admin admin) throws Exception {
        KafkaProducer<String, String> p = producer(txn);
        call("initTransactions", p::initTransactions);
        call("abort", () -> {
            p.beginTransaction();
            send(p, "a", 2);
            p.abortTransaction();
        });
        call("redo and commit", () -> {
            p.beginTransaction();
            send(p, "r", 2);
            p.commitTransaction();
        });
        p.close(WAIT);
        observeReads();
    }

    /** An idempotent producer (acks=all, retries, five requests in flight) writing 20 records. */
    private void idempotent(Admin admin) throws Exception {
        Properties c = producerConfig();
        c.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        c.put(ProducerConfig.ACKS_CONFIG, "all");
        c.put(ProducerConfig.RETRIES_CONFIG, String.valueOf(Integer.MAX_VALUE));
        c.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, "5");
        try (KafkaProducer<String, String> p = new KafkaProducer<>(c)) {
            call("send 20 records", () -> {
                List<java.util.concurrent.Future<?>> sent = new ArrayList<>();
                for (int i = 0; i < 20; i++) {
                    sent.add(p.send(new ProducerRecord<>(topic, 0, null, "i" + i)));
                }
                for (java.util.concurrent.Future<?> f : sent) {
                    f.get();
                }
            });
        }
        observeReads();
    }

    /** sendOffsetsToTransaction for the run's own group, by its id alone (no member). */
    private void groupOffsets(Admin admin) throws Exception {
        offsetsFor(admin, new ConsumerGroupMetadata(group), group);
    }

    /** sendOffsetsToTransaction for the group "" (kaas refuses it; Apache accepts). */
    private void emptyGroupOffsets(Admin admin) throws Exception {
        offsetsFor(admin, new ConsumerGroupMetadata(""), "");
    }

    /**
     * sendOffsetsToTransaction with the group metadata of a consumer that joined the group,
     * was assigned the partition and left: a generation and member the group no longer has.
     */
    private void staleGenerationOffsets(Admin admin) throws Exception {
        List<ConsumerGroupMetadata> joined = new ArrayList<>();
        call("consumer joins the group", () -> {
            try (KafkaConsumer<String, String> c = consumer(group, "read_committed")) {
                c.subscribe(Collections.singletonList(topic));
                long deadline = System.nanoTime() + WAIT.toNanos();
                while (c.assignment().isEmpty() && System.nanoTime() < deadline) {
                    c.poll(Duration.ofMillis(100));
                }
                if (c.assignment().isEmpty()) {
                    throw new IllegalStateException("no partition assigned");
                }
                joined.add(c.groupMetadata());
            }
        });
        offsetsFor(admin, joined.isEmpty() ? null : joined.get(0), group);
    }

    private void offsetsFor(Admin admin, ConsumerGroupMetadata metadata, String group)
            throws Exception {
        KafkaProducer<String, String> p = producer(txn);
        call("initTransactions", p::initTransactions);
        call("send", () -> {
            p.beginTransaction();
            send(p, "g", 1);
        });
        call("sendOffsetsToTransaction", () -> {
            if (metadata == null) {
                throw new IllegalStateException("the consumer gave no group metadata");
            }
            p.sendOffsetsToTransaction(offsets(1), metadata);
        });
        if (!call("commitTransaction", p::commitTransaction)) {
            abandon(p);
        }
        p.close(Duration.ZERO);
        observeReads();
        if (!group.isEmpty()) {
            observeGroupOffsets(admin, group);
        }
    }

    private static String str(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char ch : s.toCharArray()) {
            switch (ch) {
                case '"': b.append("\\\""); break;
                case '\\': b.append("\\\\"); break;
                case '\n': b.append("\\n"); break;
                case '\r': b.append("\\r"); break;
                case '\t': b.append("\\t"); break;
                default:
                    if (ch < 0x20) {
                        b.append(String.format("\\u%04x", (int) ch));
                    } else {
                        b.append(ch);
                    }
            }
        }
        return b.append('"').toString();
    }

    interface Workload {
        void run(Admin admin) throws Exception;
    }

    private Workload workload(String name) {
        switch (name) {
            case "eos": return this::eos;
            case "fencing": return this::fencing;
            case "fenced-send": return this::fencedSend;
            case "abort-redo": return this::abortRedo;
            case "timeout-past": return this::timeoutPast;
            case "empty-id": return this::emptyId;
            case "unusual-id": return this::unusualId;
            case "timeout-above-max": return this::timeoutAboveMax;
            case "mid-transaction-consumer": return this::midTransactionConsumer;
            case "idempotent": return this::idempotent;
            case "empty-group-offsets": return this::emptyGroupOffsets;
            case "group-offsets": return this::groupOffsets;
            case "stale-generation-offsets": return this::staleGenerationOffsets;
            default: return null;
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 5 && args.length != 6) {
            System.err.println("usage: KconformClient WORKLOAD BOOTSTRAP RUN_ID TRANSACTIONAL_ID GROUP [TOPIC]"
                    + " (workloads: " + WORKLOADS + ")");
            System.exit(2);
        }
        KconformClient client = new KconformClient(args[1], args[2], args[3], args[4],
                args.length == 6 ? args[5] : null);
        Workload w = client.workload(args[0]);
        if (w == null) {
            System.err.println("unknown workload '" + args[0] + "' (workloads: " + WORKLOADS + ")");
            System.exit(2);
        }
        try (Admin admin = Admin.create(client.common())) {
            client.setUp(admin);
            w.run(admin);
        }
        System.out.println("{\"workload\":" + str(args[0]) + ",\"client\":\"java\",\"calls\":["
                + String.join(",", client.calls) + "],\"observed\":{"
                + String.join(",", client.observed) + "}}");
        System.exit(0);
    }
}
