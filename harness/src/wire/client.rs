//! A raw Kafka wire client on the kafka-protocol crate: one connection, one request at a time,
//! any API at any version, a deadline on every wait.

use std::net::SocketAddr;
use std::time::Duration;

use bytes::BytesMut;
use kafka_protocol::messages::{
    ApiKey, ApiVersionsRequest, ApiVersionsResponse, RequestHeader, RequestKind, ResponseKind,
};
use kafka_protocol::protocol::{Encodable, StrBytes};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::wire::frame::{self, Malformed};

/// Largest response accepted.
pub const MAX_RESPONSE_BYTES: usize = 64 * 1024 * 1024;

/// Why a request got no usable answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClientError {
    /// No connection.
    #[error("cannot connect to {addr}: {reason}")]
    Connect {
        /// Broker address.
        addr: SocketAddr,
        /// Why.
        reason: String,
    },
    /// The deadline passed.
    #[error("no answer within {0:?}")]
    Timeout(Duration),
    /// The broker closed the connection.
    #[error("the broker closed the connection")]
    Closed,
    /// The request could not be encoded at this version.
    #[error("cannot encode {api:?} v{version}: {reason}")]
    Encode {
        /// API.
        api: ApiKey,
        /// Version.
        version: i16,
        /// Why.
        reason: String,
    },
    /// The answer is not a well-formed response to the request ([`crate::wire::frame`]).
    #[error("malformed answer: {0}")]
    Malformed(Box<Malformed>),
    /// The answer began and stopped before its end.
    #[error("the answer stopped after {got} of the {size} bytes its size announced, and nothing came for {deadline:?}")]
    Cut {
        /// Bytes that came.
        got: usize,
        /// Bytes announced.
        size: usize,
        /// The deadline.
        deadline: Duration,
    },
    /// A well-formed answer at a version kafka-protocol does not generate, asked for as its
    /// message (the scenario runner reads it by Apache's definitions instead).
    #[error("kafka-protocol 0.15 does not decode {api:?} v{version}")]
    Undecoded {
        /// API.
        api: ApiKey,
        /// Version.
        version: i16,
    },
    /// Transport error.
    #[error("i/o: {0}")]
    Io(String),
    /// SASL authentication did not succeed ([`crate::wire::sasl`]).
    #[error("authentication as {user} ({mechanism}) failed: {reason}")]
    Authentication {
        /// The user.
        user: String,
        /// The mechanism.
        mechanism: String,
        /// What the broker answered, or why the exchange could not go on.
        reason: String,
    },
}

