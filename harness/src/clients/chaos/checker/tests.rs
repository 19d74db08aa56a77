//! The checker on histories built to show each kind of anomaly.
use super::*;

/// A transaction of worker 0 on input partition 0.
fn txn(seq: u64, outcome: Outcome, from: i64, outputs: &[i32]) -> Txn {
    Txn {
        worker: 0,
        seq,
        outcome,
        input_partition: 0,
        input_from: from,
        outputs: outputs.to_vec(),
        ended_ms: 0,
        began_ms: 0,
        landed: vec![],
    }
}

/// The records `t` wrote, as (partition, payload).
fn written(t: &Txn) -> Vec<(i32, String)> {
    t.outputs
        .iter()
        .enumerate()
        .map(|(i, &p)| {
            let v = OutValue {
                worker: t.worker,
                seq: t.seq,
                index: i as u32,
                count: t.outputs.len() as u32,
                input_partition: t.input_partition,
                input_offset: t.input_from + i as i64,
            };
            (p, v.encode())
        })
        .collect()
}

/// What a correct broker shows of `history`: the records of committed transactions (and
/// of unknown ones when `unknown_landed`), in order, and the group at the end of them.
fn correct(history: &[Txn], unknown_landed: bool) -> Readback {
    let mut read = Readback::default();
    let mut upto = 0;
    for t in history {
        let landed = match t.outcome {
            Outcome::Committed => true,
            Outcome::Unknown => unknown_landed,
            Outcome::Aborted => false,
        };
        if !landed {
            continue;
        }
        upto = t.input_from + t.outputs.len() as i64;
        for (p, payload) in written(t) {
            let part = read.outputs.entry(p).or_default();
            let offset = part.high_watermark;
            part.records.push((offset, payload));
            part.high_watermark += 1;
            part.last_stable += 1;
        }
    }
    read.group_offsets.insert(0, Some(upto));
    read
}

fn history() -> Vec<Txn> {
    vec![
        txn(0, Outcome::Committed, 0, &[0, 1]),
        txn(1, Outcome::Aborted, 2, &[1, 0, 1]),
        txn(2, Outcome::Committed, 2, &[1, 1, 0]),
        txn(3, Outcome::Unknown, 5, &[0]),
        txn(4, Outcome::Committed, 6, &[0, 1]),
    ]
}

fn kinds(read: &Readback) -> Vec<Kind> {
    let mut k: Vec<Kind> = check(&history(), read)
        .anomalies
        .iter()
        .map(|a| a.kind)
        .collect();
    k.dedup();
    k
}

/// On provisioned topics a run's input begins where earlier runs left it: counted from
/// there, a correct run is clean; counted from 0 (the base forgotten), the offsets before it
/// look committed without records.
#[test]
fn a_run_on_provisioned_topics_is_checked_from_where_its_input_began() {
    let shifted: Vec<Txn> = history()
        .into_iter()
        .map(|mut t| {
            t.input_from += 100;
            t
        })
        .collect();
    let mut read = correct(&shifted, true);
    read.input_base.insert(0, 100);
    assert_eq!(check(&shifted, &read).anomalies, vec![]);
    read.input_base.clear();
    let kinds: Vec<Kind> = check(&shifted, &read)
        .anomalies
        .iter()
        .map(|a| a.kind)
        .collect();
    assert_eq!(kinds, vec![Kind::OffsetsWithoutRecords]);
}

#[test]
fn a_correct_broker_shows_nothing_either_way_an_unknown_outcome_went() {
    // It landed: the group resumed after it.
    let checked = check(&history(), &correct(&history(), true));
    assert_eq!(checked.anomalies, vec![]);
    assert_eq!(checked.records_checked, 8);
    // It did not: the group resumed at its input and did it again.
    let mut h = history();
    h[4] = txn(4, Outcome::Committed, 5, &[0, 1, 1]);
    let checked = check(&h, &correct(&h, false));
    assert_eq!(checked.anomalies, vec![]);
}

#[test]
fn an_aborted_record_visible_is_an_aborted_read() {
    let mut read = correct(&history(), true);
    let aborted = written(&history()[1]);
    read.outputs
        .get_mut(&1)
        .unwrap()
        .records
        .push((99, aborted[0].1.clone()));
    let found = check(&history(), &read);
    assert!(
        found.anomalies.iter().any(|a| a.kind == Kind::AbortedRead
            && a.detail
                .contains("w0.t1 (aborted, input 0@2..5): 1 of its 3 records visible (out-1@99)")),
        "{:?}",
        found.anomalies
    );
}

#[test]
fn a_committed_transaction_missing_is_a_lost_write_and_its_offsets_are_without_records() {
    let mut read = correct(&history(), true);
    for part in read.outputs.values_mut() {
        part.records.retain(|(_, v)| !v.starts_with("0:2:"));
    }
    assert_eq!(kinds(&read), [Kind::LostWrite, Kind::OffsetsWithoutRecords]);
    let found = check(&history(), &read);
    assert!(found.anomalies[1]
        .detail
        .contains("input 0@2..5 is visible"));
}

