//! One request frame in, one response frame (or none) out.
//!
//! The six transaction APIs go through the broker's own codecs (`crate::codec`); every other
//! API through the `kafka-protocol` crate. A frame that cannot be parsed is an error, and the
//! connection is closed, as Apache closes it.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use kafka_protocol::messages::{ApiKey, RequestHeader, RequestKind, ResponseHeader, ResponseKind};
use kafka_protocol::protocol::{Decodable, Encodable};

use crate::codec;
use crate::handlers;
use crate::state::State;

/// Why a frame closes its connection.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    /// Shorter than an API key and version.
    #[error("frame of {0} bytes is too short for a request header")]
    TooShort(usize),
    /// An API key this broker does not serve.
    #[error("api key {0} is not served")]
    UnknownApi(i16),
    /// A version outside the advertised range.
    #[error("{api:?} v{version} is not served")]
    UnsupportedVersion {
        /// The API.
        api: ApiKey,
        /// The version.
        version: i16,
    },
    /// The header or body does not decode.
    #[error("{api:?} v{version}: cannot decode: {reason}")]
    Malformed {
        /// The API.
        api: i16,
        /// The version.
        version: i16,
        /// Why.
        reason: String,
    },
    /// An API advertised as served whose request no handler takes (a bug of the broker, not of
    /// the frame: `tests/served_apis.rs` sends every served API to find one).
    #[error("{api:?} v{version}: no handler for this API")]
    NoHandler {
        /// The API.
        api: ApiKey,
        /// The version.
        version: i16,
    },
    /// The handler panicked (a bug: logged, and the connection closed; other connections go on).
    #[error("{api:?} v{version}: the handler failed: {reason}")]
    HandlerFailed {
        /// The API.
        api: i16,
        /// The version.
        version: i16,
        /// The panic's message.
        reason: String,
    },
    /// The response could not be encoded (a bug: logged, and the connection closed).
    #[error("cannot encode the {0:?} response: {1}")]
    Encode(ApiKey, String),
}

/// A response frame to come, once its request is handled. `None` means no response is sent
/// (Produce with acks=0).
pub type Pending = Pin<Box<dyn Future<Output = Result<Option<Vec<u8>>, FrameError>> + Send>>;

/// What handling a request gave: the response, or — for an acks=all Produce whose appends are
/// done — the response once they are durable. The connection may read and handle its next
/// request meanwhile (its appends come after these), answering in order.
pub enum Reply {
    /// The response now.
    Now(Option<Vec<u8>>),
    /// The response when the appends are on disk.
    Later(Pending),
}

/// Handles one request frame (without its size prefix) to its response. `Ok(None)` means no
/// response is sent (Produce with acks=0).
pub async fn handle(state: &Arc<State>, frame: Bytes) -> Result<Option<Vec<u8>>, FrameError> {
    match handle_pipelined(state, frame).await? {
        Reply::Now(response) => Ok(response),
        Reply::Later(pending) => pending.await,
    }
}

/// What a frame on a connection comes to, authentication included.
pub enum Turn {
    /// An answer (a SASL exchange's, or the request's).
    Reply(Reply),
    /// Authentication failed: answer this, then close the connection.
    Fail(Vec<u8>, String),
    /// Close the connection without an answer (why).
    Close(String),
}

/// Handles one frame of a connection: through `sasl` first when the connection must
/// authenticate (`None`: it need not, and the request is `User:ANONYMOUS`'s), then as the
/// principal it logged in as. The server's connections and the SASL fuzz target both go
/// through here.
pub async fn handle_on(
    state: &Arc<State>,
    sasl: Option<&mut crate::sasl::Authenticator>,
    frame: Bytes,
) -> Turn {
    use crate::sasl::Next;
    let principal: Arc<str> = match sasl.map(|a| a.next(&frame)) {
        None => crate::auth::ANONYMOUS.into(),
        Some(Next::Pass(principal)) => principal,
        Some(Next::Answer(body)) => return Turn::Reply(Reply::Now(Some(body))),
        Some(Next::Fail(body, reason)) => return Turn::Fail(body, reason),
        Some(Next::Close(reason)) => return Turn::Close(reason),
    };
    match handle_as(state, principal, frame).await {
        Ok(reply) => Turn::Reply(reply),
        Err(e) => Turn::Close(e.to_string()),
    }
}

