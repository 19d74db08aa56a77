//! SASL authentication on a listener that requires it, as Apache 3.7's
//! `SaslServerAuthenticator` runs it: before a connection authenticates, it may send only
//! ApiVersions and SaslHandshake; after the handshake only SaslAuthenticate (or, after a v0
//! handshake, the raw tokens of the mechanism); anything else closes it. A failed
//! authentication is answered with SASL_AUTHENTICATION_FAILED (58), then the connection closes.
//!
//! Mechanisms: PLAIN (RFC 4616) and SCRAM-SHA-512 (RFC 5802, 7677), with Kafka's messages.

use std::collections::BTreeMap;
use std::sync::Arc;

use base64::Engine as _;
use bytes::{Bytes, BytesMut};
use hmac::{Hmac, Mac};
use kafka_protocol::messages::{
    ApiKey, RequestHeader, RequestKind, ResponseHeader, ResponseKind, SaslAuthenticateResponse,
    SaslHandshakeResponse,
};
use kafka_protocol::protocol::{Decodable, Encodable, StrBytes};
use sha2::{Digest, Sha512};

/// PLAIN.
pub const PLAIN: &str = "PLAIN";
/// SCRAM-SHA-512.
pub const SCRAM_SHA_512: &str = "SCRAM-SHA-512";
/// The mechanisms enabled, in the order SaslHandshake lists them (Apache lists
/// `sasl.enabled.mechanisms` in its order).
pub const MECHANISMS: [&str; 2] = [PLAIN, SCRAM_SHA_512];
/// SCRAM iterations (Kafka's minimum and its tools' default).
pub const SCRAM_ITERATIONS: u32 = 4096;

const UNSUPPORTED_SASL_MECHANISM: i16 = 33;
const ILLEGAL_SASL_STATE: i16 = 34;
const SASL_AUTHENTICATION_FAILED: i16 = 58;

/// A user who may authenticate, with every mechanism.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct User {
    /// User name; the principal is `User:<name>`.
    pub name: String,
    /// Password.
    pub password: String,
}

impl std::str::FromStr for User {
    type Err = String;
    /// `NAME=PASSWORD`.
    fn from_str(s: &str) -> Result<User, String> {
        match s.split_once('=') {
            Some((n, p)) if !n.is_empty() && !p.is_empty() => Ok(User {
                name: n.into(),
                password: p.into(),
            }),
            _ => Err(format!("'{s}': expected NAME=PASSWORD")),
        }
    }
}

/// What the broker keeps of a user: the password for PLAIN, the salted keys for SCRAM.
#[derive(Debug)]
struct Credential {
    password: String,
    salt: Vec<u8>,
    stored_key: Vec<u8>,
    server_key: Vec<u8>,
}

/// The users a listener authenticates.
#[derive(Debug, Default)]
pub struct Users(BTreeMap<String, Credential>);

type HmacSha512 = Hmac<Sha512>;

fn hmac(key: &[u8], data: &[u8]) -> Vec<u8> {
    let mut m = HmacSha512::new_from_slice(key).expect("HMAC takes any key length");
    m.update(data);
    m.finalize().into_bytes().to_vec()
}

/// SCRAM's SaltedPassword (PBKDF2 with HMAC-SHA-512).
pub fn salted_password(password: &str, salt: &[u8], iterations: u32) -> Vec<u8> {
    let mut out = vec![0u8; 64];
    pbkdf2::pbkdf2::<HmacSha512>(password.as_bytes(), salt, iterations, &mut out)
        .expect("HMAC takes any key length");
    out
}

impl Users {
    /// The credentials of `users` (a fresh SCRAM salt each).
    pub fn new(users: &[User]) -> Users {
        Users(
            users
                .iter()
                .map(|u| {
                    let salt = uuid::Uuid::new_v4().as_bytes().to_vec();
                    let salted = salted_password(&u.password, &salt, SCRAM_ITERATIONS);
                    let client_key = hmac(&salted, b"Client Key");
                    let credential = Credential {
                        password: u.password.clone(),
                        stored_key: Sha512::digest(&client_key).to_vec(),
                        server_key: hmac(&salted, b"Server Key"),
                        salt,
                    };
                    (u.name.clone(), credential)
                })
                .collect(),
        )
    }
}

