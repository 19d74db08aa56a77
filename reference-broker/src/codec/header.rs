//! Request and response headers for the transaction APIs.
//!
//! Request header v1 (api key, version, correlation id, nullable client id) is used by
//! non-flexible versions and v2 (v1 plus a tagged-field section) by flexible ones. The client
//! id stays a classic int16-length string even in v2. Response header v0 is the correlation id;
//! v1 adds a tagged-field section. Which one an (API, version) uses is
//! [`ApiKey::request_header_version`] / [`ApiKey::response_header_version`].

use super::{
    ApiKey, CompactString, Decoded, Message, Reader, Request, Response, Result, TaggedFields,
    Writer,
};

/// The header in front of every request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestHeader {
    /// API key (one of the six for this codec).
    pub api_key: i16,
    /// API version.
    pub api_version: i16,
    /// Echoed in the response.
    pub correlation_id: i32,
    /// Client name, nullable.
    pub client_id: Option<CompactString>,
    /// Header v2 only.
    pub unknown_tagged_fields: TaggedFields,
}

impl RequestHeader {
    /// Reads a header of `header_version` (1 or 2); returns the reader positioned after it.
    pub fn read(bytes: &[u8], header_version: i16) -> Result<(RequestHeader, Reader<'_>)> {
        let mut r = Reader::new(bytes, header_version >= 2);
        let header = Self::read_from(&mut r)?;
        Ok((header, r))
    }

    fn read_from(r: &mut Reader<'_>) -> Result<RequestHeader> {
        let api_key = r.i16("RequestHeader.api_key")?;
        let api_version = r.i16("RequestHeader.api_version")?;
        let correlation_id = r.i32("RequestHeader.correlation_id")?;
        let client_id = r.classic_nullable_string("RequestHeader.client_id")?;
        let unknown_tagged_fields = r.tagged_fields("RequestHeader._tagged_fields")?;
        Ok(RequestHeader {
            api_key,
            api_version,
            correlation_id,
            client_id,
            unknown_tagged_fields,
        })
    }

    /// Writes a header of `header_version` (1 or 2).
    pub fn write(&self, header_version: i16) -> Result<Vec<u8>> {
        let mut w = Writer::new(header_version, header_version >= 2);
        w.i16(self.api_key);
        w.i16(self.api_version);
        w.i32(self.correlation_id);
        w.classic_nullable_string("RequestHeader.client_id", self.client_id.as_deref())?;
        w.tagged_fields("RequestHeader._tagged_fields", &self.unknown_tagged_fields)?;
        Ok(w.into_bytes())
    }
}

/// The header in front of every response.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResponseHeader {
    /// The request's correlation id.
    pub correlation_id: i32,
    /// Header v1 only.
    pub unknown_tagged_fields: TaggedFields,
}

impl ResponseHeader {
    /// Reads a header of `header_version` (0 or 1); returns the reader positioned after it.
    pub fn read(bytes: &[u8], header_version: i16) -> Result<(ResponseHeader, Reader<'_>)> {
        let mut r = Reader::new(bytes, header_version >= 1);
        let header = Self::read_from(&mut r)?;
        Ok((header, r))
    }

    fn read_from(r: &mut Reader<'_>) -> Result<ResponseHeader> {
        let correlation_id = r.i32("ResponseHeader.correlation_id")?;
        let unknown_tagged_fields = r.tagged_fields("ResponseHeader._tagged_fields")?;
        Ok(ResponseHeader {
            correlation_id,
            unknown_tagged_fields,
        })
    }

    /// Writes a header of `header_version` (0 or 1).
    pub fn write(&self, header_version: i16) -> Result<Vec<u8>> {
        let mut w = Writer::new(header_version, header_version >= 1);
        w.i32(self.correlation_id);
        w.tagged_fields("ResponseHeader._tagged_fields", &self.unknown_tagged_fields)?;
        Ok(w.into_bytes())
    }
}

