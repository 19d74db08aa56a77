//! The `transaction.version` of a running Apache, read from ApiVersions and set through the
//! Admin API (UpdateFeatures): how the container backend gives a 4.x broker the transaction
//! version asked for, since the apache/kafka image formats its own storage with its release's
//! defaults (the jvm backend formats storage as asked instead).

use std::time::{Duration, Instant};

use kafka_protocol::messages::update_features_request::FeatureUpdateKey;
use kafka_protocol::messages::{
    ApiKey, ApiVersionsRequest, RequestKind, ResponseKind, UpdateFeaturesRequest,
};
use kafka_protocol::protocol::StrBytes;

use crate::wire::client::Connection;

/// The feature KIP-890 part 2 turns on at level 2.
pub const TRANSACTION_VERSION: &str = "transaction.version";

/// The finalized level of `transaction.version` (ApiVersions v3); 0 where the broker finalizes
/// none (3.x).
pub async fn transaction_version(conn: &mut Connection) -> Result<i16, String> {
    let request = ApiVersionsRequest::default()
        .with_client_software_name(StrBytes::from_static_str("kconform"))
        .with_client_software_version(StrBytes::from_static_str(env!("CARGO_PKG_VERSION")));
    match conn
        .send(ApiKey::ApiVersions, 3, &RequestKind::ApiVersions(request))
        .await
        .map_err(|e| format!("ApiVersions: {e}"))?
    {
        ResponseKind::ApiVersions(r) if r.error_code == 0 => Ok(r
            .finalized_features
            .iter()
            .find(|f| f.name.as_str() == TRANSACTION_VERSION)
            .map_or(0, |f| f.max_version_level)),
        ResponseKind::ApiVersions(r) => Err(format!("ApiVersions: error {}", r.error_code)),
        other => Err(format!("ApiVersions: answered {other:?}")),
    }
}

/// Sets `transaction.version` to `level` (an upgrade, or a safe downgrade) unless it is there
/// already, then waits, within `deadline`, until the broker reports it finalized.
pub async fn set_transaction_version(
    conn: &mut Connection,
    level: i16,
    deadline: Duration,
) -> Result<(), String> {
    let now = transaction_version(conn).await?;
    if now == level {
        return Ok(());
    }
    // UPGRADE (1) or SAFE_DOWNGRADE (2), as kafka-features.sh asks for them.
    let upgrade_type = if level > now { 1 } else { 2 };
    let request = UpdateFeaturesRequest::default()
        .with_timeout_ms(deadline.as_millis().min(i32::MAX as u128) as i32)
        .with_feature_updates(vec![FeatureUpdateKey::default()
            .with_feature(StrBytes::from_static_str(TRANSACTION_VERSION))
            .with_max_version_level(level)
            .with_upgrade_type(upgrade_type)]);
    let refused = |code: i16, message: Option<&StrBytes>| {
        format!(
            "UpdateFeatures {TRANSACTION_VERSION} {now} → {level}: error {code} ({})",
            message.map_or("no message", |m| m.as_str())
        )
    };
    match conn
        .send(
            ApiKey::UpdateFeatures,
            1,
            &RequestKind::UpdateFeatures(request),
        )
        .await
        .map_err(|e| format!("UpdateFeatures: {e}"))?
    {
        ResponseKind::UpdateFeatures(r) if r.error_code != 0 => {
            return Err(refused(r.error_code, r.error_message.as_ref()))
        }
        ResponseKind::UpdateFeatures(r) => {
            if let Some(x) = r.results.iter().find(|x| x.error_code != 0) {
                return Err(refused(x.error_code, x.error_message.as_ref()));
            }
        }
        other => return Err(format!("UpdateFeatures: answered {other:?}")),
    }
    // The controller finalizes it; the broker reports it once its metadata has caught up.
    let until = Instant::now() + deadline;
    loop {
        let seen = transaction_version(conn).await?;
        if seen == level {
            return Ok(());
        }
        if Instant::now() >= until {
            return Err(format!(
                "{TRANSACTION_VERSION} still {seen} {:.0} s after it was set to {level}",
                deadline.as_secs_f64()
            ));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
