//! Dependency cycles between transactions (Jepsen's G0 and G1c, as Elle finds them): an edge
//! from the transaction that wrote a record to the one that wrote the next record of the same
//! partition (write-write), and to each one that read it (write-read); where asked, also a
//! process's own order and the real-time order (one ended before the other began). Each
//! strongly connected component holds a cycle; the shortest is named, edge by edge.
//!
//! A cycle of write-write edges alone (G0) is allowed: Kafka does not isolate writes, so two
//! transactions may interleave their records in two partitions in opposite orders. One that
//! reads (G1c) is allowed only through a write-write edge, as Jepsen allows it; a cycle of
//! reads alone cannot happen under read_committed (each read is of a commit that came before
//! it), so it is a failure.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use petgraph::algo::tarjan_scc;
use petgraph::graph::{DiGraph, NodeIndex};

use super::order::Orders;
use super::{anomaly, at, Body, Mop, Op};
use crate::clients::chaos::checker::{Anomaly, Kind};

/// Why one transaction comes before another.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Why {
    /// It read a record the other wrote: (key, offset).
    Read(String, i64),
    /// It wrote the record after the other's: (key, the other's offset, its offset).
    Wrote(String, i64, i64),
    /// The same process did it next.
    Process(u32),
    /// It began after the other ended.
    Realtime,
}

/// Which orders a graph holds besides the data's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Order {
    /// Write-write and write-read only.
    Data,
    /// And each process's order.
    Process,
    /// And the real-time order.
    Realtime,
}

/// Edges, each (from, to) once with the strongest reason (a read before a write before a
/// process or real-time order).
type Edges = BTreeMap<(usize, usize), Why>;

fn add(edges: &mut Edges, from: usize, to: usize, why: Why) {
    if from == to {
        return;
    }
    let slot = edges.entry((from, to)).or_insert_with(|| why.clone());
    if why < *slot {
        *slot = why;
    }
}

/// The write-write and write-read edges between the transactions that may have committed.
fn data_edges(history: &[Op], orders: &Orders) -> Edges {
    let mut writer: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    for &i in &orders.committed {
        for m in history[i].mops() {
            if let Mop::Send { key, value, .. } = m {
                writer.insert((key, value), i);
            }
        }
    }
    let mut edges = Edges::new();
    for (key, order) in &orders.keys {
        let mut before: Option<(usize, i64)> = None;
        for (&offset, values) in &order.by_offset {
            let here = values
                .keys()
                .find_map(|v| writer.get(&(key.as_str(), v.as_str())));
            if let (Some((w, o)), Some(&h)) = (before, here) {
                add(&mut edges, w, h, Why::Wrote(key.clone(), o, offset));
            }
            before = here.map(|&h| (h, offset));
            for (value, shown) in values {
                let Some(&w) = writer.get(&(key.as_str(), value.as_str())) else {
                    continue;
                };
                for &r in &shown.polled {
                    if history[r].status != super::Status::Fail {
                        add(&mut edges, w, r, Why::Read(key.clone(), offset));
                    }
                }
            }
        }
    }
    edges
}

/// The transactions a cycle may pass through: those that did not fail and wrote, or read
/// what another wrote (an operation of polls of nothing the history wrote is in no data
/// order, and would only lengthen a process's).
fn nodes(history: &[Op], data: &Edges) -> Vec<usize> {
    let linked: BTreeSet<usize> = data.keys().flat_map(|&(a, b)| [a, b]).collect();
    (0..history.len())
        .filter(|&i| matches!(history[i].body, Body::Txn(_)))
        .filter(|&i| history[i].status != super::Status::Fail)
        .filter(|&i| {
            linked.contains(&i)
                || history[i]
                    .mops()
                    .iter()
                    .any(|m| matches!(m, Mop::Send { .. }))
        })
        .collect()
}

/// Each process's order: an edge from each transaction to the process's next.
fn process_edges(history: &[Op], nodes: &[usize], edges: &mut Edges) {
    let mut last: BTreeMap<u32, usize> = BTreeMap::new();
    for &i in nodes {
        if let Some(&before) = last.get(&history[i].process) {
            add(edges, before, i, Why::Process(history[i].process));
        }
        last.insert(history[i].process, i);
    }
}

/// The real-time order, reduced: from each transaction to those that began after it ended
/// and before any of them ended (the rest follow through those).
fn realtime_edges(history: &[Op], nodes: &[usize], edges: &mut Edges) {
    let mut by_start: Vec<usize> = nodes.to_vec();
    by_start.sort_by_key(|&i| history[i].invoked_ms);
    for &a in nodes {
        let end = history[a].completed_ms;
        let from = by_start.partition_point(|&i| history[i].invoked_ms <= end);
        let mut first_end = u64::MAX;
        for &b in &by_start[from..] {
            if history[b].invoked_ms > first_end {
                break;
            }
            first_end = first_end.min(history[b].completed_ms);
            add(edges, a, b, Why::Realtime);
        }
    }
}

/// How many edges of a new order are tried as the start of a cycle, per component: enough
/// to find one, bounded for a history of many thousand transactions.
const STARTS: usize = 200;