#[test]
fn a_transaction_finding_names_its_coordinator_and_the_leaders_of_what_it_is_about() {
    let mut read = correct(&history(), true);
    read.outputs
        .get_mut(&0)
        .unwrap()
        .records
        .retain(|(_, v)| !v.starts_with("0:2:"));
    read.coordinators.insert(0, 0);
    read.leaders = BTreeMap::from([(0, 2), (1, 0)]);
    let found = check(&history(), &read);
    let torn = &found.anomalies[0];
    assert_eq!(torn.kind, Kind::TornTransaction);
    // About the partition where its records are missing only, led apart from its
    // coordinator.
    assert_eq!(
        torn.placement,
        Some(Placed {
            coordinator: 0,
            leaders: BTreeMap::from([(0, 2)]),
        })
    );
    assert!(
        torn.detail
            .ends_with("; coordinator broker 0; out-0 led by broker 2 (apart)"),
        "{}",
        torn.detail
    );
    // Nothing asked, nothing said.
    read.coordinators.clear();
    assert_eq!(check(&history(), &read).anomalies[0].placement, None);
}

#[test]
fn part_of_a_transaction_is_torn() {
    let mut read = correct(&history(), true);
    read.outputs
        .get_mut(&0)
        .unwrap()
        .records
        .retain(|(_, v)| !v.starts_with("0:2:"));
    assert_eq!(
        kinds(&read),
        [Kind::TornTransaction, Kind::OffsetsWithoutRecords]
    );
}

#[test]
fn a_record_twice_or_an_input_transformed_twice_is_a_duplicate() {
    let mut read = correct(&history(), true);
    let again = read.outputs[&0].records[0].1.clone();
    read.outputs.get_mut(&0).unwrap().records.push((50, again));
    assert_eq!(kinds(&read), [Kind::OutOfOrder, Kind::Duplicate]);

    // The input of t2 processed again by a later transaction that committed too.
    let mut h = history();
    let mut redo = txn(5, Outcome::Committed, 2, &[0]);
    redo.outputs = vec![0];
    h.push(redo.clone());
    let mut read = correct(&h, true);
    read.group_offsets.insert(0, Some(8));
    let found = check(&h, &read);
    assert!(
        found.anomalies.iter().any(|a| a.kind == Kind::Duplicate
            && a.detail
                == "input 0@2 was transformed by 2 transactions, all visible: w0.t2, w0.t5"),
        "{:?}",
        found.anomalies
    );
}

#[test]
fn records_past_the_group_offset_are_records_without_offsets() {
    let mut read = correct(&history(), true);
    read.group_offsets.insert(0, Some(6));
    let found = check(&history(), &read);
    assert_eq!(found.anomalies.len(), 1, "{:?}", found.anomalies);
    assert_eq!(found.anomalies[0].kind, Kind::RecordsWithoutOffsets);
    assert!(found.anomalies[0]
        .detail
        .contains("input 0@6..8 is visible"));
}

#[test]
fn a_stable_offset_below_the_end_is_pinned() {
    let mut read = correct(&history(), true);
    read.outputs.get_mut(&1).unwrap().high_watermark += 3;
    assert_eq!(kinds(&read), [Kind::StableOffsetPinned]);
}

#[test]
fn a_group_whose_offsets_never_settle_has_them_pending() {
    let mut read = correct(&history(), true);
    read.pending_groups.push(0);
    assert_eq!(kinds(&read), [Kind::OffsetsPending]);
}

#[test]
fn a_reader_that_stops_short_is_stalled() {
    let mut read = correct(&history(), true);
    read.outputs.get_mut(&1).unwrap().stalled = Some(Stall {
        at: 2,
        uncommitted_past: String::new(),
    });
    assert_eq!(kinds(&read), [Kind::ReadStalled]);
}

#[test]
fn records_swapped_within_a_partition_are_out_of_order() {
    let mut read = correct(&history(), true);
    let recs = &mut read.outputs.get_mut(&1).unwrap().records;
    let (a, b) = (recs[0].1.clone(), recs[1].1.clone());
    recs[0].1 = b;
    recs[1].1 = a;
    assert_eq!(kinds(&read), [Kind::OutOfOrder]);
}

#[test]
fn a_record_no_worker_wrote_is_foreign() {
    let mut read = correct(&history(), true);
    read.outputs
        .get_mut(&0)
        .unwrap()
        .records
        .push((70, "garbage".into()));
    read.outputs
        .get_mut(&0)
        .unwrap()
        .records
        .push((71, "0:9:0:1:0:100".into()));
    let found = check(&history(), &read);
    let foreign: Vec<&str> = found
        .anomalies
        .iter()
        .filter(|a| a.kind == Kind::Foreign)
        .map(|a| a.detail.as_str())
        .collect();
    assert_eq!(foreign.len(), 2, "{foreign:?}");
}

#[test]
fn offset_ranges_read_as_ranges() {
    assert_eq!(ranges(&[1, 2, 3, 7, 9, 10]), "1..4, 7, 9..11");
    assert_eq!(ranges(&[]), "");
}