/// Handles one request frame up to the point where its effects are in order: every request
/// is done but for the durability wait of an acks=all Produce, which is returned to await.
pub async fn handle_pipelined(state: &Arc<State>, frame: Bytes) -> Result<Reply, FrameError> {
    handle_as(state, crate::auth::ANONYMOUS.into(), frame).await
}

/// As [`handle_pipelined`], for a connection authenticated as `principal`.
pub async fn handle_as(
    state: &Arc<State>,
    principal: Arc<str>,
    frame: Bytes,
) -> Result<Reply, FrameError> {
    let started = std::time::Instant::now();
    let key = frame.get(..2).map(|k| i16::from_be_bytes([k[0], k[1]]));
    let result = handle_frame(state, principal, frame).await;
    tracing::debug!(api_key = ?key, micros = started.elapsed().as_micros() as u64, ok = result.is_ok(), "request");
    result
}

/// A null kafka-protocol 0.15 reads where the request's version forbids one: it takes a -1
/// length for null whatever the version, where Apache's parser refuses the request and closes
/// the connection (as the broker must: answering would echo a null a v0 response cannot hold).
/// Metadata is where `kconform fuzz --mode frames` found it: topics null in v0, a topic's name
/// null before v10.
fn null_the_version_forbids(request: &RequestKind, version: i16) -> Option<String> {
    match request {
        RequestKind::Metadata(r) => match &r.topics {
            None if version < 1 => Some("topics: null, which Metadata v0 does not allow".into()),
            Some(topics) if version < 10 && topics.iter().any(|t| t.name.is_none()) => Some(
                format!("topics[].name: null, which Metadata v{version} does not allow"),
            ),
            _ => None,
        },
        _ => None,
    }
}

/// A request at a version this broker does not list: ApiVersions answered at v0 with
/// UNSUPPORTED_VERSION (KIP-511), every other API refused (the connection closes, as Apache
/// closes it), but where a planted bug answers it.
fn unlisted_version(
    state: &Arc<State>,
    (api, version): (ApiKey, i16),
    correlation_id: i32,
) -> Result<Reply, FrameError> {
    if api == ApiKey::ApiVersions {
        // KIP-511: answer an unknown ApiVersions version with v0 and UNSUPPORTED_VERSION.
        let body = handlers::api_versions::unsupported_version();
        return encode(api, 0, correlation_id, &ResponseKind::ApiVersions(body))
            .map(|r| Reply::Now(Some(r)));
    }
    if codec::ApiKey::from_key(api as i16).is_ok()
        && state
            .config
            .planted
            .has(crate::planted::Bug::AnswersUnlistedVersions)
    {
        // A bare header and UNSUPPORTED_VERSION, where Apache closes the connection.
        let mut out = correlation_id.to_be_bytes().to_vec();
        out.extend_from_slice(&crate::errors::UNSUPPORTED_VERSION.to_be_bytes());
        return Ok(Reply::Now(Some(out)));
    }
    Err(FrameError::UnsupportedVersion { api, version })
}

