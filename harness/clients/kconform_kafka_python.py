"""kconform's workloads through kafka-python (PyPI kafka-python, the version kconform installs).

Run as ``python3 kconform_kafka_python.py WORKLOAD BOOTSTRAP TOPIC TRANSACTIONAL_ID``: prints what
each client call returned or raised as one JSON object ({"calls": [...]}); kconform reads the
topic back itself. Each error is handled as the client documents (the Java client's rules,
which kafka-python follows): a fenced producer is closed, any other error aborts the
transaction.
"""
import json
import logging
import sys

from kafka import KafkaProducer
from kafka import errors as Errors

logging.disable(logging.CRITICAL)
WAIT_S = 30
workload, bootstrap, topic, txn = sys.argv[1:5]
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


def producer():
    return KafkaProducer(
        bootstrap_servers=bootstrap,
        transactional_id=txn,
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
    error = call("commit (second producer)", lambda: (second.begin_transaction(), send(second, "n0"), second.commit_transaction()))
    end_after(second, error, "second producer")
    first.close(timeout=0)
    second.close(timeout=WAIT_S)


WORKLOADS = {"fencing": fencing, "fenced-send": fenced_send}

if __name__ == "__main__":
    run = WORKLOADS.get(workload)
    if run is None:
        sys.stderr.write("no workload %s for kafka-python\n" % workload)
        sys.exit(2)
    run()
    sys.stdout.write(json.dumps({"calls": calls}) + "\n")
    sys.stdout.flush()
