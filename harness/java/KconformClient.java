// A Java kafka-clients 3.7 workload runner for kconform: runs a named client workload against
// a bootstrap address and prints what the client saw as one JSON object on stdout (each call
// with "ok" or the exception's class and message, the records read at each isolation level,
// the group's committed offsets as the Admin client lists them). kconform compiles it with
// javac against the kafka-clients jar the Apache target caches, and runs the same workload on
// kaas-ref and Apache to compare what a Java application would notice.
//
//   java -cp <classes>:<libs>/* KconformClient eos BOOTSTRAP RUN_ID

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
    private static final Duration WAIT = Duration.ofSeconds(30);
    private final String bootstrap;
    private final List<String> calls = new ArrayList<>();

    private KconformClient(String bootstrap) {
        this.bootstrap = bootstrap;
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

    private Properties common() {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        return p;
    }

    private KafkaProducer<String, String> producer(String transactionalId) {
        Properties p = common();
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
        p.put(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, "60000");
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        return new KafkaProducer<>(p);
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

    private void send(KafkaProducer<String, String> p, String topic, String prefix, int n)
            throws Exception {
        for (int i = 0; i < n; i++) {
            p.send(new ProducerRecord<>(topic, 0, null, prefix + i)).get();
        }
    }

    /** Every value a fresh consumer reads from partition 0 until two quiet seconds. */
    private List<String> read(String topic, String isolation) {
        List<String> out = new ArrayList<>();
        try (KafkaConsumer<String, String> c = consumer(topic + "-reader-" + isolation, isolation)) {
            TopicPartition tp = new TopicPartition(topic, 0);
            c.assign(Collections.singletonList(tp));
            c.seekToBeginning(Collections.singletonList(tp));
            long quietSince = System.nanoTime();
            long end = System.nanoTime() + WAIT.toNanos();
            while (System.nanoTime() < end && System.nanoTime() - quietSince < 2_000_000_000L) {
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(100))) {
                    out.add(r.value());
                    quietSince = System.nanoTime();
                }
            }
        }
        return out;
    }

    /**
     * The exactly-once loop: a committed transaction, an aborted one, a consume-process-produce
     * commit with sendOffsetsToTransaction, then a second producer with the same id fencing the
     * first; what read_committed and read_uncommitted consumers read, and the group's offsets.
     */
    private String eos(String run) throws Exception {
        String topic = "java-" + run, txn = "java-tx-" + run, group = "java-g-" + run;
        try (Admin admin = Admin.create(common())) {
            call("createTopics", () -> admin.createTopics(Collections.singletonList(
                    new NewTopic(topic, 1, (short) 1))).all().get());
            KafkaProducer<String, String> p = producer(txn);
            call("initTransactions", p::initTransactions);
            call("commit", () -> {
                p.beginTransaction();
                send(p, topic, "c", 5);
                p.commitTransaction();
            });
            call("abort", () -> {
                p.beginTransaction();
                send(p, topic, "a", 5);
                p.abortTransaction();
            });
            try (KafkaConsumer<String, String> input = consumer(group, "read_committed")) {
                call("sendOffsetsToTransaction", () -> {
                    p.beginTransaction();
                    send(p, topic, "x", 1);
                    Map<TopicPartition, OffsetAndMetadata> offsets = new TreeMap<>(
                            (a, b) -> a.toString().compareTo(b.toString()));
                    offsets.put(new TopicPartition(topic, 0), new OffsetAndMetadata(5));
                    p.sendOffsetsToTransaction(offsets, input.groupMetadata());
                    p.commitTransaction();
                });
            }
            KafkaProducer<String, String> second = producer(txn);
            call("initTransactions (second producer)", second::initTransactions);
            call("commit (fenced producer)", () -> {
                p.beginTransaction();
                send(p, topic, "z", 1);
                p.commitTransaction();
            });
            p.close(Duration.ZERO);
            second.close(WAIT);
            StringBuilder committed = new StringBuilder("[");
            for (String v : read(topic, "read_committed")) {
                committed.append(committed.length() > 1 ? "," : "").append(str(v));
            }
            committed.append("]");
            int uncommitted = read(topic, "read_uncommitted").size();
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
                            .append(e.getValue().offset());
                }
            });
            offsets.append("}");
            return "{\"workload\":\"eos\",\"calls\":[" + String.join(",", calls)
                    + "],\"read_committed\":" + committed + ",\"read_uncommitted\":" + uncommitted
                    + ",\"group_offsets\":" + offsets + "}";
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

    public static void main(String[] args) throws Exception {
        if (args.length != 3) {
            System.err.println("usage: KconformClient WORKLOAD BOOTSTRAP RUN_ID (workloads: eos)");
            System.exit(2);
        }
        KconformClient client = new KconformClient(args[1]);
        switch (args[0]) {
            case "eos":
                System.out.println(client.eos(args[2]));
                break;
            default:
                System.err.println("unknown workload '" + args[0] + "' (workloads: eos)");
                System.exit(2);
        }
        System.exit(0);
    }
}