async fn handle_frame(
    state: &Arc<State>,
    principal: Arc<str>,
    frame: Bytes,
) -> Result<Reply, FrameError> {
    if frame.len() < 8 {
        return Err(FrameError::TooShort(frame.len()));
    }
    let key = i16::from_be_bytes([frame[0], frame[1]]);
    let version = i16::from_be_bytes([frame[2], frame[3]]);
    let correlation_id = i32::from_be_bytes([frame[4], frame[5], frame[6], frame[7]]);
    let api = ApiKey::try_from(key).map_err(|_| FrameError::UnknownApi(key))?;
    let Some((min, max)) = crate::apis::served(api) else {
        return Err(FrameError::UnknownApi(key));
    };
    if !(min..=max).contains(&version) {
        return unlisted_version(state, (api, version), correlation_id);
    }
    state.sync_topics();
    let malformed = |reason: String| FrameError::Malformed {
        api: key,
        version,
        reason,
    };
    let failed = |reason: String| FrameError::HandlerFailed {
        api: key,
        version,
        reason,
    };
    if codec::ApiKey::from_key(key).is_ok() {
        // The six transaction APIs: decoded once by the broker's own codecs (Apache ignores
        // bytes after a request body; so does the broker), handled off the async workers (the
        // store fsyncs under locks), encoded once.
        let (header, decoded, _trailing) = state
            .config
            .planted
            .decoding(|| codec::header::decode_request_ignoring_trailing(&frame))
            .map_err(|e| malformed(e.to_string()))?;
        if state
            .config
            .planted
            .has(crate::planted::Bug::HangOnEmptyGroupId)
        {
            if let codec::Request::AddOffsetsToTxn(r) = &decoded.message {
                if r.group_id.is_empty() {
                    std::future::pending::<()>().await;
                }
            }
        }
        let ctx = handlers::Ctx {
            state: state.clone(),
            version,
            client_id: header.client_id.as_deref().unwrap_or_default().to_owned(),
            principal,
        };
        let response =
            handlers::off_worker(move || handlers::transactions::handle(&ctx, decoded.message))
                .await
                .map_err(failed)?;
        return codec::header::encode_response(header.correlation_id, version, &response)
            .map(|r| Reply::Now(Some(r)))
            .map_err(|e| FrameError::Encode(api, e.to_string()));
    }
    let mut buf = frame;
    let header = RequestHeader::decode(&mut buf, api.request_header_version(version))
        .map_err(|e| malformed(e.to_string()))?;
    let request =
        RequestKind::decode(api, &mut buf, version).map_err(|e| malformed(e.to_string()))?;
    if let Some(problem) = null_the_version_forbids(&request, version) {
        return Err(malformed(problem));
    }
    let ctx = handlers::Ctx {
        state: state.clone(),
        version,
        client_id: header
            .client_id
            .as_ref()
            .map(|c| c.to_string())
            .unwrap_or_default(),
        principal,
    };
    // On an authenticated connection (or one that needs none), the SASL requests are out of
    // place: Apache's KafkaApis answers them ILLEGAL_SASL_STATE.
    if let Some(response) = crate::sasl::after_authentication(&request) {
        return encode(api, version, header.correlation_id, &response).map(|r| Reply::Now(Some(r)));
    }
    // ApiVersions takes no lock; Fetch, JoinGroup and SyncGroup wait asynchronously and move
    // their locked parts off the async workers themselves; every other handler runs whole on
    // the blocking pool (`lock_order`).
    let response = match request {
        RequestKind::ApiVersions(r) => {
            ResponseKind::ApiVersions(handlers::api_versions::handle(&ctx, r))
        }
        RequestKind::Fetch(r) => {
            ResponseKind::Fetch(handlers::fetch::handle(&ctx, r).await.map_err(failed)?)
        }
        RequestKind::JoinGroup(r) => ResponseKind::JoinGroup(handlers::group::join(&ctx, r).await),
        RequestKind::SyncGroup(r) => ResponseKind::SyncGroup(handlers::group::sync(&ctx, r).await),
        RequestKind::Produce(r) => {
            let appended = handlers::off_worker(move || handlers::produce::append(&ctx, r))
                .await
                .map_err(failed)?;
            if !appended.waits() {
                match appended.durable() {
                    Some(response) => ResponseKind::Produce(response),
                    None => return Ok(Reply::Now(None)),
                }
            } else {
                let correlation_id = header.correlation_id;
                return Ok(Reply::Later(Box::pin(async move {
                    let response = handlers::off_worker(move || appended.durable())
                        .await
                        .map_err(|reason| FrameError::HandlerFailed {
                            api: key,
                            version,
                            reason,
                        })?;
                    match response {
                        Some(r) => encode(api, version, correlation_id, &ResponseKind::Produce(r))
                            .map(Some),
                        None => Ok(None),
                    }
                })));
            }
        }
        other => match handlers::off_worker(move || blocking(&ctx, other))
            .await
            .map_err(failed)?
        {
            Ok(response) => response,
            Err(NoHandler) => return Err(FrameError::NoHandler { api, version }),
        },
    };
    encode(api, version, header.correlation_id, &response).map(|r| Reply::Now(Some(r)))
}

