//! Where each record a worker sent landed, as librdkafka's delivery reports say: the offsets
//! Jepsen's checks order sends by. The producer's context keeps them, keyed by the
//! transaction and the record's place in it, for the worker to copy into its history when
//! the transaction ends (a commit waits for every delivery).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use rdkafka::client::ClientContext;
use rdkafka::message::Message;
use rdkafka::producer::{DeliveryResult, ProducerContext};

/// The delivery reports of one worker's producers: (transaction, record) → offset.
#[derive(Clone, Default)]
pub struct Landed(Arc<Mutex<BTreeMap<(u64, u32), i64>>>);

impl Landed {
    /// The offsets of transaction `seq`'s `count` records, each where its report gave one;
    /// forgotten once taken.
    pub fn take(&self, seq: u64, count: usize) -> Vec<Option<i64>> {
        let mut reports = self.0.lock().unwrap_or_else(|e| e.into_inner());
        (0..count as u32)
            .map(|i| reports.remove(&(seq, i)))
            .collect()
    }
}

impl ClientContext for Landed {}

impl ProducerContext for Landed {
    /// The transaction's number and the record's place in it.
    type DeliveryOpaque = Box<(u64, u32)>;

    fn delivery(&self, result: &DeliveryResult<'_>, sent: Self::DeliveryOpaque) {
        if let Ok(m) = result {
            self.0
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(*sent, m.offset());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_transactions_offsets_come_in_record_order_and_are_taken_once() {
        let landed = Landed::default();
        landed.0.lock().unwrap().insert((3, 1), 41);
        landed.0.lock().unwrap().insert((3, 0), 40);
        landed.0.lock().unwrap().insert((4, 0), 42);
        assert_eq!(landed.take(3, 3), vec![Some(40), Some(41), None]);
        assert_eq!(landed.take(3, 2), vec![None, None]);
        assert_eq!(landed.take(4, 1), vec![Some(42)]);
    }
}
