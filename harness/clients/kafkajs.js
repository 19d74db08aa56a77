// kconform's workloads through KafkaJS (npm kafkajs, the version kconform installs): run as
// `node kafkajs.js WORKLOAD BOOTSTRAP TOPIC TRANSACTIONAL_ID GROUP OFFSET`, it prints what each client call
// returned or raised as one JSON object ({"calls": [...]}); kconform reads the topic back
// itself. Each error is handled as KafkaJS's documentation tells an application to: a
// transaction whose send or commit failed is aborted.
'use strict'
const { Kafka, logLevel } = require('kafkajs')

const [workload, bootstrap, topic, txn, group, offset] = process.argv.slice(2)
const calls = []
const kafka = new Kafka({ clientId: 'kconform', brokers: bootstrap.split(','), logLevel: logLevel.NOTHING })

// The error as the transcript names it: its class and, for a broker's error, KafkaJS's name
// of the code (KAFKAJS_UNKNOWN_ERROR_CODE for one it does not know).
function named(e) {
  let err = e
  while (err && err.name === 'KafkaJSNumberOfRetriesExceeded' && err.cause) err = err.cause
  const name = (err && err.name) || 'Error'
  return err && err.type ? `${name} ${err.type}` : name
}

async function call(name, step) {
  try {
    await step()
    calls.push({ call: name, result: 'ok' })
    return true
  } catch (e) {
    calls.push({ call: name, result: named(e), message: String((e && e.message) || e) })
    return false
  }
}

function producer(transactionTimeout = 60000) {
  return kafka.producer({ transactionalId: txn, idempotent: true, maxInFlightRequests: 1, transactionTimeout })
}

const sleep = ms => new Promise(resolve => setTimeout(resolve, ms))

async function send(tx, value) {
  await tx.send({ topic, messages: [{ value, partition: 0 }] })
}

// What the application does when a step of its transaction failed: abort it, as the
// documentation's examples do (KafkaJS names no error after which not to).
async function endAfter(ok, tx, who) {
  if (!ok && tx) await call(`abort (${who})`, () => tx.abort())
}

async function fencing() {
  const first = producer()
  await call('initTransactions', () => first.connect())
  let a
  await call('send in an open transaction', async () => {
    a = await first.transaction()
    await send(a, 'o0')
    await send(a, 'o1')
  })
  const second = producer()
  let b
  await call('initTransactions (second producer)', async () => {
    await second.connect()
    b = await second.transaction()
  })
  await endAfter(
    await call('commit (second producer)', async () => {
      await send(b, 'n0')
      await b.commit()
    }),
    b,
    'second producer'
  )
  await endAfter(await call('commit (fenced producer)', () => a.commit()), a, 'fenced producer')
  await first.disconnect().catch(() => {})
  await second.disconnect().catch(() => {})
}

async function fencedSend() {
  const first = producer()
  await call('initTransactions', () => first.connect())
  let a
  await call('send in an open transaction', async () => {
    a = await first.transaction()
    await send(a, 'o0')
  })
  const second = producer()
  let b
  await call('initTransactions (second producer)', async () => {
    await second.connect()
    b = await second.transaction()
  })
  let ok = await call('send (fenced producer)', () => send(a, 'o1'))
  if (ok) ok = await call('commit (fenced producer)', () => a.commit())
  await endAfter(ok, a, 'fenced producer')
  await endAfter(
    await call('commit (second producer)', async () => {
      await send(b, 'n0')
      await b.commit()
    }),
    b,
    'second producer'
  )
  await first.disconnect().catch(() => {})
  await second.disconnect().catch(() => {})
}

// A transaction of two records aborted, then the work done again in the next, which commits.
async function abortRedo() {
  const p = producer()
  await call('initTransactions', () => p.connect())
  await call('abort', async () => {
    const t = await p.transaction()
    await send(t, 'a0')
    await send(t, 'a1')
    await t.abort()
  })
  let t
  await endAfter(
    await call('redo and commit', async () => {
      t = await p.transaction()
      await send(t, 'r0')
      await send(t, 'r1')
      await t.commit()
    }),
    t,
    'producer'
  )
  await p.disconnect().catch(() => {})
}

// A transaction left open past its 2 s timeout, then committed; a new producer afterwards.
async function timeoutPast() {
  const p = producer(2000)
  await call('initTransactions', () => p.connect())
  let t
  await call('send', async () => {
    t = await p.transaction()
    await send(t, 't0')
    await send(t, 't1')
  })
  await sleep(4000)
  await endAfter(await call('commit after the timeout', () => t.commit()), t, 'timed-out producer')
  await p.disconnect().catch(() => {})
  const next = producer(2000)
  await call('initTransactions (new producer)', () => next.connect())
  let n
  await endAfter(
    await call('commit (new producer)', async () => {
      n = await next.transaction()
      await send(n, 'n0')
      await n.commit()
    }),
    n,
    'new producer'
  )
  await next.disconnect().catch(() => {})
}

// Offsets for the run's own group (its id only: no member) sent in a transaction with a record.
async function groupOffsets() {
  const p = producer()
  await call('initTransactions', () => p.connect())
  let t
  await call('send', async () => {
    t = await p.transaction()
    await send(t, 'g0')
  })
  await call('sendOffsetsToTransaction', () =>
    t.sendOffsets({ consumerGroupId: group, topics: [{ topic, partitions: [{ partition: 0, offset: offset }] }] })
  )
  await endAfter(await call('commitTransaction', () => t.commit()), t, 'producer')
  await p.disconnect().catch(() => {})
}

const workloads = {
  fencing,
  'fenced-send': fencedSend,
  'abort-redo': abortRedo,
  'timeout-past': timeoutPast,
  'group-offsets': groupOffsets,
}

async function main() {
  const run = workloads[workload]
  if (!run) {
    process.stderr.write(`no workload ${workload} for kafkajs\n`)
    process.exit(2)
  }
  await run()
  process.stdout.write(JSON.stringify({ calls }) + '\n')
  process.exit(0)
}

main().catch(e => {
  process.stderr.write(`${e && e.stack ? e.stack : e}\n`)
  process.exit(1)
})
