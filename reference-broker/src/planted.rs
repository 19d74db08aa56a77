//! Bugs planted on purpose, to prove that kconform's fuzzers find what they are for (a test
//! plants one, fuzzes, and must see it found and shrunk). Only a build with the
//! `planted-bugs` feature can plant one (`Planted::with`); without it every
//! [`Planted::has`] is a constant `false` the compiler removes, so a release `kaas-ref`
//! carries none.

/// A bug that can be planted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bug {
    /// EndTxn's epoch check is off by one: the epoch before the current one passes.
    EndTxnEpochOffByOne,
    /// TxnOffsetCommit stages offsets whatever the transaction's state, where the spec
    /// wants it Ongoing with the group added (INVALID_TXN_STATE otherwise).
    OffsetsOutsideTransaction,
    /// An aborted transaction's staged offsets are not discarded but committed.
    AbortKeepsStagedOffsets,
    /// A committed transaction's staged offsets are acknowledged (EndTxn answers NONE) and
    /// dropped for groups whose id is 250 bytes or longer (as a store whose file names outgrow
    /// the file system's would): nothing in any answer of the transaction shows it, only a
    /// later read of what was stored.
    CommitDropsSomeGroups,
    /// AddOffsetsToTxn v3's decoder reads `group_id`'s compact length as one byte, as if a
    /// varint never took two: a group id of 127 bytes or more is misread (and what follows it).
    GroupIdLengthOneByte,
    /// AddPartitionsToTxn's handler panics on partition index 2147483647 (an index + 1 that
    /// overflows): the connection closes without an answer.
    PanicOnLastPartitionIndex,
    /// A peer's MarkerWatcher applies each queued marker, and the same marker again at its
    /// next pass (a retry that forgot the first went through): the second lands after the
    /// producer's next transaction began, and ends it there.
    PeerMarkerAppliedTwice,
    /// A broker that starts empties its marker inbox (as if the queue were memory, not the
    /// shared volume): markers queued for it while it was down are never written.
    MarkerDroppedOnRestart,
    /// TxnOffsetCommit makes the offsets it stages visible at once, before the transaction's
    /// markers (and whatever its end): an aborted transaction's offsets stay committed.
    GroupCommitBeforeMarkers,
    /// A request whose connection has closed by the time it is handled is dropped unhandled,
    /// as an async server that cancels a connection's handlers with it does: a producer that
    /// dies with its commit written leaves the transaction open until it times out.
    RequestDroppedWithItsConnection,
    /// WriteTxnMarkers v0's decoder reserves a 1 MiB scratch buffer per marker, for as many
    /// markers as the count on the wire says, before reading one: a count of 2^27 or more asks
    /// for more address space than the machine has, and the allocation failure aborts the
    /// process (the one-frame remote crash a real kaas build had).
    MarkerCountAllocates,
    /// TxnOffsetCommit's decoder panics on a committed leader epoch of i32::MIN (a
    /// conversion that assumes it can be negated): the connection's task dies, the process
    /// lives on, the connection closes without an answer.
    PanicOnMinLeaderEpoch,
    /// An InitProducerId asking for a transaction timeout of i32::MAX ms arms a flag that
    /// outlives its connection; the next EndTxn that aborts then aborts the process. Neither
    /// frame crashes a fresh broker alone: the crash needs both, in that order.
    AbortAfterArmedTimeout,
    /// AddOffsetsToTxn with an empty group id is never answered: its handler waits forever,
    /// holding its connection's later answers behind it (other connections are served).
    HangOnEmptyGroupId,
    /// EndTxn v0 answers a commit that succeeded with 48 INVALID_TXN_STATE (an error table
    /// kept per version, its v0 row shifted): the transaction is committed, and only a client
    /// that still sends v0 (aiokafka) is told it failed.
    EndTxnV0CommitAnswersInvalidState,
    /// A producer's next transaction may begin while a peer still holds the last one's
    /// queued marker (EndTxn answered once the marker is queued, as before), and the next
    /// marker, queued under the same producer id and epoch, is written over it: the peer
    /// applies only the later marker, so a committed transaction's records there end with an
    /// ABORT (committed records lost) or an aborted one's with a COMMIT (aborted records read),
    /// as real kaas did when coordinator and leader were different brokers. Planted, a peer
    /// applies a queued marker only once it is a whole poll old, so that the window is always
    /// there (real kaas's was up to a poll, wherever the tick fell).
    PeerMarkerOverwritten,
    /// TxnOffsetCommit v1's decoder reserves a 1 MiB scratch buffer per topic the count on the
    /// wire claims, before reading one: a count of 2^27 or more (or -1, read unsigned) asks
    /// for more address space than the machine has, and the process aborts (the real kaas
    /// build's second allocation site: a 47-byte TxnOffsetCommit v1 killed it).
    TopicCountAllocates,
    /// A transaction API asked at a version this broker does not list is answered (a bare
    /// header and UNSUPPORTED_VERSION) where Apache closes the connection: the real kaas
    /// build answered InitProducerId v7, EndTxn v-1, v131 and v32767.
    AnswersUnlistedVersions,
    /// The codec's one array reader takes a negative count (null, where the definition allows
    /// none) for an empty array where Apache's parser refuses it: one reader, wrong on every
    /// array of every API, as real kaas's was (14 lines of a check before they were grouped).
    NegativeArrayReadsEmpty,
    /// The codec's one array reader reserves a 1 MiB scratch buffer per element the count on
    /// the wire claims, before checking the count against the bytes left: a count of 2^27 or
    /// more in any array of any of the six APIs, at any version, asks for more than the
    /// machine has, and the process aborts. As the real kaas build dies: its decoders
    /// preallocate by the count they read, in the arrays of many APIs and versions, so killers
    /// are everywhere in what a fuzzer draws (two fixed sites were not).
    ArrayCountAllocates,
    /// Fetch leaves out a batch of records (not a marker) whose base offset is 2 more than a
    /// multiple of 5 the first time any fetch reaches it (a read that lost its place in a
    /// segment and went on at the next batch): a consumer's position jumps over records that
    /// are there, and only a consumer that seeks back ever reads them. (One in sixteen, and
    /// markers too, was missed by a 10 s run in CI: a skipped marker shows nothing.)
    FetchSkipsABatch,
    /// Produce answers the base offset one too high for a batch whose base offset is 5 more
    /// than a multiple of 10 (the log's end after the append, where its start was meant): the
    /// producer is told its record landed where another one sits.
    ProduceAnswersOffsetOneHigh,
    /// The reaper ends a transaction past its timeout with COMMIT markers where Apache writes
    /// ABORT (its branch shared with EndTxn, the flag inverted): what a producer that died
    /// mid-transaction wrote becomes visible, though it never committed, and the work its
    /// successor does again shows twice.
    TimeoutCommits,
}