/// Where a connection is in authentication.
#[derive(Debug)]
enum Stage {
    /// Only ApiVersions and SaslHandshake are accepted.
    Handshake,
    /// The mechanism is chosen: SaslAuthenticate next (or a raw token after a v0 handshake).
    Authenticate { mechanism: &'static str, raw: bool },
    /// SCRAM: the server-first message has gone; the client-final message next.
    ScramFinal {
        raw: bool,
        user: String,
        nonce: String,
        /// client-first-bare "," server-first, the start of SCRAM's AuthMessage.
        messages: String,
    },
    /// Authenticated as this principal: requests go to the handlers.
    Done(Arc<str>),
}

/// What to do with a frame on a connection that has not authenticated yet.
#[derive(Debug)]
pub enum Next {
    /// Handle it as usual, as this principal (ApiVersions before authentication is
    /// `User:ANONYMOUS`; every frame after authentication the user's).
    Pass(Arc<str>),
    /// Answer this (a SASL response frame, without the size prefix).
    Answer(Vec<u8>),
    /// Answer this, then close the connection: authentication failed.
    Fail(Vec<u8>, String),
    /// Close the connection without an answer.
    Close(String),
}

/// One connection's authentication.
#[derive(Debug)]
pub struct Authenticator {
    users: Arc<Users>,
    stage: Stage,
}

/// Why a SASL exchange failed: the message the client reads, and whether Apache words it as
/// its own (`SaslAuthenticationException`) or hides it behind the generic one.
enum Refusal {
    Shown(String),
    Hidden,
}

impl Authenticator {
    /// A connection that must authenticate against `users`.
    pub fn new(users: Arc<Users>) -> Authenticator {
        Authenticator {
            users,
            stage: Stage::Handshake,
        }
    }

    /// The principal, once authenticated.
    pub fn principal(&self) -> Option<Arc<str>> {
        match &self.stage {
            Stage::Done(p) => Some(p.clone()),
            _ => None,
        }
    }

    /// What to do with the next frame.
    pub fn next(&mut self, frame: &Bytes) -> Next {
        if let Stage::Done(p) = &self.stage {
            return Next::Pass(p.clone());
        }
        let raw = matches!(
            self.stage,
            Stage::Authenticate { raw: true, .. } | Stage::ScramFinal { raw: true, .. }
        );
        if raw {
            return self.token(None, frame.to_vec());
        }
        let (api, version, header, request) = match parse(frame) {
            Ok(parsed) => parsed,
            Err(reason) => return Next::Close(reason),
        };
        let during = match self.stage {
            Stage::Handshake => "handshake",
            _ => "authentication",
        };
        let unexpected = || {
            Next::Close(format!(
                "Unexpected Kafka request of type {api:?} during SASL {during}."
            ))
        };
        match (&self.stage, request) {
            (Stage::Handshake, RequestKind::ApiVersions(_)) => {
                Next::Pass(crate::auth::ANONYMOUS.into())
            }
            (Stage::Handshake, RequestKind::SaslHandshake(r)) => {
                let mechanisms = MECHANISMS.iter().map(|m| StrBytes::from_static_str(m));
                let mut response =
                    SaslHandshakeResponse::default().with_mechanisms(mechanisms.collect());
                let chosen = MECHANISMS.iter().find(|m| **m == r.mechanism.as_str());
                let frame = |response: SaslHandshakeResponse| {
                    encode(api, version, &header, ResponseKind::SaslHandshake(response))
                };
                match chosen {
                    Some(m) => {
                        self.stage = Stage::Authenticate {
                            mechanism: m,
                            raw: version == 0,
                        };
                        Next::Answer(frame(response))
                    }
                    None => {
                        response.error_code = UNSUPPORTED_SASL_MECHANISM;
                        Next::Fail(
                            frame(response),
                            format!("unsupported SASL mechanism '{}'", r.mechanism.as_str()),
                        )
                    }
                }
            }
            (
                Stage::Authenticate { raw: false, .. } | Stage::ScramFinal { raw: false, .. },
                RequestKind::SaslAuthenticate(r),
            ) => self.token(Some((api, version, header)), r.auth_bytes.to_vec()),
            _ => unexpected(),
        }
    }

