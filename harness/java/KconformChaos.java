// One worker of `kconform chaos` on the Java kafka-clients: the same exactly-once workload the
// librdkafka workers run (harness/src/clients/chaos/workload.rs). It consumes its input
// partition read_committed, writes one record per input record to an output partition drawn
// from the seed, sends its offsets in the same transaction and commits (a tenth, and its second
// transaction, aborted on purpose), handling each error as the client's documentation says: an
// abortable error aborts, a fatal one (fenced, out of order) closes the producer and makes a new
// one. After an abort or an unknown outcome it resumes from its group's committed offset.
//
//   java -cp <classes>:<libs>/* KconformChaos BOOTSTRAP INPUT OUTPUT OUTPUTS WORKER GROUP TXN
//        SEED INPUT_BASE TIMEOUT_MS
//
// It runs until its standard input closes, then ends the transaction it is in and exits. It
// prints one JSON object a line, each as it happens, so kconform loses nothing when it gives a
// stuck worker up:
//
//   {"call": NAME, "ms": N}                                   a client call that may block
//   {"begin": SEQ, "from": OFFSET, "outputs": [P, ...], "ms": N}  before a transaction ends
//   {"end": SEQ, "outcome": "committed"|"aborted"|"unknown", "on_purpose": B, "ms": N}
//   {"error": CLASS, "call": NAME, "message": TEXT, "ms": N}
//   {"new_producer": true, "ms": N}

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.OutOfOrderSequenceException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.UnsupportedVersionException;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

public class KconformChaos {
    private static final Duration CALL = Duration.ofSeconds(10);
    private static final double ABORT_SHARE = 0.1;
    private static final long ALWAYS_ABORTED = 1;

    private final String bootstrap, input, output, group, txn;
    private final int outputs, worker;
    private final long inputBase, timeoutMs, started = System.currentTimeMillis();
    private final Random rng;
    private final TopicPartition tp;
    private final KafkaConsumer<String, String> consumer;
    private KafkaProducer<String, String> producer;
    private boolean everMadeProducer;
    private Long position;
    private long seq;

    KconformChaos(String[] a) {
        bootstrap = a[0];
        input = a[1];
        output = a[2];
        outputs = Integer.parseInt(a[3]);
        worker = Integer.parseInt(a[4]);
        group = a[5];
        txn = a[6];
        rng = new Random(Long.parseLong(a[7]) * 31 + worker);
        inputBase = Long.parseLong(a[8]);
        timeoutMs = Long.parseLong(a[9]);
        tp = new TopicPartition(input, worker);
        Properties c = new Properties();
        c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        c.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        c.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        c.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        consumer = new KafkaConsumer<>(c);
        consumer.assign(Collections.singletonList(tp));
    }

    private long ms() {
        return System.currentTimeMillis() - started;
    }

    private static String str(String s) {
        if (s == null) {
            return "null";
        }
        StringBuilder b = new StringBuilder("\"");
        for (char ch : s.toCharArray()) {
            if (ch == '"' || ch == '\\') {
                b.append('\\').append(ch);
            } else if (ch < 0x20) {
                b.append(String.format("\\u%04x", (int) ch));
            } else {
                b.append(ch);
            }
        }
        return b.append('"').toString();
    }

    private static synchronized void line(String json) {
        System.out.println(json);
        System.out.flush();
    }

    private void calling(String call) {
        line("{\"call\":" + str(call) + ",\"ms\":" + ms() + "}");
    }

    private void error(String call, Throwable e) {
        Throwable cause = (e instanceof KafkaException && e.getCause() != null) ? e.getCause() : e;
        line("{\"error\":" + str(cause.getClass().getSimpleName()) + ",\"call\":" + str(call)
                + ",\"message\":" + str(String.valueOf(cause.getMessage())) + ",\"ms\":" + ms() + "}");
    }