impl Bug {
    /// Every bug, for tests that plant each in turn.
    pub const ALL: [Bug; 23] = [
        Bug::EndTxnEpochOffByOne,
        Bug::OffsetsOutsideTransaction,
        Bug::AbortKeepsStagedOffsets,
        Bug::CommitDropsSomeGroups,
        Bug::GroupIdLengthOneByte,
        Bug::PanicOnLastPartitionIndex,
        Bug::PeerMarkerAppliedTwice,
        Bug::MarkerDroppedOnRestart,
        Bug::GroupCommitBeforeMarkers,
        Bug::RequestDroppedWithItsConnection,
        Bug::MarkerCountAllocates,
        Bug::PanicOnMinLeaderEpoch,
        Bug::AbortAfterArmedTimeout,
        Bug::HangOnEmptyGroupId,
        Bug::EndTxnV0CommitAnswersInvalidState,
        Bug::PeerMarkerOverwritten,
        Bug::TopicCountAllocates,
        Bug::AnswersUnlistedVersions,
        Bug::NegativeArrayReadsEmpty,
        Bug::ArrayCountAllocates,
        Bug::FetchSkipsABatch,
        Bug::ProduceAnswersOffsetOneHigh,
        Bug::TimeoutCommits,
    ];

    /// The bug of this name (`MarkerCountAllocates`), for a command line that plants one.
    pub fn named(name: &str) -> Option<Bug> {
        Bug::ALL.into_iter().find(|b| format!("{b:?}") == name)
    }

