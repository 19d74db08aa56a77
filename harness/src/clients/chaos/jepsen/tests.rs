//! Each kind on the smallest history that has it (after Jepsen's own definitions), and on one
//! that is clean but looks close.
use super::*;

fn op(process: u32, label: &str, span: (u64, u64), status: Status, mops: Vec<Mop>) -> Op {
    Op {
        process,
        label: label.to_owned(),
        invoked_ms: span.0,
        completed_ms: span.1,
        status,
        body: Body::Txn(mops),
        rebalanced: vec![],
    }
}

fn ok(process: u32, label: &str, span: (u64, u64), mops: Vec<Mop>) -> Op {
    op(process, label, span, Status::Ok, mops)
}

fn send(key: &str, value: &str, offset: i64) -> Mop {
    Mop::Send {
        key: key.into(),
        value: value.into(),
        offset: Some(offset),
    }
}

fn poll(key: &str, records: &[(i64, &str)]) -> Mop {
    Mop::Poll {
        key: key.into(),
        records: records.iter().map(|(o, v)| (*o, v.to_string())).collect(),
    }
}

fn assign(process: u32, keys: &[&str]) -> Op {
    Op {
        process,
        label: format!("p{process} assign"),
        invoked_ms: 0,
        completed_ms: 0,
        status: Status::Ok,
        body: Body::Assign(keys.iter().map(|k| k.to_string()).collect()),
        rebalanced: vec![],
    }
}

/// The kinds found, each with whether it is allowed.
fn kinds(history: &[Op]) -> Vec<(Kind, bool)> {
    let mut k: Vec<(Kind, bool)> = check(history).iter().map(|a| (a.kind, a.allowed)).collect();
    k.dedup();
    k
}

/// A writer (process 9) that put a@0, b@1, c@2 in `k`, and a reader that reads all of it at
/// the end (so nothing is unseen).
fn log_abc() -> Vec<Op> {
    vec![ok(
        9,
        "writer",
        (0, 1),
        vec![send("k", "a", 0), send("k", "b", 1), send("k", "c", 2)],
    )]
}

fn final_read(mut h: Vec<Op>) -> Vec<Op> {
    h.push(ok(
        8,
        "final read",
        (900, 1000),
        vec![poll("k", &[(0, "a"), (1, "b"), (2, "c")])],
    ));
    h
}

#[test]
fn inconsistent_offsets_two_values_at_one_offset() {
    let mut h = final_read(log_abc());
    h.push(ok(1, "r1", (2, 3), vec![poll("k", &[(1, "x")])]));
    let found = check(&h);
    assert_eq!(kinds(&h), vec![(Kind::InconsistentOffsets, false)]);
    assert!(
        found[0].detail.contains("k@1 holds 2 values"),
        "{}",
        found[0].detail
    );
    assert!(
        found[0]
            .detail
            .contains("'b' (sent by writer, polled by final read)"),
        "{}",
        found[0].detail
    );
    // The same offset read with the value sent: clean.
    let mut h = final_read(log_abc());
    h.push(ok(1, "r1", (2, 3), vec![poll("k", &[(1, "b")])]));
    assert_eq!(kinds(&h), vec![]);
    // A failed transaction's send is not in the log, so its offset cannot disagree.
    let mut h = final_read(log_abc());
    h.push(op(
        1,
        "aborted",
        (2, 3),
        Status::Fail,
        vec![send("k", "z", 1)],
    ));
    assert_eq!(kinds(&h), vec![]);
}

/// An acknowledgement naming an offset where no record was read (a marker's), for a record
/// read elsewhere: one value at two offsets (Jepsen's duplicate), and no reader is taken to
/// have skipped the offset only the acknowledgement names.
#[test]
fn duplicate_a_record_acknowledged_at_one_offset_and_read_at_another() {
    let h = vec![
        ok(1, "t1", (0, 1), vec![send("k", "a", 0)]),
        ok(2, "t2", (2, 3), vec![send("k", "b", 3)]),
        ok(
            8,
            "final read",
            (9, 10),
            vec![poll("k", &[(0, "a"), (2, "b")])],
        ),
    ];
    let found = check(&h);
    assert_eq!(kinds(&h), vec![(Kind::Duplicate, false)]);
    assert!(
        found[0]
            .detail
            .contains("'b' sits at two offsets: acknowledged to t2 at k@3, read at k@2"),
        "{}",
        found[0].detail
    );
    // Acknowledged where it was read: clean.
    let mut h = h;
    h[1] = ok(2, "t2", (2, 3), vec![send("k", "b", 2)]);
    assert_eq!(kinds(&h), vec![]);
}

