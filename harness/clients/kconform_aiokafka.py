"""kconform's workloads through aiokafka (PyPI aiokafka, the version kconform installs).

Run as ``python3 kconform_aiokafka.py WORKLOAD BOOTSTRAP TOPIC TRANSACTIONAL_ID GROUP OFFSET``: prints what
each client call returned or raised as one JSON object ({"calls": [...]}); kconform reads the
topic back itself. Each error is handled as aiokafka documents (its transaction context aborts
on an exception; a fenced producer can only be stopped), and every call has a deadline, so a
client whose background sender died shows as calls that time out, not as a hang.
"""
import asyncio
import json
import logging
import sys

from aiokafka import AIOKafkaProducer, TopicPartition
from aiokafka import errors as Errors

logging.disable(logging.CRITICAL)
WAIT_S = 30
workload, bootstrap, topic, txn, group, offset = sys.argv[1:7]
calls = []


async def call(name, step):
    """Runs one client call (a coroutine function) and records how it ended; the exception."""
    try:
        await asyncio.wait_for(step(), WAIT_S)
        calls.append({"call": name, "result": "ok"})
        return None
    except Exception as e:  # noqa: BLE001 - every outcome is the transcript's
        calls.append({"call": name, "result": type(e).__name__, "message": str(e)})
        return e


def producer(transaction_timeout_ms=60000):
    return AIOKafkaProducer(
        bootstrap_servers=bootstrap,
        transactional_id=txn,
        transaction_timeout_ms=transaction_timeout_ms,
        request_timeout_ms=WAIT_S * 1000,
    )


async def send(p, value):
    await p.send_and_wait(topic, value=value.encode(), partition=0)


async def end_after(p, error, who):
    """What the application does after `error` ended a step of its transaction."""
    if error is None or isinstance(error, Errors.ProducerFenced):
        return
    await call("abort (%s)" % who, p.abort_transaction)


async def stop(p):
    try:
        await asyncio.wait_for(p.stop(), WAIT_S)
    except Exception:  # noqa: BLE001 - the transcript is written already
        pass


async def fencing():
    first = producer()
    await call("initTransactions", first.start)

    async def open_first():
        await first.begin_transaction()
        await send(first, "o0")
        await send(first, "o1")

    await call("send in an open transaction", open_first)
    second = producer()
    await call("initTransactions (second producer)", second.start)

    async def commit_second():
        await second.begin_transaction()
        await send(second, "n0")
        await second.commit_transaction()

    await end_after(second, await call("commit (second producer)", commit_second), "second producer")
    await end_after(first, await call("commit (fenced producer)", first.commit_transaction), "fenced producer")
    await stop(first)
    await stop(second)


async def fenced_send():
    first = producer()
    await call("initTransactions", first.start)

    async def open_first():
        await first.begin_transaction()
        await send(first, "o0")

    await call("send in an open transaction", open_first)
    second = producer()
    await call("initTransactions (second producer)", second.start)
    error = await call("send (fenced producer)", lambda: send(first, "o1"))
    if error is None:
        error = await call("commit (fenced producer)", first.commit_transaction)
    await end_after(first, error, "fenced producer")

    async def commit_second():
        await second.begin_transaction()
        await send(second, "n0")
        await second.commit_transaction()

    await end_after(second, await call("commit (second producer)", commit_second), "second producer")
    await stop(first)
    await stop(second)


async def abort_redo():
    """A transaction of two records aborted, then the work done again in the next, which commits."""
    p = producer()
    await call("initTransactions", p.start)

    async def aborted():
        await p.begin_transaction()
        await send(p, "a0")
        await send(p, "a1")
        await p.abort_transaction()

    await call("abort", aborted)

    async def redone():
        await p.begin_transaction()
        await send(p, "r0")
        await send(p, "r1")
        await p.commit_transaction()

    await end_after(p, await call("redo and commit", redone), "producer")
    await stop(p)


async def timeout_past():
    """A transaction left open past its 2 s timeout, then committed; a new producer afterwards."""
    p = producer(2000)
    await call("initTransactions", p.start)

    async def open_one():
        await p.begin_transaction()
        await send(p, "t0")
        await send(p, "t1")

    await call("send", open_one)
    await asyncio.sleep(4)
    await end_after(p, await call("commit after the timeout", p.commit_transaction), "timed-out producer")
    await stop(p)
    following = producer(2000)
    await call("initTransactions (new producer)", following.start)

    async def commit_following():
        await following.begin_transaction()
        await send(following, "n0")
        await following.commit_transaction()

    await end_after(following, await call("commit (new producer)", commit_following), "new producer")
    await stop(following)


async def group_offsets():
    """Offsets for the run's own group (its id only: no member) sent with a record."""
    p = producer()
    await call("initTransactions", p.start)

    async def open_one():
        await p.begin_transaction()
        await send(p, "g0")

    await call("send", open_one)
    offsets = {TopicPartition(topic, 0): int(offset)}
    await call("sendOffsetsToTransaction", lambda: p.send_offsets_to_transaction(offsets, group))
    await end_after(p, await call("commitTransaction", p.commit_transaction), "producer")
    await stop(p)


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
        sys.stderr.write("no workload %s for aiokafka\n" % workload)
        sys.exit(2)
    asyncio.run(run())
    sys.stdout.write(json.dumps({"calls": calls}) + "\n")
    sys.stdout.flush()