/// A request's body: kafka-protocol's message, encoded at the version sent, or bytes already
/// written by Apache's definitions ([`crate::wire::by_schema`]) at a version kafka-protocol
/// does not generate.
#[derive(Debug, Clone, Copy)]
pub enum Body<'a> {
    /// A kafka-protocol message.
    Typed(&'a RequestKind),
    /// The body's bytes.
    Written(&'a [u8]),
}

/// A request frame (without its 4-byte size): the header of `api` at `version` with
/// `correlation` and `client_id`, then `request` encoded at that version.
pub fn encode_request(
    api: ApiKey,
    version: i16,
    correlation: i32,
    client_id: &'static str,
    request: Body<'_>,
) -> Result<BytesMut, ClientError> {
    let encode_error = |e: &dyn std::fmt::Display| ClientError::Encode {
        api,
        version,
        reason: e.to_string(),
    };
    let mut frame = BytesMut::new();
    RequestHeader::default()
        .with_request_api_key(api as i16)
        .with_request_api_version(version)
        .with_correlation_id(correlation)
        .with_client_id(Some(StrBytes::from_static_str(client_id)))
        .encode(&mut frame, api.request_header_version(version))
        .map_err(|e| encode_error(&e))?;
    match request {
        Body::Typed(request) => request
            .encode(&mut frame, version)
            .map_err(|e| encode_error(&e))?,
        Body::Written(bytes) => frame.extend_from_slice(bytes),
    }
    Ok(frame)
}

/// What an I/O failure on a connection means: the broker closed it (or reset it), or
/// something else went wrong, said as it is.
fn io_error(e: std::io::Error) -> ClientError {
    match e.kind() {
        std::io::ErrorKind::UnexpectedEof
        | std::io::ErrorKind::ConnectionReset
        | std::io::ErrorKind::BrokenPipe => ClientError::Closed,
        _ => ClientError::Io(e.to_string()),
    }
}

/// One connection to a broker.
#[derive(Debug)]
pub struct Connection {
    stream: TcpStream,
    next_correlation: i32,
    deadline: Duration,
}

impl Connection {
    /// Connects, with `deadline` for the connect and for every later answer.
    pub async fn connect(addr: SocketAddr, deadline: Duration) -> Result<Connection, ClientError> {
        let stream = tokio::time::timeout(deadline, TcpStream::connect(addr))
            .await
            .map_err(|_| ClientError::Timeout(deadline))?
            .map_err(|e| ClientError::Connect {
                addr,
                reason: e.to_string(),
            })?;
        let _ = stream.set_nodelay(true);
        Ok(Connection {
            stream,
            next_correlation: 1,
            deadline,
        })
    }

    /// Sends `request` as `api` at `version` and waits for its answer.
    pub async fn send(
        &mut self,
        api: ApiKey,
        version: i16,
        request: &RequestKind,
    ) -> Result<ResponseKind, ClientError> {
        self.exchange(api, version, Body::Typed(request))
            .await?
            .response
            .ok_or(ClientError::Undecoded { api, version })
    }

    /// Sends `request` as `api` at `version` and waits for its answer, with the notes on how
    /// it was encoded ([`frame::Note`]): what the scenario runner records.
    pub async fn exchange(
        &mut self,
        api: ApiKey,
        version: i16,
        request: Body<'_>,
    ) -> Result<frame::Decoded, ClientError> {
        let correlation = self.next_correlation;
        self.next_correlation += 1;
        let frame = encode_request(api, version, correlation, "kconform", request)?;
        let body = self.send_raw(&frame, self.deadline).await?;
        frame::decode(api, version, correlation, &body).map_err(ClientError::Malformed)
    }

    /// Writes the request and closes the connection without waiting for its answer: a client
    /// that dies (or gives up) with a request in flight. The broker has the whole request
    /// before the close reaches it; whether it carries it out is what the steps after show.
    pub async fn send_and_cut(
        mut self,
        api: ApiKey,
        version: i16,
        request: Body<'_>,
    ) -> Result<(), ClientError> {
        let frame = encode_request(api, version, self.next_correlation, "kconform", request)?;
        let stream = &mut self.stream;
        let write = async {
            stream
                .write_all(&(frame.len() as i32).to_be_bytes())
                .await?;
            stream.write_all(&frame).await?;
            stream.flush().await?;
            stream.shutdown().await
        };
        match tokio::time::timeout(self.deadline, write).await {
            Err(_) => Err(ClientError::Timeout(self.deadline)),
            Ok(result) => result.map_err(io_error),
        }
    }

    /// Sends `frame` (a request frame without its 4-byte size, which this adds) as it is and
    /// waits for one answer frame, returned without its size and undecoded: how the live-wire
    /// fuzzer sends frames no encoder would make. The answer's size is bounded
    /// ([`MAX_RESPONSE_BYTES`]) before anything is allocated for it; `deadline` bounds the
    /// whole exchange.
    pub async fn send_raw(
        &mut self,
        frame: &[u8],
        deadline: Duration,
    ) -> Result<Vec<u8>, ClientError> {
        let stream = &mut self.stream;
        let mut got = None;
        let exchange = async {
            stream
                .write_all(&(frame.len() as i32).to_be_bytes())
                .await
                .map_err(io_error)?;
            stream.write_all(frame).await.map_err(io_error)?;
            let mut size = [0u8; 4];
            stream.read_exact(&mut size).await.map_err(io_error)?;
            let announced = i32::from_be_bytes(size);
            if announced < 0 || announced as usize > MAX_RESPONSE_BYTES {
                let (key, version) = match frame {
                    [a, b, c, d, ..] => {
                        (i16::from_be_bytes([*a, *b]), i16::from_be_bytes([*c, *d]))
                    }
                    _ => (-1, -1),
                };
                return Err(ClientError::Malformed(Box::new(Malformed {
                    api: crate::wire::error_codes::api_name(key),
                    version,
                    header_version: ApiKey::try_from(key)
                        .map_or(0, |api| api.response_header_version(version)),
                    problem: format!(
                        "the size prefix announces {announced} bytes (the limit is {MAX_RESPONSE_BYTES})"
                    ),
                    field: Some("size".into()),
                    offset: 0,
                    frame: frame::hex(&size),
                    read_past_as_header: None,
                read_past_answer: None,
                })));
            }
            let mut body = vec![0u8; announced as usize];
            let mut filled = 0;
            while filled < body.len() {
                got = Some((filled, body.len()));
                match stream.read(&mut body[filled..]).await.map_err(io_error)? {
                    0 => return Err(ClientError::Closed),
                    n => filled += n,
                }
            }
            Ok(body)
        };
        match tokio::time::timeout(deadline, exchange).await {
            Ok(body) => body,
            Err(_) => Err(match got {
                Some((got, size)) if got > 0 => ClientError::Cut {
                    got,
                    size,
                    deadline,
                },
                _ => ClientError::Timeout(deadline),
            }),
        }
    }

    /// The (min, max) versions the broker serves per API key, from ApiVersions v0.
    pub async fn api_versions(&mut self) -> Result<Vec<(i16, i16, i16)>, ClientError> {
        let r = self.api_versions_at(0).await?;
        Ok(r.api_keys
            .iter()
            .map(|k| (k.api_key, k.min_version, k.max_version))
            .collect())
    }

    /// The ApiVersions answer at `version`, asked as a client of that version asks (from v3,
    /// naming itself: kconform and its version).
    pub async fn api_versions_at(
        &mut self,
        version: i16,
    ) -> Result<ApiVersionsResponse, ClientError> {
        let mut request = ApiVersionsRequest::default();
        if version >= 3 {
            request = request
                .with_client_software_name(StrBytes::from_static_str("kconform"))
                .with_client_software_version(StrBytes::from_static_str(env!("CARGO_PKG_VERSION")));
        }
        match self
            .send(
                ApiKey::ApiVersions,
                version,
                &RequestKind::ApiVersions(request),
            )
            .await?
        {
            ResponseKind::ApiVersions(r) => Ok(r),
            other => unreachable!("an ApiVersions request decodes as ApiVersions: {other:?}"),
        }
    }
}