    /** The producer, made and its transactions initialised where there is none. */
    private boolean producer() {
        if (producer != null) {
            return true;
        }
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, txn);
        p.put(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, (int) timeoutMs);
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, (int) timeoutMs);
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, (int) Math.min(timeoutMs, 5000));
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, (int) CALL.toMillis());
        p.put(ProducerConfig.LINGER_MS_CONFIG, 1);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        KafkaProducer<String, String> made = null;
        try {
            made = new KafkaProducer<>(p);
            calling("initTransactions");
            made.initTransactions();
        } catch (Exception e) {
            error("initTransactions", e);
            if (made != null) {
                made.close(Duration.ZERO);
            }
            sleep(500);
            return false;
        }
        if (everMadeProducer) {
            line("{\"new_producer\":true,\"ms\":" + ms() + "}");
        }
        everMadeProducer = true;
        producer = made;
        return true;
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Where to go on from: the group's committed offset, read as read_committed reads it. */
    private Long resumeFromGroup() {
        try {
            calling("committed");
            Map<TopicPartition, OffsetAndMetadata> at = consumer.committed(Collections.singleton(tp), CALL);
            OffsetAndMetadata o = at.get(tp);
            long from = o == null ? inputBase : o.offset();
            consumer.seek(tp, from);
            return from;
        } catch (Exception e) {
            error("committed", e);
            sleep(500);
            return null;
        }
    }

    /** Up to `want` input records from `from` on, read within half a second. */
    private List<ConsumerRecord<String, String>> batch(long from, int want) {
        List<ConsumerRecord<String, String>> got = new ArrayList<>();
        long deadline = System.currentTimeMillis() + 500;
        long next = from;
        while (got.size() < want && System.currentTimeMillis() < deadline) {
            try {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(50))) {
                    if (got.size() >= want) {
                        break;
                    }
                    if (r.offset() == next) {
                        got.add(r);
                        next++;
                    } else if (r.offset() > next) {
                        consumer.seek(tp, next);
                        break;
                    }
                }
            } catch (Exception e) {
                error("poll", e);
            }
        }
        if (got.size() > 0) {
            // What was read past the batch is read again from the next position.
            consumer.seek(tp, next);
        }
        return got;
    }

    private static boolean fatal(Exception e) {
        return e instanceof ProducerFencedException || e instanceof OutOfOrderSequenceException
                || e instanceof UnsupportedVersionException || e instanceof AuthorizationException
                || (e instanceof KafkaException && (e.getCause() instanceof ProducerFencedException));
    }

    /** One transaction over `records`; how it ended. */
    private String transaction(List<ConsumerRecord<String, String>> records) {
        long from = records.get(0).offset();
        int count = records.size();
        int[] outs = new int[count];
        StringBuilder list = new StringBuilder();
        for (int i = 0; i < count; i++) {
            outs[i] = rng.nextInt(outputs);
            list.append(i == 0 ? "" : ",").append(outs[i]);
        }
        boolean onPurpose = rng.nextDouble() < ABORT_SHARE || seq == ALWAYS_ABORTED;
        long mine = seq++;
        line("{\"begin\":" + mine + ",\"from\":" + from + ",\"outputs\":[" + list + "],\"ms\":" + ms() + "}");
        String outcome;
        boolean clean = true;
        try {
            calling("beginTransaction");
            producer.beginTransaction();
            for (int i = 0; i < count; i++) {
                String value = worker + ":" + mine + ":" + i + ":" + count + ":" + worker + ":" + (from + i);
                producer.send(new ProducerRecord<>(output, outs[i], records.get(i).key(), value));
            }
            Map<TopicPartition, OffsetAndMetadata> offsets =
                    Collections.singletonMap(tp, new OffsetAndMetadata(from + count));
            calling("sendOffsetsToTransaction");
            producer.sendOffsetsToTransaction(offsets, consumer.groupMetadata());
            if (onPurpose) {
                calling("abortTransaction");
                producer.abortTransaction();
                outcome = "aborted";
            } else {
                calling("commitTransaction");
                producer.commitTransaction();
                outcome = "committed";
            }
        } catch (TimeoutException e) {
            error("transaction", e);
            clean = false;
            outcome = "unknown";
        } catch (Exception e) {
            error("transaction", e);
            clean = false;
            if (fatal(e)) {
                outcome = "unknown";
            } else {
                try {
                    calling("abortTransaction");
                    producer.abortTransaction();
                    outcome = "aborted";
                } catch (Exception again) {
                    error("abortTransaction", again);
                    outcome = "unknown";
                }
            }
        }
        line("{\"end\":" + mine + ",\"outcome\":" + str(outcome) + ",\"on_purpose\":" + (onPurpose && clean)
                + ",\"ms\":" + ms() + "}");
        return outcome;
    }

    private void work(AtomicBoolean stop) {
        while (!stop.get()) {
            if (!producer()) {
                continue;
            }
            Long from = position != null ? position : resumeFromGroup();
            if (from == null) {
                continue;
            }
            position = from;
            List<ConsumerRecord<String, String>> records = batch(from, 1 + rng.nextInt(10));
            if (records.isEmpty()) {
                continue;
            }
            switch (transaction(records)) {
                case "committed":
                    position = from + records.size();
                    break;
                case "aborted":
                    position = null;
                    break;
                default:
                    producer.close(Duration.ZERO);
                    producer = null;
                    position = null;
            }
        }
        if (producer != null) {
            producer.close(CALL);
        }
        consumer.close(Duration.ZERO);
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 10) {
            System.err.println("usage: KconformChaos BOOTSTRAP INPUT OUTPUT OUTPUTS WORKER GROUP TXN SEED INPUT_BASE TIMEOUT_MS");
            System.exit(2);
        }
        AtomicBoolean stop = new AtomicBoolean(false);
        Thread watcher = new Thread(() -> {
            try {
                while (System.in.read() >= 0) {
                    // Anything before the end is ignored: the end is the signal.
                }
            } catch (Exception e) {
                // A closed stream is the signal too.
            }
            stop.set(true);
        });
        watcher.setDaemon(true);
        watcher.start();
        new KconformChaos(args).work(stop);
        System.exit(0);
    }
}