#[test]
fn precommitted_read_a_transaction_reading_its_own_send() {
    let h = final_read(vec![ok(
        1,
        "t1",
        (0, 1),
        vec![
            send("k", "a", 0),
            send("k", "b", 1),
            send("k", "c", 2),
            poll("k", &[(2, "c")]),
        ],
    )]);
    let found = check(&h);
    assert_eq!(found[0].kind, Kind::PrecommittedRead);
    assert!(
        found[0].detail.contains("t1 polled 'c' at k@2"),
        "{}",
        found[0].detail
    );
    // Another transaction reading it: clean.
    let mut h = final_read(log_abc());
    h.push(ok(1, "t1", (2, 3), vec![poll("k", &[(2, "c")])]));
    assert_eq!(kinds(&h), vec![]);
}

#[test]
fn poll_skip_a_process_jumping_over_records_between_polls() {
    let reads = |second: Mop| {
        let mut h = final_read(log_abc());
        h.push(ok(1, "r1", (2, 3), vec![poll("k", &[(0, "a")])]));
        h.push(ok(1, "r2", (4, 5), vec![second]));
        h
    };
    let h = reads(poll("k", &[(2, "c")]));
    let found = check(&h);
    assert_eq!(kinds(&h), vec![(Kind::PollSkip, false)]);
    assert!(
        found[0]
            .detail
            .contains("r2 read k@2 after r1 read k@0, skipping k@1"),
        "{}",
        found[0].detail
    );
    // Reading on from where it stood: clean.
    assert_eq!(kinds(&reads(poll("k", &[(1, "b"), (2, "c")]))), vec![]);
    // An assign between (a seek): clean.
    let mut h = reads(poll("k", &[(2, "c")]));
    h.insert(h.len() - 1, assign(1, &["k"]));
    assert_eq!(kinds(&h), vec![]);
    // A subscription that may rebalance: found, and allowed.
    let mut h = reads(poll("k", &[(2, "c")]));
    h.insert(
        2,
        Op {
            body: Body::Subscribe(vec!["k".into()]),
            ..assign(1, &[])
        },
    );
    assert_eq!(kinds(&h), vec![(Kind::PollSkip, true)]);
    // A failed poll in between does not move where the process stands.
    let mut h = reads(poll("k", &[(1, "b")]));
    h.insert(
        3,
        op(
            1,
            "lost",
            (3, 4),
            Status::Fail,
            vec![poll("k", &[(2, "c")])],
        ),
    );
    assert_eq!(kinds(&h), vec![]);
}

#[test]
fn nonmonotonic_poll_a_process_going_back_between_polls() {
    let mut h = final_read(log_abc());
    h.push(ok(1, "r1", (2, 3), vec![poll("k", &[(0, "a"), (1, "b")])]));
    h.push(ok(1, "r2", (4, 5), vec![poll("k", &[(1, "b")])]));
    assert_eq!(kinds(&h), vec![(Kind::NonmonotonicPoll, false)]);
    // Another process reading it again: clean.
    h[3].process = 2;
    assert_eq!(kinds(&h), vec![]);
}

#[test]
fn int_poll_skip_and_nonmonotonic_inside_one_poll() {
    let one = |records: &[(i64, &str)]| {
        let mut h = final_read(log_abc());
        h.push(ok(1, "r1", (2, 3), vec![poll("k", records)]));
        h
    };
    let h = one(&[(0, "a"), (2, "c")]);
    assert_eq!(kinds(&h), vec![(Kind::IntPollSkip, false)]);
    assert!(check(&h)[0]
        .detail
        .contains("r1 read k@2 right after k@0 in one poll, skipping k@1"));
    assert_eq!(
        kinds(&one(&[(1, "b"), (0, "a")])),
        vec![(Kind::IntNonmonotonicPoll, false)]
    );
    assert_eq!(
        kinds(&one(&[(1, "b"), (1, "b")])),
        vec![(Kind::IntNonmonotonicPoll, false)]
    );
    assert_eq!(kinds(&one(&[(0, "a"), (1, "b"), (2, "c")])), vec![]);
    // A gap in offsets where no record was ever seen (a transaction marker) is no skip.
    let mut h = vec![ok(
        9,
        "writer",
        (0, 1),
        vec![send("k", "a", 0), send("k", "b", 2)],
    )];
    h.push(ok(1, "r1", (2, 3), vec![poll("k", &[(0, "a"), (2, "b")])]));
    assert_eq!(kinds(&h), vec![]);
    // A key a rebalance moved during the poll: not held to order.
    let mut h = one(&[(0, "a"), (2, "c")]);
    h[2].rebalanced = vec!["k".into()];
    assert_eq!(kinds(&h), vec![]);
}

