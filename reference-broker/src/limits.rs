//! Bounds on what one request can make the broker allocate, create or keep: a request over a
//! bound is refused before any work is done, with the error code Apache uses for that class of
//! refusal, and the broker keeps answering.
//!
//! Apache 3.7 has few such bounds (its controller ran out of memory on a CreateTopics asking for
//! 67 million partitions, answered -1 and reverted); where a later Apache added one, kaas-ref
//! refuses the way it does:
//! - too much for one request (partitions or topics in a CreateTopics, configs of a topic, and
//!   by the same token partitions, groups and staged offsets of one transaction): POLICY_VIOLATION
//!   (44), "Excessively large number of partitions per request." being Apache 3.9's message
//!   (KAFKA-17870, its 10,000-records-per-operation limit);
//! - a partition count no topic may have: INVALID_PARTITIONS (37); an over-long config value:
//!   INVALID_CONFIG (40);
//! - a group at `group.max.size`: GROUP_MAX_SIZE_REACHED (81), Apache's own bound;
//! - connections over `max.connections`: closed as they are accepted, as Apache closes them;
//! - requests in flight on one connection: the broker stops reading that socket until answers
//!   go out (back-pressure, no refusal).

use crate::errors;

/// Every bound, each a `kaas-ref` flag of the same name. The defaults are far above what any
/// client or scenario needs and far below what hurts the broker.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct Limits {
    /// Partitions one topic may have (CreateTopics, `--topics`): INVALID_PARTITIONS above it.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = Limits::default().max_partitions_per_topic))]
    pub max_partitions_per_topic: i32,
    /// Partitions one CreateTopics (or one Metadata's auto-creation) may create in all:
    /// POLICY_VIOLATION for every topic of the request above it. Apache 3.9's limit: 10,000.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = Limits::default().max_partitions_per_request))]
    pub max_partitions_per_request: i64,
    /// Topics one CreateTopics or DeleteTopics may name, and one Metadata may auto-create:
    /// POLICY_VIOLATION for every topic above it.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = Limits::default().max_topics_per_request))]
    pub max_topics_per_request: usize,
    /// Config entries one topic may be given: POLICY_VIOLATION above it.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = Limits::default().max_configs_per_topic))]
    pub max_configs_per_topic: usize,
    /// Bytes of one config value: INVALID_CONFIG above it.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = Limits::default().max_config_value_bytes))]
    pub max_config_value_bytes: usize,
    /// Partitions one transaction may hold: AddPartitionsToTxn answers POLICY_VIOLATION for
    /// each partition of a request that would take it over.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = Limits::default().max_partitions_per_txn))]
    pub max_partitions_per_txn: usize,
    /// Consumer groups one transaction may hold: AddOffsetsToTxn answers POLICY_VIOLATION.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = Limits::default().max_groups_per_txn))]
    pub max_groups_per_txn: usize,
    /// Offsets one transaction may stage (TxnOffsetCommit): POLICY_VIOLATION for each
    /// partition of a request that would take it over.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = Limits::default().max_staged_offsets_per_txn))]
    pub max_staged_offsets_per_txn: usize,
    /// Members one consumer group may have (Apache's `group.max.size`): JoinGroup answers
    /// GROUP_MAX_SIZE_REACHED.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = Limits::default().max_group_members))]
    pub max_group_members: usize,
    /// Producers whose state (epoch, sequences, open transaction) one partition keeps: a new
    /// producer beyond it is refused; Produce answers POLICY_VIOLATION for that partition.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = Limits::default().max_producers_per_partition))]
    pub max_producers_per_partition: usize,
    /// Open client connections (Apache's `max.connections`): more are closed on accept.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = Limits::default().max_connections))]
    pub max_connections: usize,
    /// Requests one connection may have in flight (answered, their answers not yet written):
    /// beyond it the broker reads no further request from that connection until one goes out.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = Limits::default().max_in_flight_per_connection))]
    pub max_in_flight_per_connection: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_partitions_per_topic: 10_000,
            max_partitions_per_request: 10_000,
            max_topics_per_request: 1_000,
            max_configs_per_topic: 100,
            max_config_value_bytes: 64 * 1024,
            max_partitions_per_txn: 10_000,
            max_groups_per_txn: 1_000,
            max_staged_offsets_per_txn: 10_000,
            max_group_members: 10_000,
            max_producers_per_partition: 10_000,
            max_connections: 1_000,
            max_in_flight_per_connection: 8,
        }
    }
}

/// Apache 3.9's message for a CreateTopics over its partitions-per-request limit.
pub const TOO_MANY_PARTITIONS: &str = "Excessively large number of partitions per request.";

/// A request over a bound: the code to answer and, where the version has a field for it, the
/// message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The wire error code.
    pub code: i16,
    /// What was over which bound, naming the flag that raises it.
    pub message: String,
}

impl Refusal {
    fn policy(message: String) -> Refusal {
        Refusal {
            code: errors::POLICY_VIOLATION,
            message,
        }
    }
}

impl Limits {
    /// CreateTopics as a whole: topics named and partitions asked for in all (each topic's
    /// count as it will be created, invalid ones not counted).
    pub fn check_create_request(&self, topics: usize, partitions: i64) -> Result<(), Refusal> {
        if topics > self.max_topics_per_request {
            return Err(Refusal::policy(format!(
                "Excessively large number of topics per request: {topics} above {} \
                 (--max-topics-per-request).",
                self.max_topics_per_request
            )));
        }
        if partitions > self.max_partitions_per_request {
            return Err(Refusal::policy(format!(
                "{TOO_MANY_PARTITIONS} {partitions} above {} (--max-partitions-per-request).",
                self.max_partitions_per_request
            )));
        }
        Ok(())
    }

    /// One topic to be created: its partition count and configs.
    pub fn check_topic(
        &self,
        partitions: i32,
        configs: &[(String, Option<String>)],
    ) -> Result<(), Refusal> {
        if partitions > self.max_partitions_per_topic {
            return Err(Refusal {
                code: errors::INVALID_PARTITIONS,
                message: format!(
                    "Number of partitions {partitions} is above this broker's limit of {} \
                     (--max-partitions-per-topic).",
                    self.max_partitions_per_topic
                ),
            });
        }
        if configs.len() > self.max_configs_per_topic {
            return Err(Refusal::policy(format!(
                "{} configs for one topic, above {} (--max-configs-per-topic).",
                configs.len(),
                self.max_configs_per_topic
            )));
        }
        if let Some((name, value)) = configs.iter().find_map(|(n, v)| {
            v.as_ref()
                .filter(|v| v.len() > self.max_config_value_bytes)
                .map(|v| (n, v))
        }) {
            return Err(Refusal {
                code: errors::INVALID_CONFIG,
                message: format!(
                    "The value of {name} is {} bytes, above {} (--max-config-value-bytes).",
                    value.len(),
                    self.max_config_value_bytes
                ),
            });
        }
        Ok(())
    }
}

/// A count that one request would take to `after`, against `max` of the flag `flag`.
pub fn check_count(what: &str, after: usize, max: usize, flag: &str) -> Result<(), Refusal> {
    match after > max {
        true => Err(Refusal::policy(format!(
            "{what}: {after} would be above {max} (--{flag})."
        ))),
        false => Ok(()),
    }
}
