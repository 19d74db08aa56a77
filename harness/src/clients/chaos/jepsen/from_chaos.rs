//! The chaos workload's history as Jepsen's operations. Each worker is a process: each stretch
//! of its consumer's polls an operation of its own (what the client returned, the records it
//! then passed over too), each seek an assign, each transaction an operation of sends, each
//! with the offset its delivery report gave; in the order they began. The read-back is one
//! operation of a process of its own that polled every output partition at the end.

use std::collections::BTreeMap;

use super::{Body, Mop, Op, Status};
use crate::clients::chaos::checker::Readback;
use crate::clients::chaos::history::{OutValue, Outcome, Read, Txn};

/// The process the read-back is.
pub const READER: u32 = u32::MAX;

/// The key of input partition `p`.
fn input(p: i32) -> String {
    format!("in-{p}")
}

/// The key of output partition `p`.
fn output(p: i32) -> String {
    format!("out-{p}")
}

/// A transaction of the workload as an operation.
fn transaction(t: &Txn, end_ms: u64) -> Op {
    let count = t.outputs.len() as u32;
    let sends = t
        .outputs
        .iter()
        .enumerate()
        .map(|(i, &p)| Mop::Send {
            key: output(p),
            value: OutValue {
                worker: t.worker,
                seq: t.seq,
                index: i as u32,
                count,
                input_partition: t.input_partition,
                input_offset: t.input_from + i as i64,
            }
            .encode(),
            offset: t.landed.get(i).copied().flatten(),
        })
        .collect();
    Op {
        process: t.worker,
        label: format!("w{}.t{} ({})", t.worker, t.seq, t.outcome.name()),
        invoked_ms: t.began_ms,
        completed_ms: match t.ended_ms {
            0 => end_ms,
            ended => ended,
        },
        status: match t.outcome {
            Outcome::Committed => Status::Ok,
            Outcome::Aborted => Status::Fail,
            Outcome::Unknown => Status::Unknown,
        },
        body: Body::Txn(sends),
        rebalanced: vec![],
    }
}

/// A worker's read as an operation.
fn read(worker: u32, r: &Read) -> Op {
    let key = input(worker as i32);
    match r {
        Read::Seek { at_ms, offset } => Op {
            process: worker,
            label: format!("w{worker} seeking {key}@{offset} at {at_ms} ms"),
            invoked_ms: *at_ms,
            completed_ms: *at_ms,
            status: Status::Ok,
            body: Body::Assign(vec![key]),
            rebalanced: vec![],
        },
        Read::Polled {
            from_ms,
            to_ms,
            records,
        } => Op {
            process: worker,
            label: format!("w{worker}'s polls at {from_ms}..{to_ms} ms"),
            invoked_ms: *from_ms,
            completed_ms: *to_ms,
            status: Status::Ok,
            body: Body::Txn(vec![Mop::Poll {
                key,
                records: records.clone(),
            }]),
            rebalanced: vec![],
        },
    }
}

/// Every operation of a chaos run: the workers' reads and transactions, then the read-back,
/// which began at `end_ms`.
pub fn ops(
    history: &[Txn],
    reads: &BTreeMap<u32, Vec<Read>>,
    back: &Readback,
    end_ms: u64,
) -> Vec<Op> {
    let mut workers: BTreeMap<u32, Vec<Op>> = BTreeMap::new();
    for (&w, rs) in reads {
        workers
            .entry(w)
            .or_default()
            .extend(rs.iter().map(|r| read(w, r)));
    }
    for t in history {
        workers
            .entry(t.worker)
            .or_default()
            .push(transaction(t, end_ms));
    }
    let mut ops: Vec<Op> = Vec::new();
    for (_, mut mine) in workers {
        // Stable: a stretch of polls that began in the same millisecond as the transaction it
        // fed stays before it.
        mine.sort_by_key(|op| op.invoked_ms);
        ops.extend(mine);
    }
    let polls = back
        .outputs
        .iter()
        .map(|(&p, part)| Mop::Poll {
            key: output(p),
            records: part.records.clone(),
        })
        .collect();
    ops.push(Op {
        process: READER,
        label: "the read-back".into(),
        invoked_ms: end_ms,
        completed_ms: end_ms + 1,
        status: Status::Ok,
        body: Body::Txn(polls),
        rebalanced: vec![],
    });
    ops
}