    /// Evaluates one token of the chosen mechanism; `kafka` is the SaslAuthenticate it came
    /// in (`None`: a raw token after a v0 handshake).
    fn token(&mut self, kafka: Option<(ApiKey, i16, RequestHeader)>, token: Vec<u8>) -> Next {
        let stage = std::mem::replace(&mut self.stage, Stage::Handshake);
        let mechanism = match &stage {
            Stage::Authenticate { mechanism, .. } => *mechanism,
            _ => SCRAM_SHA_512,
        };
        let raw = kafka.is_none();
        let result = match stage {
            Stage::Authenticate {
                mechanism: PLAIN, ..
            } => self.plain(&token).map(|p| {
                self.stage = Stage::Done(p);
                Vec::new()
            }),
            Stage::Authenticate { .. } => self.scram_first(&token, raw).map(|(stage, reply)| {
                self.stage = stage;
                reply
            }),
            Stage::ScramFinal {
                user,
                nonce,
                messages,
                ..
            } => self
                .scram_final(&token, &nonce, &user, &messages)
                .inspect(|_| self.stage = Stage::Done(format!("User:{user}").into())),
            other => {
                self.stage = other;
                return Next::Close("no SASL exchange in progress".into());
            }
        };
        let Some((api, version, header)) = kafka else {
            return match result {
                Ok(reply) => Next::Answer(reply),
                Err(_) => Next::Close(format!("{mechanism} authentication failed")),
            };
        };
        let response = |r: SaslAuthenticateResponse| {
            encode(api, version, &header, ResponseKind::SaslAuthenticate(r))
        };
        match result {
            Ok(reply) => Next::Answer(response(
                SaslAuthenticateResponse::default().with_auth_bytes(Bytes::from(reply)),
            )),
            Err(refusal) => {
                let message = match refusal {
                    Refusal::Shown(m) => m,
                    Refusal::Hidden => format!(
                        "Authentication failed during authentication due to invalid credentials with SASL mechanism {mechanism}"
                    ),
                };
                Next::Fail(
                    response(
                        SaslAuthenticateResponse::default()
                            .with_error_code(SASL_AUTHENTICATION_FAILED)
                            .with_error_message(Some(StrBytes::from_string(message.clone()))),
                    ),
                    message,
                )
            }
        }
    }

    /// PLAIN: `authzid \0 user \0 password`.
    fn plain(&self, token: &[u8]) -> Result<Arc<str>, Refusal> {
        let shown = |m: &str| Refusal::Shown(m.to_owned());
        let text = String::from_utf8_lossy(token);
        let parts: Vec<&str> = text.split('\0').collect();
        let [authzid, user, password] = parts[..] else {
            return Err(Refusal::Shown(format!(
                "Invalid SASL/PLAIN response: expected 3 tokens, got {}",
                parts.len()
            )));
        };
        if user.is_empty() {
            return Err(shown("Authentication failed: username not specified"));
        }
        if password.is_empty() {
            return Err(shown("Authentication failed: password not specified"));
        }
        match self.users.0.get(user) {
            Some(c) if c.password == password => {}
            _ => return Err(shown("Authentication failed: Invalid username or password")),
        }
        if !authzid.is_empty() && authzid != user {
            return Err(shown(
                "Authentication failed: Client requested an authorization id that is different from username",
            ));
        }
        Ok(format!("User:{user}").into())
    }

