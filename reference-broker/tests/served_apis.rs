//! Every API kaas-ref advertises has a handler: a request of each served API, at its lowest and
//! highest version served, goes through the dispatcher and is answered (or, for a Produce with
//! acks=0, accepted without an answer), never closed as having no handler. The requests are
//! kafka-protocol's defaults, read from zeros at v0 and written at each version.

use bytes::{Bytes, BytesMut};
use kafka_protocol::messages::{ApiKey, RequestHeader, RequestKind};
use kafka_protocol::protocol::Encodable;
use reference_broker::apis::served_apis;
use reference_broker::dispatch;
use reference_broker::limits::Limits;

use crate::common::wire::{broker, s};

/// A request of `api` with every field at its default (as v0 reads zeros), encoded at `version`
/// with its header; `None` where the defaults cannot be written at that version.
fn default_frame(api: ApiKey, version: i16) -> Option<Bytes> {
    let mut zeros = Bytes::from(vec![0u8; 256]);
    let request = RequestKind::decode(api, &mut zeros, 0).ok()?;
    let mut buf = BytesMut::new();
    RequestHeader::default()
        .with_request_api_key(api as i16)
        .with_request_api_version(version)
        .with_correlation_id(7)
        .with_client_id(Some(s("served-apis")))
        .encode(&mut buf, api.request_header_version(version))
        .ok()?;
    request.encode(&mut buf, version).ok()?;
    Some(buf.freeze())
}

#[tokio::test]
async fn every_served_api_is_handled_at_its_lowest_and_highest_version() {
    let b = broker(Limits::default());
    let mut sent = 0;
    let mut refused = Vec::new();
    let mut unwritable = Vec::new();
    for (api, min, max) in served_apis() {
        for version in [min, max] {
            let Some(frame) = default_frame(api, version) else {
                unwritable.push(format!("{api:?} v{version}"));
                continue;
            };
            sent += 1;
            if let Err(e) = dispatch::handle(&b.state, frame).await {
                refused.push(format!("{api:?} v{version}: {e}"));
            }
        }
    }
    println!(
        "{sent} frames of {} served APIs answered; defaults not writable at: {unwritable:?}",
        served_apis().count()
    );
    assert!(refused.is_empty(), "{refused:#?}");
    // Every served API gave at least its lowest version's frame.
    assert!(sent >= served_apis().count(), "only {sent} frames");
}