/// The shortest path from `from` to `to` inside `within`, as the nodes after `from`.
fn path(
    adj: &BTreeMap<usize, Vec<usize>>,
    within: &BTreeSet<usize>,
    from: usize,
    to: usize,
) -> Option<Vec<usize>> {
    let mut came: BTreeMap<usize, usize> = BTreeMap::new();
    let mut queue = VecDeque::from([from]);
    while let Some(n) = queue.pop_front() {
        for &m in adj.get(&n).into_iter().flatten() {
            if !within.contains(&m) || came.contains_key(&m) || m == from {
                continue;
            }
            came.insert(m, n);
            if m == to {
                let mut nodes = vec![m];
                let mut at = m;
                while let Some(&p) = came.get(&at) {
                    if p == from {
                        break;
                    }
                    nodes.push(p);
                    at = p;
                }
                nodes.reverse();
                return Some(nodes);
            }
            queue.push_back(m);
        }
    }
    None
}

/// The shortest cycle in `component` through an edge of `order` (any edge for the data's
/// own), as its nodes in order.
fn shortest_cycle(edges: &Edges, component: &BTreeSet<usize>, order: Order) -> Option<Vec<usize>> {
    let mut adj: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    let mut starts = Vec::new();
    for ((a, b), why) in edges {
        if component.contains(a) && component.contains(b) {
            adj.entry(*a).or_default().push(*b);
            let new = matches!(
                (order, why),
                (Order::Data, _)
                    | (Order::Process, Why::Process(_))
                    | (Order::Realtime, Why::Realtime)
            );
            if new {
                starts.push((*a, *b));
            }
        }
    }
    let mut best: Option<Vec<usize>> = None;
    for (a, b) in starts.into_iter().take(STARTS) {
        let back = match b == a {
            true => Some(vec![]),
            false => path(&adj, component, b, a),
        };
        if let Some(back) = back {
            let mut cycle = vec![a, b];
            cycle.extend(back.into_iter().filter(|&n| n != a));
            if best.as_ref().is_none_or(|c| cycle.len() < c.len()) {
                best = Some(cycle);
            }
        }
    }
    best
}

/// The cycles of each order's graph, each named and explained.
pub fn check(history: &[Op], orders: &Orders) -> Vec<Anomaly> {
    let mut edges = data_edges(history, orders);
    let nodes = nodes(history, &edges);
    let mut found = Vec::new();
    let mut named: BTreeSet<BTreeSet<usize>> = BTreeSet::new();
    for order in [Order::Data, Order::Process, Order::Realtime] {
        match order {
            Order::Data => {}
            Order::Process => process_edges(history, &nodes, &mut edges),
            Order::Realtime => realtime_edges(history, &nodes, &mut edges),
        }
        let mut graph: DiGraph<usize, ()> = DiGraph::new();
        let index: BTreeMap<usize, NodeIndex> =
            nodes.iter().map(|&n| (n, graph.add_node(n))).collect();
        for (a, b) in edges.keys() {
            if let (Some(&x), Some(&y)) = (index.get(a), index.get(b)) {
                graph.add_edge(x, y, ());
            }
        }
        for component in tarjan_scc(&graph).into_iter().filter(|c| c.len() > 1) {
            let members: BTreeSet<usize> = component.iter().map(|&n| graph[n]).collect();
            let Some(cycle) = shortest_cycle(&edges, &members, order) else {
                continue;
            };
            if named.insert(cycle.iter().copied().collect()) {
                found.push(explain(history, &edges, &cycle, order));
            }
        }
    }
    found
}

/// A cycle in words, named by the edges it takes.
fn explain(history: &[Op], edges: &Edges, cycle: &[usize], order: Order) -> Anomaly {
    let mut steps = Vec::new();
    let (mut reads, mut writes) = (false, false);
    for (i, &a) in cycle.iter().enumerate() {
        let b = cycle[(i + 1) % cycle.len()];
        let (x, y) = (&history[a].label, &history[b].label);
        steps.push(match &edges[&(a, b)] {
            Why::Read(key, offset) => {
                reads = true;
                format!("{y} read {} that {x} wrote", at(key, *offset))
            }
            Why::Wrote(key, before, offset) => {
                writes = true;
                format!(
                    "{y} wrote {} right after {x} wrote {}",
                    at(key, *offset),
                    at(key, *before)
                )
            }
            Why::Process(p) => format!("{y} came after {x} in process {p}"),
            Why::Realtime => format!("{y} began after {x} ended"),
        });
    }
    let kind = match (reads, order) {
        (false, Order::Data) => Kind::G0,
        (false, Order::Process) => Kind::G0Process,
        (false, Order::Realtime) => Kind::G0Realtime,
        (true, Order::Data) => Kind::G1c,
        (true, Order::Process) => Kind::G1cProcess,
        (true, Order::Realtime) => Kind::G1cRealtime,
    };
    let allowed = !reads || writes;
    let names: Vec<&str> = cycle.iter().map(|&n| history[n].label.as_str()).collect();
    let why = match (reads, allowed) {
        (false, _) => " (allowed: Kafka does not isolate writes)",
        (true, true) => " (allowed: through a write-write order, which Kafka does not isolate)",
        (true, false) => " (each read is of a commit before it, so no cycle of reads can close)",
    };
    anomaly(
        kind,
        allowed,
        format!(
            "a cycle of {}: {} -> {}: {}{why}",
            cycle.len(),
            names.join(" -> "),
            names[0],
            steps.join("; ")
        ),
    )
}