/// A request no handler takes.
struct NoHandler;

/// The handlers that run whole on the blocking pool; `Err`: no handler for the request.
fn blocking(ctx: &handlers::Ctx, request: RequestKind) -> Result<ResponseKind, NoHandler> {
    Ok(match request {
        RequestKind::Metadata(r) => ResponseKind::Metadata(handlers::metadata::handle(ctx, r)),
        RequestKind::CreateTopics(r) => {
            ResponseKind::CreateTopics(handlers::admin::create_topics(ctx, r))
        }
        RequestKind::DeleteTopics(r) => {
            ResponseKind::DeleteTopics(handlers::admin::delete_topics(ctx, r))
        }
        RequestKind::ListOffsets(r) => {
            ResponseKind::ListOffsets(handlers::list_offsets::handle(ctx, r))
        }
        RequestKind::FindCoordinator(r) => {
            ResponseKind::FindCoordinator(handlers::find_coordinator::handle(ctx, r))
        }
        RequestKind::Heartbeat(r) => ResponseKind::Heartbeat(handlers::group::heartbeat(ctx, r)),
        RequestKind::LeaveGroup(r) => ResponseKind::LeaveGroup(handlers::group::leave(ctx, r)),
        RequestKind::DescribeGroups(r) => {
            ResponseKind::DescribeGroups(handlers::group::describe(ctx, r))
        }
        RequestKind::ListGroups(r) => ResponseKind::ListGroups(handlers::group::list(ctx, r)),
        RequestKind::DeleteGroups(r) => ResponseKind::DeleteGroups(handlers::group::delete(ctx, r)),
        RequestKind::OffsetCommit(r) => {
            ResponseKind::OffsetCommit(handlers::offsets::commit(ctx, r))
        }
        RequestKind::OffsetFetch(r) => ResponseKind::OffsetFetch(handlers::offsets::fetch(ctx, r)),
        RequestKind::CreateAcls(r) => ResponseKind::CreateAcls(handlers::acls::create(ctx, r)),
        RequestKind::DescribeAcls(r) => {
            ResponseKind::DescribeAcls(handlers::acls::describe(ctx, r))
        }
        RequestKind::DeleteAcls(r) => ResponseKind::DeleteAcls(handlers::acls::delete(ctx, r)),
        RequestKind::DescribeConfigs(r) => {
            ResponseKind::DescribeConfigs(handlers::configs::describe(ctx, r))
        }
        _ => return Err(NoHandler),
    })
}

fn encode(
    api: ApiKey,
    version: i16,
    correlation_id: i32,
    response: &ResponseKind,
) -> Result<Vec<u8>, FrameError> {
    let mut out = BytesMut::new();
    let header = ResponseHeader::default().with_correlation_id(correlation_id);
    header
        .encode(&mut out, api.response_header_version(version))
        .and_then(|()| response.encode(&mut out, version))
        .map_err(|e| FrameError::Encode(api, e.to_string()))?;
    Ok(out.to_vec())
}
