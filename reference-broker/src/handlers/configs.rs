//! DescribeConfigs, for a broker's own settings: what a harness or an operator reads to see
//! how the broker was started (kconform checks an external broker's settings before a run).
//! kaas-ref has the settings its flags give (the reaper interval, the initial rebalance delay,
//! the offsets topic's partitions, topic defaults); a broker resource answers those, each as
//! Apache's property. Other resource types (topics, loggers, client metrics) are answered
//! INVALID_REQUEST: kaas-ref describes its broker configs only.

use kafka_protocol::messages::describe_configs_response::{
    DescribeConfigsResourceResult, DescribeConfigsResult,
};
use kafka_protocol::messages::{DescribeConfigsRequest, DescribeConfigsResponse};
use kafka_protocol::protocol::StrBytes;

use super::Ctx;
use crate::auth::{Operation, Resource};
use crate::config::BrokerConfig;

/// BROKER, as DescribeConfigs names resource types.
const BROKER: i8 = 4;
/// A setting given at start-up (Apache: in server.properties).
const STATIC_BROKER_CONFIG: i8 = 4;
/// A setting at its default.
const DEFAULT_CONFIG: i8 = 5;
/// Config types (v3+).
const BOOLEAN: i8 = 1;
const INT: i8 = 3;
const SHORT: i8 = 4;

/// INVALID_REQUEST, CLUSTER_AUTHORIZATION_FAILED.
const INVALID_REQUEST: i16 = 42;
const CLUSTER_AUTHORIZATION_FAILED: i16 = 31;

/// (Apache's property, kaas-ref's value, Apache's default, config type) of every setting
/// kaas-ref has.
fn settings(config: &BrokerConfig) -> Vec<(&'static str, String, &'static str, i8)> {
    vec![
        (
            "transaction.abort.timed.out.transaction.cleanup.interval.ms",
            config.txn_reaper_interval.as_millis().to_string(),
            "10000",
            INT,
        ),
        (
            "group.initial.rebalance.delay.ms",
            config.group_initial_rebalance_delay.as_millis().to_string(),
            "3000",
            INT,
        ),
        (
            "offsets.topic.num.partitions",
            config.offsets_topic_partitions.to_string(),
            "50",
            INT,
        ),
        (
            "auto.create.topics.enable",
            config.auto_create_topics.to_string(),
            "true",
            BOOLEAN,
        ),
        (
            "num.partitions",
            config.default_partitions.to_string(),
            "1",
            INT,
        ),
        (
            "default.replication.factor",
            config.default_replication_factor.to_string(),
            "1",
            SHORT,
        ),
    ]
}

/// Answers DescribeConfigs.
pub fn describe(ctx: &Ctx, req: DescribeConfigsRequest) -> DescribeConfigsResponse {
    let results = req
        .resources
        .into_iter()
        .map(|r| {
            let mut out = DescribeConfigsResult::default()
                .with_resource_type(r.resource_type)
                .with_resource_name(r.resource_name.clone());
            let fail = |out: DescribeConfigsResult, code: i16, message: String| {
                out.with_error_code(code)
                    .with_error_message(Some(StrBytes::from_string(message)))
            };
            if r.resource_type != BROKER {
                return fail(
                    out,
                    INVALID_REQUEST,
                    "kaas-ref describes broker configs only".into(),
                );
            }
            if !ctx.allowed(Operation::DescribeConfigs, Resource::Cluster) {
                return out.with_error_code(CLUSTER_AUTHORIZATION_FAILED);
            }
            let id = ctx.state.config.broker_id.to_string();
            match r.resource_name.as_str() {
                // The cluster-wide dynamic defaults: kaas-ref has none.
                "" => return out,
                name if name == id => {}
                name => {
                    return fail(
                        out,
                        INVALID_REQUEST,
                        format!(
                        "Unexpected broker id, expected {id} or empty string, but received {name}"
                    ),
                    )
                }
            }
            let wanted = |name: &str| {
                r.configuration_keys
                    .as_ref()
                    .is_none_or(|keys| keys.iter().any(|k| k.as_str() == name))
            };
            let v1 = ctx.version >= 1;
            out.configs = settings(&ctx.state.config)
                .into_iter()
                .filter(|(name, ..)| wanted(name))
                .map(|(name, value, default, kind)| {
                    let is_default = value == default;
                    DescribeConfigsResourceResult::default()
                        .with_name(StrBytes::from_static_str(name))
                        .with_value(Some(StrBytes::from_string(value)))
                        .with_read_only(true)
                        .with_is_default(!v1 && is_default)
                        .with_config_source(match is_default {
                            true => DEFAULT_CONFIG,
                            false => STATIC_BROKER_CONFIG,
                        })
                        .with_config_type(kind)
                })
                .collect();
            out
        })
        .collect();
    DescribeConfigsResponse::default().with_results(results)
}