/// Decodes a request frame body (header then message, without the 4-byte size prefix),
/// choosing the header version from the API and version it names. Bytes after the message are
/// an error; see [`decode_request_ignoring_trailing`] for what a broker accepts.
pub fn decode_request(frame: &[u8]) -> Result<(RequestHeader, Decoded<Request>)> {
    match decode_request_ignoring_trailing(frame)? {
        (header, decoded, 0) => Ok((header, decoded)),
        (_, _, count) => Err(super::CodecError::TrailingBytes { count }),
    }
}

/// As [`decode_request`], but bytes after the message are ignored (and counted), as Apache's
/// broker ignores them.
pub fn decode_request_ignoring_trailing(
    frame: &[u8],
) -> Result<(RequestHeader, Decoded<Request>, usize)> {
    // The first four bytes name the API and version; peek at them to pick the header version.
    let mut peek = Reader::new(frame, false);
    let api = ApiKey::from_key(peek.i16("RequestHeader.api_key")?)?;
    let version = peek.i16("RequestHeader.api_version")?;
    api.check_version(version)?;
    let (header, r) = RequestHeader::read(frame, api.request_header_version(version))?;
    let body = &frame[r.position()..];
    let header_leniency = r.leniency();
    let (decoded, trailing) = decode_request_body(api, version, body)?;
    let mut leniency = decoded.leniency;
    leniency.overlong_varint |= header_leniency.overlong_varint;
    leniency.negative_tag_count |= header_leniency.negative_tag_count;
    leniency.negative_null_length |= header_leniency.negative_null_length;
    leniency.lossy_utf8 |= header_leniency.lossy_utf8;
    Ok((
        header,
        Decoded {
            message: decoded.message,
            leniency,
        },
        trailing,
    ))
}

fn decode_request_body(
    api: ApiKey,
    version: i16,
    body: &[u8],
) -> Result<(Decoded<Request>, usize)> {
    fn wrap<T: Message>(
        version: i16,
        body: &[u8],
        f: fn(T) -> Request,
    ) -> Result<(Decoded<Request>, usize)> {
        let (d, trailing) = T::decode_prefix(version, body)?;
        Ok((
            Decoded {
                message: f(d.message),
                leniency: d.leniency,
            },
            trailing,
        ))
    }
    match api {
        ApiKey::InitProducerId => wrap(version, body, Request::InitProducerId),
        ApiKey::AddPartitionsToTxn => wrap(version, body, Request::AddPartitionsToTxn),
        ApiKey::AddOffsetsToTxn => wrap(version, body, Request::AddOffsetsToTxn),
        ApiKey::EndTxn => wrap(version, body, Request::EndTxn),
        ApiKey::WriteTxnMarkers => wrap(version, body, Request::WriteTxnMarkers),
        ApiKey::TxnOffsetCommit => wrap(version, body, Request::TxnOffsetCommit),
    }
}

/// Encodes a request frame body: header (version chosen from the request) then message.
pub fn encode_request(header: &RequestHeader, request: &Request) -> Result<Vec<u8>> {
    let api = request.api();
    let mut out = header.write(api.request_header_version(header.api_version))?;
    out.extend(request.encode(header.api_version)?);
    Ok(out)
}

/// Encodes a response frame body: header (version chosen from the API and version) then message.
pub fn encode_response(correlation_id: i32, version: i16, response: &Response) -> Result<Vec<u8>> {
    let api = response.api();
    api.check_version(version)?;
    let header = ResponseHeader {
        correlation_id,
        unknown_tagged_fields: TaggedFields::new(),
    };
    let mut out = header.write(api.response_header_version(version))?;
    out.extend(response.encode(version)?);
    Ok(out)
}

/// Decodes a response frame body of `api` at `version` (the caller knows what it asked).
pub fn decode_response(
    api: ApiKey,
    version: i16,
    frame: &[u8],
) -> Result<(ResponseHeader, Response)> {
    api.check_version(version)?;
    let (header, r) = ResponseHeader::read(frame, api.response_header_version(version))?;
    let response = Response::decode(api, version, &frame[r.position()..])?;
    Ok((header, response))
}