    /// SCRAM client-first: `n,[a=authzid],n=user,r=nonce` → server-first.
    fn scram_first(&self, token: &[u8], raw: bool) -> Result<(Stage, Vec<u8>), Refusal> {
        let text = std::str::from_utf8(token).map_err(|_| Refusal::Hidden)?;
        let rest = text.strip_prefix("n,").ok_or(Refusal::Hidden)?;
        let (authzid, bare) = rest.split_once(',').ok_or(Refusal::Hidden)?;
        let attrs = attributes(bare);
        let user = attrs
            .get("n")
            .map(|n| n.replace("=2C", ",").replace("=3D", "="))
            .ok_or(Refusal::Hidden)?;
        let client_nonce = attrs.get("r").ok_or(Refusal::Hidden)?;
        if authzid.strip_prefix("a=").is_some_and(|a| a != user) {
            return Err(Refusal::Shown(
                "Authentication failed: Client requested an authorization id that is different from username".into(),
            ));
        }
        let credential = self.users.0.get(&user).ok_or(Refusal::Hidden)?;
        let nonce = format!("{client_nonce}{}", uuid::Uuid::new_v4().simple());
        let server_first = format!(
            "r={nonce},s={},i={SCRAM_ITERATIONS}",
            base64::engine::general_purpose::STANDARD.encode(&credential.salt)
        );
        let stage = Stage::ScramFinal {
            raw,
            user,
            nonce,
            messages: format!("{bare},{server_first}"),
        };
        Ok((stage, server_first.into_bytes()))
    }

    /// SCRAM client-final: `c=...,r=nonce,p=proof` → server-final `v=signature`.
    fn scram_final(
        &self,
        token: &[u8],
        nonce: &str,
        user: &str,
        messages: &str,
    ) -> Result<Vec<u8>, Refusal> {
        let text = std::str::from_utf8(token).map_err(|_| Refusal::Hidden)?;
        let (without_proof, proof) = text.rsplit_once(",p=").ok_or(Refusal::Hidden)?;
        let attrs = attributes(without_proof);
        if attrs.get("r").map(String::as_str) != Some(nonce) {
            return Err(Refusal::Hidden);
        }
        let proof = base64::engine::general_purpose::STANDARD
            .decode(proof)
            .map_err(|_| Refusal::Hidden)?;
        let credential = self.users.0.get(user).ok_or(Refusal::Hidden)?;
        let auth_message = format!("{messages},{without_proof}");
        let signature = hmac(&credential.stored_key, auth_message.as_bytes());
        if proof.len() != signature.len() {
            return Err(Refusal::Hidden);
        }
        let client_key: Vec<u8> = proof.iter().zip(&signature).map(|(p, s)| p ^ s).collect();
        if Sha512::digest(&client_key).as_slice() != credential.stored_key.as_slice() {
            return Err(Refusal::Hidden);
        }
        let server_signature = hmac(&credential.server_key, auth_message.as_bytes());
        Ok(format!(
            "v={}",
            base64::engine::general_purpose::STANDARD.encode(server_signature)
        )
        .into_bytes())
    }
}

/// `k=v,k=v` attributes of a SCRAM message.
fn attributes(text: &str) -> BTreeMap<&str, String> {
    text.split(',')
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k, v.to_owned()))
        .collect()
}

/// The API, version, header and request of a frame, or why it closes the connection.
fn parse(frame: &Bytes) -> Result<(ApiKey, i16, RequestHeader, RequestKind), String> {
    if frame.len() < 4 {
        return Err(format!("frame of {} bytes is too short", frame.len()));
    }
    let key = i16::from_be_bytes([frame[0], frame[1]]);
    let version = i16::from_be_bytes([frame[2], frame[3]]);
    let api = ApiKey::try_from(key).map_err(|_| format!("api key {key} is not served"))?;
    match crate::apis::served(api) {
        Some((min, max)) if (min..=max).contains(&version) => {}
        _ => return Err(format!("{api:?} v{version} is not served")),
    }
    let mut buf = frame.clone();
    let header = RequestHeader::decode(&mut buf, api.request_header_version(version))
        .map_err(|e| e.to_string())?;
    let request = RequestKind::decode(api, &mut buf, version).map_err(|e| e.to_string())?;
    Ok((api, version, header, request))
}

fn encode(api: ApiKey, version: i16, header: &RequestHeader, body: ResponseKind) -> Vec<u8> {
    let mut out = BytesMut::new();
    ResponseHeader::default()
        .with_correlation_id(header.correlation_id)
        .encode(&mut out, api.response_header_version(version))
        .and_then(|()| body.encode(&mut out, version))
        .expect("a SASL response encodes at a served version");
    out.to_vec()
}