#[test]
fn nonmonotonic_send_a_later_transaction_landing_before_an_earlier() {
    let sends = |first: i64, second: i64| {
        let mut h = vec![
            ok(1, "t1", (0, 1), vec![send("k", "x", first)]),
            ok(1, "t2", (2, 3), vec![send("k", "y", second)]),
        ];
        let mut read: Vec<(i64, &str)> = vec![(first, "x"), (second, "y")];
        read.sort();
        h.push(ok(8, "final read", (9, 10), vec![poll("k", &read)]));
        h
    };
    let h = sends(5, 3);
    assert_eq!(
        kinds(&h),
        vec![(Kind::NonmonotonicSend, false), (Kind::G0Process, true)]
    );
    assert!(check(&h)[0]
        .detail
        .contains("t2 sent 'y' to k@3, at or before k@5 where its earlier t1 had sent"));
    let clean = sends(3, 5);
    assert_eq!(kinds(&clean), vec![]);
    // Acknowledged at the very offset the earlier one was: not after it either.
    let same = kinds(&sends(5, 5));
    assert!(same.contains(&(Kind::NonmonotonicSend, false)), "{same:?}");
}

#[test]
fn int_nonmonotonic_send_and_the_allowed_int_send_skip() {
    let h = vec![
        ok(1, "t1", (0, 1), vec![send("k", "x", 5), send("k", "y", 4)]),
        ok(
            8,
            "final read",
            (9, 10),
            vec![poll("k", &[(4, "y"), (5, "x")])],
        ),
    ];
    assert_eq!(kinds(&h), vec![(Kind::IntNonmonotonicSend, false)]);
    let h = vec![
        ok(1, "t1", (0, 1), vec![send("k", "x", 0), send("k", "y", 2)]),
        ok(2, "t2", (0, 1), vec![send("k", "z", 1)]),
        ok(
            8,
            "final read",
            (9, 10),
            vec![poll("k", &[(0, "x"), (1, "z"), (2, "y")])],
        ),
    ];
    let found = check(&h);
    assert!(found
        .iter()
        .any(|a| a.kind == Kind::IntSendSkip && a.allowed));
    assert!(found.iter().all(|a| a.allowed), "{found:?}");
    let h = vec![
        ok(1, "t1", (0, 1), vec![send("k", "x", 0), send("k", "y", 1)]),
        ok(
            8,
            "final read",
            (9, 10),
            vec![poll("k", &[(0, "x"), (1, "y")])],
        ),
    ];
    assert_eq!(kinds(&h), vec![]);
}

#[test]
fn unseen_acknowledged_and_never_read_and_counted_over_time() {
    let h = vec![
        ok(1, "t1", (0, 10), vec![send("k", "a", 0), send("k", "b", 1)]),
        ok(2, "r1", (11, 20), vec![poll("k", &[(0, "a")])]),
    ];
    let found = check(&h);
    assert_eq!(kinds(&h), vec![(Kind::Unseen, false)]);
    assert!(
        found[0]
            .detail
            .contains("k: 1 record(s) acknowledged and never read: 'b' (k@1, sent by t1)"),
        "{}",
        found[0].detail
    );
    let (samples, _) = unseen::walk(&h);
    let counts: Vec<(u64, usize)> = samples.iter().map(|s| (s.at_ms, s.unseen["k"])).collect();
    assert_eq!(counts, vec![(10, 2), (20, 1)]);
    // Read at last: clean. An aborted send is never owed.
    let mut h = h;
    h.push(ok(2, "r2", (21, 30), vec![poll("k", &[(1, "b")])]));
    h.push(op(
        3,
        "aborted",
        (0, 5),
        Status::Fail,
        vec![send("k", "z", 2)],
    ));
    assert_eq!(kinds(&h), vec![]);
}

