//! The client side of SASL: a [`Connection`] logs in as a user before a scenario's requests,
//! with PLAIN or SCRAM-SHA-512 (RFC 5802), through SaslHandshake v1 and SaslAuthenticate v2.
//! Written here from the RFCs, not shared with kaas-ref's server side, so that each checks
//! the other (and Apache checks both).

use base64::Engine as _;
use bytes::Bytes;
use hmac::{Hmac, Mac};
use kafka_protocol::messages::{
    ApiKey, RequestKind, ResponseKind, SaslAuthenticateRequest, SaslHandshakeRequest,
};
use kafka_protocol::protocol::StrBytes;
use sha2::{Digest, Sha512};

use crate::wire::client::{ClientError, Connection};

/// PLAIN.
pub const PLAIN: &str = "PLAIN";
/// SCRAM-SHA-512.
pub const SCRAM_SHA_512: &str = "SCRAM-SHA-512";

type HmacSha512 = Hmac<Sha512>;

fn hmac(key: &[u8], data: &[u8]) -> Vec<u8> {
    let mut m = HmacSha512::new_from_slice(key).expect("HMAC takes any key length");
    m.update(data);
    m.finalize().into_bytes().to_vec()
}

fn b64() -> base64::engine::GeneralPurpose {
    base64::engine::general_purpose::STANDARD
}

/// SCRAM-SHA-512's SaltedPassword: PBKDF2 with HMAC-SHA-512 (RFC 5802), what a broker keeps of
/// a password (AlterUserScramCredentials sends it) and what the client proves it knows.
pub fn salted_password(password: &str, salt: &[u8], iterations: u32) -> Vec<u8> {
    let mut salted = vec![0u8; 64];
    pbkdf2::pbkdf2::<HmacSha512>(password.as_bytes(), salt, iterations, &mut salted)
        .expect("HMAC takes any key length");
    salted
}

/// Logs `conn` in as `user` with `password` by `mechanism` (PLAIN or SCRAM-SHA-512).
pub async fn authenticate(
    conn: &mut Connection,
    mechanism: &str,
    user: &str,
    password: &str,
) -> Result<(), ClientError> {
    let failed = |reason: String| ClientError::Authentication {
        user: user.into(),
        mechanism: mechanism.into(),
        reason,
    };
    let handshake =
        SaslHandshakeRequest::default().with_mechanism(StrBytes::from_string(mechanism.to_owned()));
    match conn
        .send(
            ApiKey::SaslHandshake,
            1,
            &RequestKind::SaslHandshake(handshake),
        )
        .await?
    {
        ResponseKind::SaslHandshake(r) if r.error_code == 0 => {}
        ResponseKind::SaslHandshake(r) => {
            return Err(failed(format!(
                "SaslHandshake answered error {} (the broker enables {:?})",
                r.error_code,
                r.mechanisms.iter().map(|m| m.as_str()).collect::<Vec<_>>()
            )))
        }
        other => return Err(failed(format!("SaslHandshake answered {other:?}"))),
    }
    match mechanism {
        PLAIN => {
            exchange(conn, format!("\0{user}\0{password}").into_bytes())
                .await
                .map_err(|e| lift(e, &failed))?;
            Ok(())
        }
        SCRAM_SHA_512 => scram(conn, user, password)
            .await
            .map_err(|e| lift(e, &failed)),
        other => Err(failed(format!(
            "kconform speaks {PLAIN} and {SCRAM_SHA_512}, not {other}"
        ))),
    }
}

/// A failure inside the exchange: a transport error stays one, the rest names the login.
enum Step {
    Client(ClientError),
    Refused(String),
}

fn lift(e: Step, failed: &impl Fn(String) -> ClientError) -> ClientError {
    match e {
        Step::Client(c) => c,
        Step::Refused(r) => failed(r),
    }
}

/// One SaslAuthenticate round: the token out, the broker's token back.
async fn exchange(conn: &mut Connection, token: Vec<u8>) -> Result<Vec<u8>, Step> {
    let request = SaslAuthenticateRequest::default().with_auth_bytes(Bytes::from(token));
    match conn
        .send(
            ApiKey::SaslAuthenticate,
            2,
            &RequestKind::SaslAuthenticate(request),
        )
        .await
        .map_err(Step::Client)?
    {
        ResponseKind::SaslAuthenticate(r) if r.error_code == 0 => Ok(r.auth_bytes.to_vec()),
        ResponseKind::SaslAuthenticate(r) => Err(Step::Refused(format!(
            "SaslAuthenticate answered error {}: {}",
            r.error_code,
            r.error_message.as_deref().unwrap_or("(no message)")
        ))),
        other => Err(Step::Refused(format!(
            "SaslAuthenticate answered {other:?}"
        ))),
    }
}