/// The answer of a connection that is already authenticated (or needs no authentication) to
/// SaslHandshake or SaslAuthenticate, as Apache's KafkaApis gives it: ILLEGAL_SASL_STATE.
pub fn after_authentication(request: &RequestKind) -> Option<ResponseKind> {
    match request {
        RequestKind::SaslHandshake(_) => Some(ResponseKind::SaslHandshake(
            SaslHandshakeResponse::default().with_error_code(ILLEGAL_SASL_STATE),
        )),
        RequestKind::SaslAuthenticate(_) => Some(ResponseKind::SaslAuthenticate(
            SaslAuthenticateResponse::default()
                .with_error_code(ILLEGAL_SASL_STATE)
                .with_error_message(Some(StrBytes::from_static_str(
                    "SaslAuthenticate request received after successful authentication",
                ))),
        )),
        _ => None,
    }
}

/// The input format of the SASL fuzz target (`fuzz/fuzz_targets/sasl_frames.rs`): the frames
/// of one connection, each after its length as a big-endian u16; a last piece shorter than its
/// length is a frame of its own. Shared by the target, its seeds and their replay under
/// `cargo test`.
#[cfg(feature = "oracles")]
pub mod session_input {
    use std::sync::Arc;

    use bytes::Bytes;

    use super::{User, Users};

    /// The frames of an input.
    pub fn frames(input: &[u8]) -> Vec<Bytes> {
        let mut out = Vec::new();
        let mut rest = input;
        while rest.len() >= 2 {
            let len = usize::from(u16::from_be_bytes([rest[0], rest[1]]));
            let body = &rest[2..];
            let take = len.min(body.len());
            out.push(Bytes::copy_from_slice(&body[..take]));
            rest = &body[take..];
        }
        out
    }

    /// The input of `frames` (each at most 65,535 bytes).
    pub fn join(frames: &[Vec<u8>]) -> Vec<u8> {
        let mut out = Vec::new();
        for f in frames {
            let len = u16::try_from(f.len()).expect("a seed frame under 64 KiB");
            out.extend(len.to_be_bytes());
            out.extend(f);
        }
        out
    }

    /// The users the fuzzed broker knows: alice, password alice-secret (what the seeds log in
    /// with), and admin, its super user.
    pub fn users() -> Vec<User> {
        [("alice", "alice-secret"), ("admin", "admin-secret")]
            .iter()
            .map(|(n, p)| User {
                name: (*n).into(),
                password: (*p).into(),
            })
            .collect()
    }

