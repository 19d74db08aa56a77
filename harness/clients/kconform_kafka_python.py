"""kconform's workloads through kafka-python (PyPI kafka-python, the version kconform installs).

Run as ``python3 kconform_kafka_python.py WORKLOAD BOOTSTRAP TOPIC TRANSACTIONAL_ID GROUP OFFSET``: prints what
each client call returned or raised as one JSON object ({"calls": [...]}); kconform reads the
topic back itself. Each error is handled as the client documents (the Java client's rules,
which kafka-python follows): a fenced producer is closed, any other error aborts the
transaction.
"""
import json
import logging
import sys
import time

from kafka import KafkaProducer, TopicPartition
from kafka import errors as Errors
from kafka.structs import OffsetAndMetadata

logging.disable(logging.CRITICAL)
WAIT_S = 30
workload, bootstrap, topic, txn, group, offset = sys.argv[1:7]
calls = []

# Errors after which the documentation says to close the producer, not to abort.
FATAL = (Errors.ProducerFencedError, Errors.AuthorizationError)


def call(name, step):
    """Runs one client call and records how it ended; the exception, or None."""
    try:
        step()
        calls.append({"call": name, "result": "ok"})
        return None
    except Exception as e:  # noqa: BLE001 - every outcome is the transcript's
        calls.append({"call": name, "result": type(e).__name__, "message": str(e)})
        return e


def producer(transaction_timeout_ms=60000):
    return KafkaProducer(
        bootstrap_servers=bootstrap,
        transactional_id=txn,
        transaction_timeout_ms=transaction_timeout_ms,
        max_block_ms=WAIT_S * 1000,
        request_timeout_ms=WAIT_S * 1000,
    )


def send(p, value):
    p.send(topic, value=value.encode(), partition=0).get(timeout=WAIT_S)


def end_after(p, error, who):
    """What the application does after `error` ended a step of its transaction."""
    if error is None:
        return
    if isinstance(error, FATAL):
        return
    call("abort (%s)" % who, p.abort_transaction)


def fencing():
    first = producer()
    call("initTransactions", first.init_transactions)
    call("send in an open transaction", lambda: (first.begin_transaction(), send(first, "o0"), send(first, "o1")))
    second = producer()
    call("initTransactions (second producer)", second.init_transactions)
    error = call("commit (second producer)", lambda: (second.begin_transaction(), send(second, "n0"), second.commit_transaction()))
    end_after(second, error, "second producer")
    error = call("commit (fenced producer)", first.commit_transaction)
    end_after(first, error, "fenced producer")
    first.close(timeout=0)
    second.close(timeout=WAIT_S)


def recovered(p):
    """Waits, at most WAIT_S, until the producer has finished recovering on its own.

    kafka-python answers a Produce refused with 47 by bumping its epoch in the background
    (KIP-360: InitProducerId v3 with its id and epoch). Whether that request leaves before
    close(timeout=0), and whether it reaches the broker before or after the second producer
    opens its transaction, is otherwise thread scheduling (Apache 3.7 aborts an open
    transaction for such a request before it checks the epoch). Waiting asks one question on
    every run: what the zombie's bump does once the live producer holds the newer epoch.
    """
    manager = getattr(p, "_transaction_manager", None)
    deadline = time.monotonic() + WAIT_S
    while manager is not None and manager.is_bumping_epoch() and time.monotonic() < deadline:
        time.sleep(0.01)


def fenced_send():
    first = producer()
    call("initTransactions", first.init_transactions)
    call("send in an open transaction", lambda: (first.begin_transaction(), send(first, "o0")))
    second = producer()
    call("initTransactions (second producer)", second.init_transactions)
    error = call("send (fenced producer)", lambda: send(first, "o1"))
    if error is None:
        error = call("commit (fenced producer)", first.commit_transaction)
    end_after(first, error, "fenced producer")
    recovered(first)
    error = call("commit (second producer)", lambda: (second.begin_transaction(), send(second, "n0"), second.commit_transaction()))
    end_after(second, error, "second producer")
    first.close(timeout=0)
    second.close(timeout=WAIT_S)


def abort_redo():
    """A transaction of two records aborted, then the work done again in the next, which commits."""
    p = producer()
    call("initTransactions", p.init_transactions)
    call("abort", lambda: (p.begin_transaction(), send(p, "a0"), send(p, "a1"), p.abort_transaction()))
    error = call("redo and commit", lambda: (p.begin_transaction(), send(p, "r0"), send(p, "r1"), p.commit_transaction()))
    end_after(p, error, "producer")
    p.close(timeout=WAIT_S)


def timeout_past():
    """A transaction left open past its 2 s timeout, then committed; a new producer afterwards."""
    p = producer(2000)
    call("initTransactions", p.init_transactions)
    call("send", lambda: (p.begin_transaction(), send(p, "t0"), send(p, "t1")))
    time.sleep(4)
    end_after(p, call("commit after the timeout", p.commit_transaction), "timed-out producer")
    p.close(timeout=0)
    following = producer(2000)
    call("initTransactions (new producer)", following.init_transactions)
    error = call("commit (new producer)", lambda: (following.begin_transaction(), send(following, "n0"), following.commit_transaction()))
    end_after(following, error, "new producer")
    following.close(timeout=WAIT_S)


def group_offsets():
    """Offsets for the run's own group (its id only: no member) sent with a record."""
    p = producer()
    call("initTransactions", p.init_transactions)
    call("send", lambda: (p.begin_transaction(), send(p, "g0")))
    offsets = {TopicPartition(topic, 0): OffsetAndMetadata(int(offset), "", -1)}
    call("sendOffsetsToTransaction", lambda: p.send_offsets_to_transaction(offsets, group))
    end_after(p, call("commitTransaction", p.commit_transaction), "producer")
    p.close(timeout=WAIT_S)


WORKLOADS = {
    "fencing": fencing,
    "fenced-send": fenced_send,
    "abort-redo": abort_redo,
    "timeout-past": timeout_past,
    "group-offsets": group_offsets,
}

if __name__ == "__main__":
    run = WORKLOADS.get(workload)
    if run is None:
        sys.stderr.write("no workload %s for kafka-python\n" % workload)
        sys.exit(2)
    run()
    sys.stdout.write(json.dumps({"calls": calls}) + "\n")
    sys.stdout.flush()