/// The client's side of SCRAM-SHA-512, the server's signature checked at the end.
async fn scram(conn: &mut Connection, user: &str, password: &str) -> Result<(), Step> {
    let nonce = uuid::Uuid::new_v4().simple().to_string();
    let name = user.replace('=', "=3D").replace(',', "=2C");
    let first_bare = format!("n={name},r={nonce}");
    let server_first = exchange(conn, format!("n,,{first_bare}").into_bytes()).await?;
    let server_first = String::from_utf8(server_first)
        .map_err(|_| Step::Refused("the server-first message is not UTF-8".into()))?;
    let attr = |k: &str| {
        server_first
            .split(',')
            .find_map(|kv| kv.strip_prefix(k).and_then(|v| v.strip_prefix('=')))
            .map(str::to_owned)
            .ok_or_else(|| Step::Refused(format!("server-first '{server_first}' has no {k}=")))
    };
    let (full_nonce, salt, iterations) = (attr("r")?, attr("s")?, attr("i")?);
    if !full_nonce.starts_with(&nonce) {
        return Err(Step::Refused(
            "the server's nonce does not extend ours".into(),
        ));
    }
    let salt = b64()
        .decode(&salt)
        .map_err(|e| Step::Refused(format!("salt: {e}")))?;
    let iterations: u32 = iterations
        .parse()
        .map_err(|_| Step::Refused(format!("iterations '{iterations}'")))?;
    let salted = salted_password(password, &salt, iterations);
    let client_key = hmac(&salted, b"Client Key");
    let stored_key = Sha512::digest(&client_key);
    let without_proof = format!("c=biws,r={full_nonce}");
    let auth_message = format!("{first_bare},{server_first},{without_proof}");
    let signature = hmac(&stored_key, auth_message.as_bytes());
    let proof: Vec<u8> = client_key
        .iter()
        .zip(&signature)
        .map(|(k, s)| k ^ s)
        .collect();
    let server_final = exchange(
        conn,
        format!("{without_proof},p={}", b64().encode(proof)).into_bytes(),
    )
    .await?;
    let expected = hmac(&hmac(&salted, b"Server Key"), auth_message.as_bytes());
    match String::from_utf8_lossy(&server_final).strip_prefix("v=") {
        Some(v) if b64().decode(v).ok().as_deref() == Some(expected.as_slice()) => Ok(()),
        _ => Err(Step::Refused(format!(
            "the server's final message '{}' does not prove it knows the password",
            String::from_utf8_lossy(&server_final)
        ))),
    }
}

/// A connection to `addr` logged in as the super user ([`crate::security::SUPER_USER`]) with
/// PLAIN: what sets up ACLs and SCRAM credentials, and reads a secured cluster's Metadata.
pub async fn super_user(
    addr: std::net::SocketAddr,
    deadline: std::time::Duration,
) -> Result<Connection, String> {
    use crate::security::{password, SUPER_USER};
    let mut conn = Connection::connect(addr, deadline)
        .await
        .map_err(|e| e.to_string())?;
    authenticate(
        &mut conn,
        PLAIN,
        SUPER_USER,
        password(SUPER_USER).unwrap_or_default(),
    )
    .await
    .map_err(|e| e.to_string())?;
    Ok(conn)
}

/// SCRAM's iterations for the credentials kconform sets (Kafka's minimum, its tools' default).
pub const SCRAM_ITERATIONS: i32 = 4096;

/// Gives every user SCRAM-SHA-512 credentials over the wire (AlterUserScramCredentials, as the
/// super user logged in with PLAIN): how a broker whose storage was formatted without them
/// (the container backend's) gets them.
pub async fn upsert_scram_users(
    addr: std::net::SocketAddr,
    deadline: std::time::Duration,
) -> Result<(), String> {
    use kafka_protocol::messages::alter_user_scram_credentials_request::ScramCredentialUpsertion;
    use kafka_protocol::messages::{
        AlterUserScramCredentialsRequest, ApiKey, RequestKind, ResponseKind,
    };
    use kafka_protocol::protocol::StrBytes;
    let mut conn = super_user(addr, deadline).await?;
    let upsertions = crate::security::USERS
        .iter()
        .map(|(user, password)| {
            let salt = uuid::Uuid::new_v4().as_bytes().to_vec();
            let salted = salted_password(password, &salt, SCRAM_ITERATIONS as u32);
            ScramCredentialUpsertion::default()
                .with_name(StrBytes::from_static_str(user))
                .with_mechanism(2) // SCRAM-SHA-512
                .with_iterations(SCRAM_ITERATIONS)
                .with_salt(salt.into())
                .with_salted_password(salted.into())
        })
        .collect();
    let request = RequestKind::AlterUserScramCredentials(
        AlterUserScramCredentialsRequest::default().with_upsertions(upsertions),
    );
    match conn
        .send(ApiKey::AlterUserScramCredentials, 0, &request)
        .await
        .map_err(|e| format!("AlterUserScramCredentials: {e}"))?
    {
        ResponseKind::AlterUserScramCredentials(r) => {
            match r.results.iter().find(|x| x.error_code != 0) {
                Some(x) => Err(format!(
                    "AlterUserScramCredentials refused {}: error {} ({})",
                    x.user.as_str(),
                    x.error_code,
                    x.error_message.as_deref().unwrap_or("no message")
                )),
                None => Ok(()),
            }
        }
        other => Err(format!("AlterUserScramCredentials answered {other:?}")),
    }
}