    /// An authenticator for one fuzzed connection.
    pub fn credentials() -> Arc<Users> {
        Arc::new(Users::new(&users()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kafka_protocol::messages::{SaslAuthenticateRequest, SaslHandshakeRequest};

    fn frame(api: ApiKey, version: i16, request: RequestKind) -> Bytes {
        let mut out = BytesMut::new();
        RequestHeader::default()
            .with_request_api_key(api as i16)
            .with_request_api_version(version)
            .with_correlation_id(7)
            .encode(&mut out, api.request_header_version(version))
            .unwrap();
        request.encode(&mut out, version).unwrap();
        out.freeze()
    }

    fn handshake(m: &str) -> Bytes {
        frame(
            ApiKey::SaslHandshake,
            1,
            RequestKind::SaslHandshake(
                SaslHandshakeRequest::default().with_mechanism(StrBytes::from_string(m.into())),
            ),
        )
    }

    fn authenticate(bytes: &[u8]) -> Bytes {
        frame(
            ApiKey::SaslAuthenticate,
            2,
            RequestKind::SaslAuthenticate(
                SaslAuthenticateRequest::default().with_auth_bytes(Bytes::copy_from_slice(bytes)),
            ),
        )
    }

    fn users() -> Arc<Users> {
        Arc::new(Users::new(&[User {
            name: "alice".into(),
            password: "alice-secret".into(),
        }]))
    }

    fn authenticate_response(bytes: &[u8]) -> SaslAuthenticateResponse {
        let mut b = Bytes::copy_from_slice(bytes);
        ResponseHeader::decode(&mut b, ApiKey::SaslAuthenticate.response_header_version(2))
            .unwrap();
        SaslAuthenticateResponse::decode(&mut b, 2).unwrap()
    }

    #[test]
    fn plain_authenticates_a_user_and_refuses_a_wrong_password() {
        let mut a = Authenticator::new(users());
        assert!(matches!(a.next(&handshake(PLAIN)), Next::Answer(_)));
        assert!(matches!(
            a.next(&authenticate(b"\0alice\0alice-secret")),
            Next::Answer(_)
        ));
        assert_eq!(a.principal().as_deref(), Some("User:alice"));
        let mut b = Authenticator::new(users());
        b.next(&handshake(PLAIN));
        match b.next(&authenticate(b"\0alice\0wrong")) {
            Next::Fail(bytes, why) => {
                let r = authenticate_response(&bytes);
                assert_eq!(r.error_code, SASL_AUTHENTICATION_FAILED);
                assert!(why.contains("Invalid username or password"), "{why}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn only_api_versions_and_the_handshake_come_before_authentication() {
        let mut a = Authenticator::new(users());
        let metadata = frame(
            ApiKey::Metadata,
            12,
            RequestKind::Metadata(Default::default()),
        );
        match a.next(&metadata) {
            Next::Close(why) => assert!(why.contains("during SASL handshake"), "{why}"),
            other => panic!("{other:?}"),
        }
        assert!(matches!(a.next(&handshake("GSSAPI")), Next::Fail(..)));
    }

    #[test]
    fn scram_sha_512_proves_both_sides() {
        let mut a = Authenticator::new(users());
        a.next(&handshake(SCRAM_SHA_512));
        let client_first_bare = "n=alice,r=cnonce";
        let Next::Answer(first) =
            a.next(&authenticate(format!("n,,{client_first_bare}").as_bytes()))
        else {
            panic!("server-first expected")
        };
        let server_first =
            String::from_utf8(authenticate_response(&first).auth_bytes.to_vec()).unwrap();
        let attrs = attributes(&server_first);
        let salt = base64::engine::general_purpose::STANDARD
            .decode(&attrs["s"])
            .unwrap();
        let salted = salted_password("alice-secret", &salt, SCRAM_ITERATIONS);
        let client_key = hmac(&salted, b"Client Key");
        let stored = Sha512::digest(&client_key);
        let without_proof = format!("c=biws,r={}", attrs["r"]);
        let auth_message = format!("{client_first_bare},{server_first},{without_proof}");
        let signature = hmac(&stored, auth_message.as_bytes());
        let proof: Vec<u8> = client_key
            .iter()
            .zip(&signature)
            .map(|(a, b)| a ^ b)
            .collect();
        let last = format!(
            "{without_proof},p={}",
            base64::engine::general_purpose::STANDARD.encode(&proof)
        );
        let Next::Answer(fin) = a.next(&authenticate(last.as_bytes())) else {
            panic!("server-final expected")
        };
        let server_final =
            String::from_utf8(authenticate_response(&fin).auth_bytes.to_vec()).unwrap();
        let expected = hmac(&hmac(&salted, b"Server Key"), auth_message.as_bytes());
        assert_eq!(
            server_final,
            format!(
                "v={}",
                base64::engine::general_purpose::STANDARD.encode(expected)
            )
        );
        assert_eq!(a.principal().as_deref(), Some("User:alice"));
        // A wrong proof fails.
        let mut b = Authenticator::new(users());
        b.next(&handshake(SCRAM_SHA_512));
        let Next::Answer(first) = b.next(&authenticate(b"n,,n=alice,r=x")) else {
            panic!()
        };
        let sf = String::from_utf8(authenticate_response(&first).auth_bytes.to_vec()).unwrap();
        let r = &attributes(&sf)["r"];
        let bad = format!(
            "c=biws,r={r},p={}",
            base64::engine::general_purpose::STANDARD.encode([0u8; 64])
        );
        assert!(matches!(
            b.next(&authenticate(bad.as_bytes())),
            Next::Fail(..)
        ));
    }
}
