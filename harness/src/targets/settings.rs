//! A check of the broker settings the scenarios assume on a broker kconform did not configure.
//! Apache and kaas-ref are started with them ([`apache::SETTINGS`], each with kaas-ref's flag
//! and why); an external broker started with its own defaults (a reaper every 10 s, a 3 s
//! initial rebalance delay, 50 offsets partitions) answers the scenarios that depend on them
//! otherwise, and without this check nothing would say that the difference is its
//! configuration.

use kafka_protocol::messages::describe_configs_request::DescribeConfigsResource;
use kafka_protocol::messages::{ApiKey, DescribeConfigsRequest, RequestKind, ResponseKind};
use serde::Serialize;

use super::{apache, Running, TargetError};

/// Whether `property` is one the brokers are started with (for one broker or a cluster).
pub fn is_assumed(property: &str) -> bool {
    apache::cluster_settings(3)
        .iter()
        .any(|(k, _)| *k == property)
}

/// A setting of a broker that differs from what the scenarios assume.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Differs {
    /// Apache's property.
    pub property: String,
    /// The broker's value (null where it has none).
    pub found: Option<String>,
    /// What the scenarios assume.
    pub assumed: String,
}

/// What the check of a broker's settings found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Checked {
    /// The settings read (DescribeConfigs of the broker).
    pub read: usize,
    /// Those that differ.
    pub differs: Vec<Differs>,
    /// Why none could be read, when none could.
    pub unreadable: Option<String>,
}

impl Checked {
    /// One line for the report's origins.
    pub fn summary(&self) -> String {
        if let Some(why) = &self.unreadable {
            return format!("its settings cannot be read ({why}): the scenarios assume those `kconform settings` lists");
        }
        if self.differs.is_empty() {
            return format!(
                "its settings are those the scenarios assume ({} read)",
                self.read
            );
        }
        let each: Vec<String> = self
            .differs
            .iter()
            .map(|d| {
                format!(
                    "{} is {} (the scenarios assume {})",
                    d.property,
                    d.found.as_deref().unwrap_or("unset"),
                    d.assumed
                )
            })
            .collect();
        format!(
            "configured otherwise than the scenarios assume: {}; their differences there may be its configuration's (kconform settings says how to start it)",
            each.join("; ")
        )
    }
}

/// The newest DescribeConfigs version this check sends (Apache 3.7 serves 0 to 4).
const VERSION: i16 = 4;

/// BROKER, as DescribeConfigs names resource types.
const BROKER: i8 = 4;

impl Running {
    /// Reads the broker's settings the scenarios assume (DescribeConfigs of the broker it
    /// bootstraps from) and names those that differ; a broker that does not serve
    /// DescribeConfigs is said to be unreadable.
    pub async fn check_settings(
        &self,
        deadline: std::time::Duration,
    ) -> Result<Checked, TargetError> {
        let mut out = Checked::default();
        let (mut conn, served) = self.versions(deadline).await?;
        let version = match Running::version_to_send(&served, ApiKey::DescribeConfigs, 0, VERSION) {
            Ok(version) => version,
            Err(why) => {
                out.unreadable = Some(why);
                return Ok(out);
            }
        };
        // The broker resource is named by the node id its own Metadata gives.
        let node = match super::brokers::node_id_at(self.addr, deadline, self.secured).await {
            Ok(node) => node,
            Err(why) => {
                out.unreadable = Some(why);
                return Ok(out);
            }
        };
        let assumed = apache::settings_for(self.brokers);
        let request = DescribeConfigsRequest::default().with_resources(vec![
            DescribeConfigsResource::default()
                .with_resource_type(BROKER)
                .with_resource_name(node.to_string().into())
                .with_configuration_keys(Some(
                    assumed
                        .iter()
                        .map(|(k, _)| (*k).to_string().into())
                        .collect(),
                )),
        ]);
        let answer = conn
            .send(
                ApiKey::DescribeConfigs,
                version,
                &RequestKind::DescribeConfigs(request),
            )
            .await;
        let result = match answer {
            Ok(ResponseKind::DescribeConfigs(r)) => r,
            Ok(_) => {
                out.unreadable = Some("DescribeConfigs got another API's answer".into());
                return Ok(out);
            }
            Err(e) => {
                out.unreadable = Some(format!("DescribeConfigs got {e}"));
                return Ok(out);
            }
        };
        let Some(resource) = result.results.first() else {
            out.unreadable = Some("DescribeConfigs answered no resource".into());
            return Ok(out);
        };
        if resource.error_code != 0 {
            out.unreadable = Some(format!(
                "DescribeConfigs answered {}",
                crate::wire::error_codes::label(resource.error_code)
            ));
            return Ok(out);
        }
        for (property, value) in &assumed {
            let found = resource
                .configs
                .iter()
                .find(|c| c.name.as_str() == *property);
            if found.is_some() {
                out.read += 1;
            }
            let found = found.and_then(|c| c.value.as_ref().map(|v| v.to_string()));
            // Properties a broker does not have (kaas keeps no transaction-state topic) are
            // not differences: only a value it has and that differs is.
            if let Some(found) = found.filter(|f| f != value) {
                out.differs.push(Differs {
                    property: (*property).into(),
                    found: Some(found),
                    assumed: value.clone(),
                });
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_summary_names_each_setting_that_differs() {
        let checked = Checked {
            read: 3,
            differs: vec![Differs {
                property: "transaction.abort.timed.out.transaction.cleanup.interval.ms".into(),
                found: Some("10000".into()),
                assumed: "500".into(),
            }],
            unreadable: None,
        };
        assert!(checked.summary().contains(
            "transaction.abort.timed.out.transaction.cleanup.interval.ms is 10000 (the scenarios assume 500)"
        ));
        let unreadable = Checked {
            unreadable: Some("it does not serve DescribeConfigs".into()),
            ..Checked::default()
        };
        assert!(unreadable.summary().contains("kconform settings"));
    }
}