/// Two transactions writing two keys: in the same order on both (clean) or in opposite
/// orders (a write cycle, G0, allowed).
#[test]
fn g0_a_write_cycle_is_found_and_allowed() {
    let h = |second_on_j: (&str, &str)| {
        vec![
            ok(
                1,
                "t1",
                (0, 5),
                vec![
                    send("k", "a", 0),
                    send("j", "c", if second_on_j.0 == "t1" { 1 } else { 0 }),
                ],
            ),
            ok(
                2,
                "t2",
                (0, 5),
                vec![
                    send("k", "b", 1),
                    send("j", "d", if second_on_j.1 == "t2" { 0 } else { 1 }),
                ],
            ),
            ok(
                8,
                "final read",
                (9, 10),
                vec![poll("k", &[(0, "a"), (1, "b")])],
            ),
        ]
    };
    let mut crossed = h(("t1", "t2"));
    crossed[2] = ok(
        8,
        "final read",
        (9, 10),
        vec![
            poll("k", &[(0, "a"), (1, "b")]),
            poll("j", &[(0, "d"), (1, "c")]),
        ],
    );
    let found = check(&crossed);
    assert_eq!(kinds(&crossed), vec![(Kind::G0, true)]);
    assert!(
        found[0].detail.contains("a cycle of 2: t1 -> t2 -> t1"),
        "{}",
        found[0].detail
    );
    assert!(
        found[0]
            .detail
            .contains("t2 wrote k@1 right after t1 wrote k@0"),
        "{}",
        found[0].detail
    );
    assert!(
        found[0]
            .detail
            .contains("t1 wrote j@1 right after t2 wrote j@0"),
        "{}",
        found[0].detail
    );
    let mut same = h(("t2", "t1"));
    same[2] = ok(
        8,
        "final read",
        (9, 10),
        vec![
            poll("k", &[(0, "a"), (1, "b")]),
            poll("j", &[(0, "c"), (1, "d")]),
        ],
    );
    assert_eq!(kinds(&same), vec![]);
}

/// Each transaction read what the other wrote: information in a circle (G1c), which
/// read_committed cannot produce; one way only is clean.
#[test]
fn g1c_a_read_cycle_fails_and_through_a_write_order_is_allowed() {
    let both = vec![
        ok(
            1,
            "t1",
            (0, 5),
            vec![send("k", "a", 0), poll("j", &[(0, "b")])],
        ),
        ok(
            2,
            "t2",
            (0, 5),
            vec![send("j", "b", 0), poll("k", &[(0, "a")])],
        ),
    ];
    let found = check(&both);
    assert_eq!(kinds(&both), vec![(Kind::G1c, false)]);
    assert!(
        found[0].detail.contains("t2 read k@0 that t1 wrote"),
        "{}",
        found[0].detail
    );
    let one_way = vec![
        ok(1, "t1", (0, 5), vec![send("k", "a", 0), send("j", "b", 0)]),
        ok(
            2,
            "t2",
            (0, 5),
            vec![poll("k", &[(0, "a")]), poll("j", &[(0, "b")])],
        ),
    ];
    assert_eq!(kinds(&one_way), vec![]);
    // t1 wrote before t2 in k; t1 read what t2 wrote in j: a cycle through a write order.
    let through_ww = vec![
        ok(
            1,
            "t1",
            (0, 5),
            vec![send("k", "a", 0), poll("j", &[(0, "c")])],
        ),
        ok(2, "t2", (0, 5), vec![send("k", "b", 1), send("j", "c", 0)]),
        ok(
            8,
            "final read",
            (9, 10),
            vec![poll("k", &[(0, "a"), (1, "b")])],
        ),
    ];
    assert_eq!(kinds(&through_ww), vec![(Kind::G1c, true)]);
}

/// A transaction that read what another wrote, and ended before that other began: it read
/// the future (G1c-realtime). Overlapping in time: clean.
#[test]
fn g1c_realtime_a_read_of_a_write_that_began_later() {
    let h = |t2_begins: u64| {
        vec![
            ok(1, "t1", (0, 5), vec![poll("k", &[(0, "a")])]),
            ok(2, "t2", (t2_begins, t2_begins + 5), vec![send("k", "a", 0)]),
        ]
    };
    let found = check(&h(10));
    assert_eq!(kinds(&h(10)), vec![(Kind::G1cRealtime, false)]);
    assert!(
        found[0].detail.contains("t2 began after t1 ended"),
        "{}",
        found[0].detail
    );
    assert_eq!(kinds(&h(3)), vec![]);
}

/// The findings come worst first: those Kafka does not allow before those it does.
#[test]
fn findings_come_worst_first() {
    let h = vec![
        ok(1, "t1", (0, 1), vec![send("k", "x", 0), send("k", "y", 2)]),
        ok(2, "t2", (0, 1), vec![send("k", "z", 1)]),
        ok(
            8,
            "final read",
            (9, 10),
            vec![poll("k", &[(0, "x"), (1, "z"), (2, "y"), (2, "w")])],
        ),
    ];
    let found = check(&h);
    let allowed: Vec<bool> = found.iter().map(|a| a.allowed).collect();
    assert!(
        allowed.first() == Some(&false) && allowed.last() == Some(&true),
        "{found:?}"
    );
    let mut sorted = allowed.clone();
    sorted.sort();
    assert_eq!(allowed, sorted);
}