    #[cfg(feature = "planted-bugs")]
    fn bit(self) -> u32 {
        1 << self as u8
    }
}

/// The bugs planted in a broker: none, unless a `planted-bugs` build said otherwise.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Planted(#[cfg_attr(not(feature = "planted-bugs"), allow(dead_code))] u32);

impl Planted {
    /// No bug planted (what [`Planted::default`] gives, usable where a constant is needed).
    pub const NONE: Planted = Planted(0);

    /// Whether `bug` is planted (always false without the `planted-bugs` feature).
    #[inline]
    pub fn has(self, bug: Bug) -> bool {
        #[cfg(feature = "planted-bugs")]
        {
            self.0 & bug.bit() != 0
        }
        #[cfg(not(feature = "planted-bugs"))]
        {
            let _ = bug;
            false
        }
    }

    /// These bugs and `bug` (only a `planted-bugs` build can plant one).
    #[cfg(feature = "planted-bugs")]
    pub fn with(self, bug: Bug) -> Planted {
        Planted(self.0 | bug.bit())
    }

    /// Runs `decode` with this broker's codec bugs planted on this thread for its duration
    /// ([`in_codec`]): the codecs are pure functions with no configuration to carry them.
    #[inline]
    pub fn decoding<T>(self, decode: impl FnOnce() -> T) -> T {
        #[cfg(feature = "planted-bugs")]
        {
            struct Reset;
            impl Drop for Reset {
                fn drop(&mut self) {
                    IN_CODEC.with(|c| c.set(0));
                }
            }
            IN_CODEC.with(|c| c.set(self.0));
            let _reset = Reset;
            decode()
        }
        #[cfg(not(feature = "planted-bugs"))]
        {
            decode()
        }
    }
}

/// Set by [`Bug::AbortAfterArmedTimeout`]'s first frame: process-wide, as the state of a
/// broker that outlives the connection that changed it (a process plants it; in-process tests
/// never do, since its second frame aborts the process).
#[cfg(feature = "planted-bugs")]
static ARMED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Arms [`Bug::AbortAfterArmedTimeout`] (a no-op without the `planted-bugs` feature).
pub fn arm() {
    #[cfg(feature = "planted-bugs")]
    ARMED.store(true, std::sync::atomic::Ordering::SeqCst);
}

/// Whether [`arm`] was called in this process (always false without `planted-bugs`).
pub fn armed() -> bool {
    #[cfg(feature = "planted-bugs")]
    {
        ARMED.load(std::sync::atomic::Ordering::SeqCst)
    }
    #[cfg(not(feature = "planted-bugs"))]
    {
        false
    }
}

#[cfg(feature = "planted-bugs")]
thread_local! {
    static IN_CODEC: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// Whether `bug` is planted in the decoding running on this thread ([`Planted::decoding`];
/// always false without the `planted-bugs` feature).
#[inline]
pub fn in_codec(bug: Bug) -> bool {
    #[cfg(feature = "planted-bugs")]
    {
        IN_CODEC.with(|c| c.get() & bug.bit() != 0)
    }
    #[cfg(not(feature = "planted-bugs"))]
    {
        let _ = bug;
        false
    }
}

/// The batches [`Bug::FetchSkipsABatch`] has left out, each once: process-wide, so that every
/// broker of a cluster in one process serves a batch it skipped the next time.
#[cfg(feature = "planted-bugs")]
static SKIPPED: std::sync::Mutex<std::collections::BTreeSet<(String, i32, i64)>> =
    std::sync::Mutex::new(std::collections::BTreeSet::new());

/// Whether [`Bug::FetchSkipsABatch`] leaves out the batch of records at `base` of this
/// partition now: the first time for a base offset 2 more than a multiple of 5 (always false
/// without `planted-bugs`).
pub fn skips(topic: &str, partition: i32, base: i64) -> bool {
    #[cfg(feature = "planted-bugs")]
    {
        base % 5 == 2
            && SKIPPED.lock().unwrap_or_else(|e| e.into_inner()).insert((
                topic.to_owned(),
                partition,
                base,
            ))
    }
    #[cfg(not(feature = "planted-bugs"))]
    {
        let _ = (topic, partition, base);
        false
    }
}
