//! Your decoders of the six Kafka transaction APIs, as kconform-wire's check reads them: the one
//! function to fill in. The fuzz target and `decoders_session` both call it.

use kconform_wire::alloc::Watch;
use kconform_wire::check::{Case, Decoded, Direction};
// use tansu_check::...;

/// Sees every allocation (and serves huge ones as reservations, so that the check can name
/// them), in every binary of this crate.
#[global_allocator]
static ALLOC: Watch = Watch::system();

/// Decode `case.body` (a request or response body, after its header) of `case.api` at
/// `case.version`, and say what you read:
/// - `Decoded::Reencoded(bytes)`: your message written again at the same version (Apache's
///   reader reads the values back and all are compared);
/// - `Decoded::Values(json)`: the values by Apache's snake_case field names (only the fields
///   you give are compared);
/// - `Decoded::Refused(reason)`: your decoder refused the body;
/// - `Decoded::NotServed`: you do not decode this API, direction or version.
pub fn decode(case: &Case) -> Decoded {
    use kafka_protocol::messages::ApiKey;
    use tansu_check::tansu_sans_io::{Frame, Header};
    // tansu-sans-io 0.6's definitions: InitProducerId v0-5, AddPartitionsToTxn v0-5,
    // AddOffsetsToTxn v0-4, EndTxn v0-4, WriteTxnMarkers v0-1, TxnOffsetCommit v0-4.
    let top = match case.api {
        ApiKey::InitProducerId | ApiKey::AddPartitionsToTxn => 5,
        ApiKey::WriteTxnMarkers => 1,
        _ => 4,
    };
    if case.version > top {
        return Decoded::NotServed;
    }
    let (key, version) = (case.api as i16, case.version);
    let flexible = kconform_wire::check::message(case.direction, case.api, version)
        .is_some_and(|m| m.flexible.contains(version));
    let header = match case.direction {
        Direction::Request => kconform_wire::seeds::header(case.api, version, 7, "kconform"),
        Direction::Response if flexible => vec![0, 0, 0, 7, 0],
        Direction::Response => vec![0, 0, 0, 7],
    };
    let mut frame = ((header.len() + case.body.len()) as i32)
        .to_be_bytes()
        .to_vec();
    frame.extend(&header);
    frame.extend(&case.body);
    let again = match case.direction {
        Direction::Request => {
            Frame::request_from_bytes(&frame[..]).and_then(|f| Frame::request(f.header, f.body))
        }
        Direction::Response => Frame::response_from_bytes(&frame[..], key, version).and_then(|f| {
            let Header::Response { correlation_id } = f.header else {
                unreachable!("a response frame has a response header")
            };
            Frame::response(Header::Response { correlation_id }, f.body, key, version)
        }),
    };
    match again {
        // The size, then the same header as sent (checked), then the body written again.
        Ok(bytes) if bytes.get(4..4 + header.len()) == Some(&header[..]) => {
            Decoded::Reencoded(bytes[4 + header.len()..].to_vec())
        }
        Ok(bytes) => Decoded::Refused(format!(
            "wrote another header: {:02x?}",
            &bytes[..bytes.len().min(16)]
        )),
        Err(e) => Decoded::Refused(e.to_string()),
    }
}
