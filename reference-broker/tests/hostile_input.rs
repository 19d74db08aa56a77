//! Hostile input: no decoder allocates more than a small multiple of its input, whatever
//! lengths and counts the bytes claim; and the places where kafka-protocol 0.15 and Apache's
//! generated code disagree, settled in Apache's favour.
//!
//! Allocation is measured with a counting allocator (per thread, so parallel tests do not mix).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use reference_broker::codec::differential::{
    check_fuzz_input, fuzz_selector, theirs_decode, Verdict,
};
use reference_broker::codec::*;

struct Counting;

thread_local! {
    static LIVE: Cell<usize> = const { Cell::new(0) };
    static PEAK: Cell<usize> = const { Cell::new(0) };
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = LIVE.try_with(|l| {
            let now = l.get() + layout.size();
            l.set(now);
            let _ = PEAK.try_with(|p| p.set(p.get().max(now)));
        });
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        let _ = LIVE.try_with(|l| l.set(l.get().saturating_sub(layout.size())));
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// Peak bytes allocated (above what was live before) while `f` runs on this thread.
fn peak_during<R>(f: impl FnOnce() -> R) -> (R, usize) {
    let base = LIVE.with(Cell::get);
    PEAK.with(|p| p.set(base));
    let r = f();
    (r, PEAK.with(Cell::get) - base)
}

/// Inputs that claim far more than they hold, for every API, direction and version 0–7.
fn hostile_bodies() -> Vec<Vec<u8>> {
    let mut out = vec![
        vec![],
        vec![0x7f, 0xff, 0xff, 0xff],       // i32::MAX count or length
        vec![0xff, 0xff, 0xff, 0xff, 0x0f], // varint u32::MAX
        vec![0xfe, 0xff, 0xff, 0xff, 0x07, 0x00], // varint 2^31 - 2
        vec![0x7f, 0xff],                   // int16 length 32767
    ];
    // Valid prefixes followed by a huge count, at several depths.
    for prefix_len in [2usize, 6, 8, 12, 16, 20, 24] {
        let mut b = vec![0u8; prefix_len];
        b.extend([0x7f, 0xff, 0xff, 0xff]);
        out.push(b.clone());
        let mut c = vec![0x01u8; prefix_len];
        c.extend([0xff, 0xff, 0xff, 0xff, 0x0f, 0x00]);
        out.push(c);
    }
    // Deterministic pseudo-random bodies.
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for len in 0..200 {
        let body: Vec<u8> = (0..len % 48)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        out.push(body);
    }
    out
}

#[test]
fn no_decoder_allocates_more_than_a_small_multiple_of_its_input() {
    let mut worst = 0f64;
    for api in ApiKey::ALL {
        for version in 0..8i16 {
            for body in hostile_bodies() {
                let (_, req_peak) = peak_during(|| Request::decode(api, version, &body));
                let (_, resp_peak) = peak_during(|| Response::decode(api, version, &body));
                // The struct for the message itself, plus a multiple of the input.
                let bound = 512 + 32 * body.len();
                for peak in [req_peak, resp_peak] {
                    assert!(
                        peak <= bound,
                        "{api:?} v{version}: {peak} bytes allocated for a {}-byte input",
                        body.len()
                    );
                    worst = worst.max(peak as f64 / (body.len().max(1)) as f64);
                }
            }
        }
    }
    println!("worst allocation per input byte: {worst:.1}");
}

#[test]
fn hostile_inputs_are_errors_and_satisfy_the_oracle() {
    for api in ApiKey::ALL {
        for version in 0..8i16 {
            for direction in [Direction::Request, Direction::Response] {
                for body in hostile_bodies() {
                    let mut data = vec![fuzz_selector(direction, version)];
                    data.extend(&body);
                    check_fuzz_input(api, &data).unwrap();
                }
            }
        }
    }
}

/// kafka-protocol 0.15 reserves memory for a claimed array count before reading any element.
/// Apache checks the count against the bytes left ("Tried to allocate a collection of size
/// N, but there are only M bytes remaining"), and so do we.
#[test]
fn kafka_protocol_allocates_for_claimed_counts_apache_and_ours_do_not() {
    // WriteTxnMarkers v0: a markers count of one million, and nothing else.
    let body = 1_000_000i32.to_be_bytes();
    let (ours, ours_peak) = peak_during(|| WriteTxnMarkersRequest::decode(0, &body));
    assert!(matches!(ours, Err(CodecError::CountExceedsInput { .. })));
    assert!(ours_peak < 1024, "ours allocated {ours_peak}");
    let (theirs, theirs_peak) =
        peak_during(|| theirs_decode::<WriteTxnMarkersRequest>(0, &body).map(|_| ()));
    assert!(theirs.is_err(), "kafka-protocol also refuses in the end");
    assert!(
        theirs_peak > 10_000_000,
        "kafka-protocol reserved {theirs_peak} bytes for a 4-byte input"
    );
}

/// Apache's generated readers refuse strings over 32767 bytes, compact ones included
/// ("string field X had invalid length"); kafka-protocol reads them.
#[test]
fn kafka_protocol_reads_strings_longer_than_apache_allows() {
    let mut body = vec![0x81, 0x80, 0x02]; // compact length 32768 + 1
    body.extend(std::iter::repeat_n(b'a', 32768));
    body.extend([0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 1, 0]);
    assert!(matches!(
        EndTxnRequest::decode(3, &body),
        Err(CodecError::StringTooLong { length: 32768, .. })
    ));
    let (theirs, _) = theirs_decode::<EndTxnRequest>(3, &body).unwrap();
    assert_eq!(theirs.transactional_id.len(), 32768);
    let mut data = vec![fuzz_selector(Direction::Request, 3)];
    data.extend(&body);
    assert!(matches!(
        check_fuzz_input(ApiKey::EndTxn, &data),
        Ok(Verdict::RefusedKnownLaxity(_))
    ));
}

/// Apache's `readUnsignedVarint` throws after five bytes; kafka-protocol stops reading after
/// five and carries on from there.
#[test]
fn kafka_protocol_accepts_varints_longer_than_five_bytes() {
    // EndTxnResponse v3 whose tagged-field count is a 6-byte varint of 0, then one more 0x00.
    let body = [0, 0, 0, 0, 0, 0, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00];
    assert!(matches!(
        EndTxnResponse::decode(3, &body),
        Err(CodecError::VarintTooLong { .. })
    ));
    assert!(theirs_decode::<EndTxnResponse>(3, &body).is_ok());
}

/// Apache's generated reader treats any negative length of a nullable string as null;
/// kafka-protocol refuses every negative length but -1.
#[test]
fn kafka_protocol_refuses_negative_nullable_lengths_apache_reads_as_null() {
    let body = [0xff, 0xfe, 0, 0, 0, 0]; // InitProducerId v0, transactional_id length -2
    let ours = InitProducerIdRequest::decode_checked(0, &body).unwrap();
    assert_eq!(ours.message.transactional_id, None);
    assert!(ours.leniency.negative_null_length);
    assert!(theirs_decode::<InitProducerIdRequest>(0, &body).is_err());
}

/// Apache reads the tagged-field count into a Java int and loops `i < count`: a count of 2^31
/// or more is negative and reads no fields. kafka-protocol loops over the unsigned count.
#[test]
fn kafka_protocol_refuses_tag_counts_apache_reads_as_none() {
    let body = [0, 0, 0, 0, 0, 0, 0x80, 0x80, 0x80, 0x80, 0x08];
    let ours = EndTxnResponse::decode_checked(3, &body).unwrap();
    assert!(ours.message.unknown_tagged_fields.is_empty());
    assert!(ours.leniency.negative_tag_count);
    assert!(theirs_decode::<EndTxnResponse>(3, &body).is_err());
}
