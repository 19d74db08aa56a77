//! Requests built from a step's TOML fields (after variable substitution), as kafka-protocol
//! messages. Field names are Apache's, in snake_case. A nullable string field left out is null.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;

/// A variable's value: captured from a response, or a unique name.
#[derive(Debug, Clone, PartialEq)]
pub enum Var {
    /// Text.
    Str(String),
    /// A number.
    Int(i64),
}

/// Variables in scope for a scenario run.
pub type Vars = BTreeMap<String, Var>;

/// Replaces `${name}` in every string of `value`; a string that is exactly `${name}` of a
/// number becomes that number.
pub fn substitute(value: &toml::Value, vars: &Vars) -> Result<toml::Value, String> {
    Ok(match value {
        toml::Value::String(s) => {
            if let Some(name) = s.strip_prefix("${").and_then(|r| r.strip_suffix('}')) {
                match vars.get(name) {
                    Some(Var::Int(i)) => return Ok(toml::Value::Integer(*i)),
                    Some(Var::Str(v)) => return Ok(toml::Value::String(v.clone())),
                    None => return Err(format!("unknown variable ${{{name}}}")),
                }
            }
            let mut out = s.clone();
            for (k, v) in vars {
                let text = match v {
                    Var::Str(s) => s.clone(),
                    Var::Int(i) => i.to_string(),
                };
                out = out.replace(&format!("${{{k}}}"), &text);
            }
            if out.contains("${") {
                return Err(format!("unknown variable in '{s}'"));
            }
            toml::Value::String(out)
        }
        toml::Value::Array(a) => toml::Value::Array(
            a.iter()
                .map(|v| substitute(v, vars))
                .collect::<Result<_, _>>()?,
        ),
        toml::Value::Table(t) => toml::Value::Table(
            t.iter()
                .map(|(k, v)| Ok((k.clone(), substitute(v, vars)?)))
                .collect::<Result<_, String>>()?,
        ),
        other => other.clone(),
    })
}

/// A request table as the builder reads it: every key read is noted (`topics[].name`), so
/// that a key no version of the API reads, a typo, is refused instead of silently dropped.
struct Fields<'a> {
    table: &'a toml::Table,
    /// Where this table sits: "" for the request, `topics[].` for each of its topics.
    at: String,
    read: &'a RefCell<BTreeSet<String>>,
}

impl<'a> Fields<'a> {
    fn new(table: &'a toml::Table, read: &'a RefCell<BTreeSet<String>>) -> Fields<'a> {
        Fields {
            table,
            at: String::new(),
            read,
        }
    }

    /// The value of `key`, noted as read.
    fn get(&self, key: &str) -> Option<&'a toml::Value> {
        self.read.borrow_mut().insert(format!("{}{key}", self.at));
        self.table.get(key)
    }

    fn int(&self, key: &str, default: i64) -> Result<i64, String> {
        match self.get(key) {
            None => Ok(default),
            Some(toml::Value::Integer(i)) => Ok(*i),
            Some(other) => Err(format!("{key}: expected an integer, got {other}")),
        }
    }
    fn i32(&self, key: &str, default: i32) -> Result<i32, String> {
        let v = self.int(key, default.into())?;
        i32::try_from(v).map_err(|_| format!("{key}: {v} is not an int32"))
    }
    fn i16(&self, key: &str, default: i16) -> Result<i16, String> {
        let v = self.int(key, default.into())?;
        i16::try_from(v).map_err(|_| format!("{key}: {v} is not an int16"))
    }
    fn boolean(&self, key: &str, default: bool) -> Result<bool, String> {
        match self.get(key) {
            None => Ok(default),
            Some(toml::Value::Boolean(b)) => Ok(*b),
            Some(other) => Err(format!("{key}: expected true or false, got {other}")),
        }
    }
    fn opt_str(&self, key: &str) -> Result<Option<StrBytes>, String> {
        match self.get(key) {
            None => Ok(None),
            Some(toml::Value::String(s)) => Ok(Some(StrBytes::from_string(s.clone()))),
            Some(other) => Err(format!("{key}: expected a string, got {other}")),
        }
    }
    fn str(&self, key: &str) -> Result<StrBytes, String> {
        Ok(self.opt_str(key)?.unwrap_or_default())
    }
    fn tables(&self, key: &str) -> Result<Vec<Fields<'a>>, String> {
        match self.get(key) {
            None => Ok(Vec::new()),
            Some(toml::Value::Array(a)) => a
                .iter()
                .map(|v| match v {
                    toml::Value::Table(t) => Ok(Fields {
                        table: t,
                        at: format!("{}{key}[].", self.at),
                        read: self.read,
                    }),
                    other => Err(format!("{key}: expected tables, got {other}")),
                })
                .collect(),
            Some(other) => Err(format!("{key}: expected an array of tables, got {other}")),
        }
    }
    fn strs(&self, key: &str) -> Result<Vec<StrBytes>, String> {
        match self.get(key) {
            None => Ok(Vec::new()),
            Some(toml::Value::Array(a)) => a
                .iter()
                .map(|v| match v {
                    toml::Value::String(s) => Ok(StrBytes::from_string(s.clone())),
                    other => Err(format!("{key}: expected strings, got {other}")),
                })
                .collect(),
            Some(other) => Err(format!("{key}: expected an array, got {other}")),
        }
    }
    fn i32s(&self, key: &str) -> Result<Vec<i32>, String> {
        match self.get(key) {
            None => Ok(Vec::new()),
            Some(toml::Value::Array(a)) => a
                .iter()
                .map(|v| match v {
                    toml::Value::Integer(i) => i32::try_from(*i).map_err(|_| format!("{key}: {i}")),
                    other => Err(format!("{key}: expected integers, got {other}")),
                })
                .collect(),
            Some(other) => Err(format!("{key}: expected an array, got {other}")),
        }
    }
}

/// AddPartitionsToTxn's `topics`, the same in the v0–3 and the v4 shape.
fn add_partitions_topics(
    f: &Fields<'_>,
) -> Result<Vec<add_partitions_to_txn_request::AddPartitionsToTxnTopic>, String> {
    f.tables("topics")?
        .iter()
        .map(|t| {
            Ok(
                add_partitions_to_txn_request::AddPartitionsToTxnTopic::default()
                    .with_name(TopicName(t.str("name")?))
                    .with_partitions(t.i32s("partitions")?),
            )
        })
        .collect()
}

/// The API key of an Apache API name (one of [`crate::api::APIS`]).
pub fn api_key(name: &str) -> Option<ApiKey> {
    crate::api::by_name(name).map(|a| a.key)
}

/// Why a request could not be built from a step's fields.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BuildError {
    /// A field no version of the API's request takes: the scenario's mistake (a typo), which
    /// would otherwise be dropped without a word and the request sent without it.
    #[error("unknown field '{field}' ({api} takes {takes})")]
    UnknownField {
        /// The field, nested ones as `topics[].name`.
        field: String,
        /// The API.
        api: String,
        /// The fields the API's request takes, at any version.
        takes: String,
    },
    /// A value of the wrong type or range, or a request this version cannot carry.
    #[error("{0}")]
    Invalid(String),
}

/// Builds the request of `api` at `version` from substituted fields. A field that the request
/// of `api` takes at no version (a typo: `transactionl_id`) is refused, naming the fields it
/// takes; a field of other versions only is fine (a version sweep sends one table to all).
pub fn build(api: ApiKey, version: i16, table: &toml::Table) -> Result<RequestKind, BuildError> {
    let read = RefCell::new(BTreeSet::new());
    let request = build_reading(api, version, table, &read).map_err(BuildError::Invalid)?;
    let given = keys(table, "");
    if given.iter().all(|k| read.borrow().contains(k)) {
        return Ok(request);
    }
    // Read at another version, perhaps: the fields of every version count.
    let highest = crate::api::by_key(api).map_or(version, |a| a.apache_max().max(version));
    for v in 0..=highest {
        let _ = build_reading(api, v, table, &read);
    }
    let read = read.into_inner();
    match given.iter().find(|k| !read.contains(*k)) {
        None => Ok(request),
        Some(unknown) => {
            let mut takes: Vec<&str> = read.iter().map(String::as_str).collect();
            takes.sort_unstable();
            Err(BuildError::UnknownField {
                field: unknown.clone(),
                api: crate::wire::error_codes::api_name(api as i16),
                takes: takes.join(", "),
            })
        }
    }
}

/// Every key of `table`, nested ones as `topics[].name` (for arrays of tables).
fn keys(table: &toml::Table, at: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (key, value) in table {
        out.push(format!("{at}{key}"));
        if let toml::Value::Array(items) = value {
            for item in items {
                if let toml::Value::Table(t) = item {
                    out.extend(keys(t, &format!("{at}{key}[].")));
                }
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// [`build`] at one version, noting in `read` every field it read.
fn build_reading(
    api: ApiKey,
    version: i16,
    table: &toml::Table,
    read: &RefCell<BTreeSet<String>>,
) -> Result<RequestKind, String> {
    let f = Fields::new(table, read);
    Ok(match api {
        ApiKey::InitProducerId => RequestKind::InitProducerId(
            InitProducerIdRequest::default()
                .with_transactional_id(f.opt_str("transactional_id")?.map(TransactionalId))
                .with_transaction_timeout_ms(f.i32("transaction_timeout_ms", 60_000)?)
                .with_producer_id(ProducerId(f.int("producer_id", -1)?))
                .with_producer_epoch(f.i16("producer_epoch", -1)?),
        ),
        // v4 is the batched broker form: the same fields become its one transaction.
        ApiKey::AddPartitionsToTxn if version >= 4 => RequestKind::AddPartitionsToTxn(
            AddPartitionsToTxnRequest::default().with_transactions(vec![
                add_partitions_to_txn_request::AddPartitionsToTxnTransaction::default()
                    .with_transactional_id(TransactionalId(f.str("transactional_id")?))
                    .with_producer_id(ProducerId(f.int("producer_id", 0)?))
                    .with_producer_epoch(f.i16("producer_epoch", 0)?)
                    .with_verify_only(f.boolean("verify_only", false)?)
                    .with_topics(
                        add_partitions_topics(&f)?,
                    ),
            ]),
        ),
        ApiKey::AddPartitionsToTxn => RequestKind::AddPartitionsToTxn(
            AddPartitionsToTxnRequest::default()
                .with_v3_and_below_transactional_id(TransactionalId(f.str("transactional_id")?))
                .with_v3_and_below_producer_id(ProducerId(f.int("producer_id", 0)?))
                .with_v3_and_below_producer_epoch(f.i16("producer_epoch", 0)?)
                .with_v3_and_below_topics(
                    add_partitions_topics(&f)?,
                ),
        ),
        ApiKey::AddOffsetsToTxn => RequestKind::AddOffsetsToTxn(
            AddOffsetsToTxnRequest::default()
                .with_transactional_id(TransactionalId(f.str("transactional_id")?))
                .with_producer_id(ProducerId(f.int("producer_id", 0)?))
                .with_producer_epoch(f.i16("producer_epoch", 0)?)
                .with_group_id(GroupId(f.str("group_id")?)),
        ),
        ApiKey::EndTxn => RequestKind::EndTxn(
            EndTxnRequest::default()
                .with_transactional_id(TransactionalId(f.str("transactional_id")?))
                .with_producer_id(ProducerId(f.int("producer_id", 0)?))
                .with_producer_epoch(f.i16("producer_epoch", 0)?)
                .with_committed(f.boolean("committed", true)?),
        ),
        ApiKey::WriteTxnMarkers => RequestKind::WriteTxnMarkers(
            WriteTxnMarkersRequest::default().with_markers(
                f.tables("markers")?
                    .iter()
                    .map(|m| {
                        Ok(write_txn_markers_request::WritableTxnMarker::default()
                            .with_producer_id(ProducerId(m.int("producer_id", 0)?))
                            .with_producer_epoch(m.i16("producer_epoch", 0)?)
                            .with_transaction_result(m.boolean("transaction_result", true)?)
                            .with_coordinator_epoch(m.i32("coordinator_epoch", 0)?)
                            .with_topics(
                                m.tables("topics")?
                                    .iter()
                                    .map(|t| {
                                        Ok(write_txn_markers_request::WritableTxnMarkerTopic::default()
                                            .with_name(TopicName(t.str("name")?))
                                            .with_partition_indexes(t.i32s("partition_indexes")?))
                                    })
                                    .collect::<Result<_, String>>()?,
                            ))
                    })
                    .collect::<Result<_, String>>()?,
            ),
        ),
        ApiKey::TxnOffsetCommit => RequestKind::TxnOffsetCommit(
            TxnOffsetCommitRequest::default()
                .with_transactional_id(TransactionalId(f.str("transactional_id")?))
                .with_group_id(GroupId(f.str("group_id")?))
                .with_producer_id(ProducerId(f.int("producer_id", 0)?))
                .with_producer_epoch(f.i16("producer_epoch", 0)?)
                .with_generation_id(f.i32("generation_id", -1)?)
                .with_member_id(f.str("member_id")?)
                .with_group_instance_id(f.opt_str("group_instance_id")?)
                .with_topics(
                    f.tables("topics")?
                        .iter()
                        .map(|t| {
                            Ok(txn_offset_commit_request::TxnOffsetCommitRequestTopic::default()
                                .with_name(TopicName(t.str("name")?))
                                .with_partitions(
                                    t.tables("partitions")?
                                        .iter()
                                        .map(|p| {
                                            Ok(txn_offset_commit_request::TxnOffsetCommitRequestPartition::default()
                                                .with_partition_index(p.i32("partition_index", 0)?)
                                                .with_committed_offset(p.int("committed_offset", 0)?)
                                                .with_committed_leader_epoch(p.i32("committed_leader_epoch", -1)?)
                                                .with_committed_metadata(p.opt_str("committed_metadata")?))
                                        })
                                        .collect::<Result<_, String>>()?,
                                ))
                        })
                        .collect::<Result<_, String>>()?,
                ),
        ),
        ApiKey::CreateTopics => RequestKind::CreateTopics(
            CreateTopicsRequest::default()
                .with_timeout_ms(f.i32("timeout_ms", 30_000)?)
                .with_validate_only(f.boolean("validate_only", false)?)
                .with_topics(
                    f.tables("topics")?
                        .iter()
                        .map(|t| {
                            Ok(create_topics_request::CreatableTopic::default()
                                .with_name(TopicName(t.str("name")?))
                                .with_num_partitions(t.i32("num_partitions", 1)?)
                                .with_replication_factor(t.i16("replication_factor", 1)?)
                                .with_configs(
                                    t.tables("configs")?
                                        .iter()
                                        .map(|c| {
                                            Ok(create_topics_request::CreatableTopicConfig::default()
                                                .with_name(c.str("name")?)
                                                .with_value(c.opt_str("value")?))
                                        })
                                        .collect::<Result<_, String>>()?,
                                ))
                        })
                        .collect::<Result<_, String>>()?,
                ),
        ),
        ApiKey::FindCoordinator => RequestKind::FindCoordinator(
            match version >= 4 {
                // v4 batches keys.
                true => FindCoordinatorRequest::default().with_coordinator_keys(vec![f.str("key")?]),
                false => FindCoordinatorRequest::default().with_key(f.str("key")?),
            }
            .with_key_type(f.i16("key_type", 0)? as i8),
        ),
        ApiKey::Metadata => RequestKind::Metadata(
            MetadataRequest::default()
                .with_allow_auto_topic_creation(f.boolean("allow_auto_topic_creation", false)?)
                .with_topics(Some(
                    f.tables("topics")?
                        .iter()
                        .map(|t| {
                            Ok(metadata_request::MetadataRequestTopic::default()
                                .with_name(Some(TopicName(t.str("name")?))))
                        })
                        .collect::<Result<_, String>>()?,
                )),
        ),
        ApiKey::ApiVersions => RequestKind::ApiVersions(
            ApiVersionsRequest::default()
                .with_client_software_name(StrBytes::from_static_str("kconform"))
                .with_client_software_version(StrBytes::from_static_str(env!("CARGO_PKG_VERSION"))),
        ),
        ApiKey::SaslHandshake => RequestKind::SaslHandshake(
            SaslHandshakeRequest::default().with_mechanism(f.str("mechanism")?),
        ),
        ApiKey::SaslAuthenticate => RequestKind::SaslAuthenticate(
            SaslAuthenticateRequest::default()
                .with_auth_bytes(bytes::Bytes::from(f.str("auth_bytes")?.as_bytes().to_vec())),
        ),
        ApiKey::DescribeAcls => RequestKind::DescribeAcls(
            DescribeAclsRequest::default()
                .with_resource_type_filter(f.int("resource_type_filter", 1)? as i8)
                .with_resource_name_filter(f.opt_str("resource_name_filter")?)
                .with_pattern_type_filter(f.int("pattern_type_filter", 3)? as i8)
                .with_principal_filter(f.opt_str("principal_filter")?)
                .with_host_filter(f.opt_str("host_filter")?)
                .with_operation(f.int("operation", 1)? as i8)
                .with_permission_type(f.int("permission_type", 1)? as i8),
        ),
        ApiKey::Produce => RequestKind::Produce(produce(&f)?),
        ApiKey::Fetch => RequestKind::Fetch(fetch(&f)?),
        ApiKey::ListOffsets => RequestKind::ListOffsets(
            ListOffsetsRequest::default()
                .with_replica_id(BrokerId(-1))
                .with_isolation_level(isolation(&f)?)
                .with_topics(vec![list_offsets_request::ListOffsetsTopic::default()
                    .with_name(TopicName(f.str("topic")?))
                    .with_partitions(vec![
                        list_offsets_request::ListOffsetsPartition::default()
                            .with_partition_index(f.i32("partition", 0)?)
                            .with_timestamp(f.int("timestamp", -1)?),
                    ])]),
        ),
        ApiKey::OffsetFetch => RequestKind::OffsetFetch(offset_fetch(version, &f)?),
        ApiKey::JoinGroup => RequestKind::JoinGroup(
            JoinGroupRequest::default()
                .with_group_id(GroupId(f.str("group_id")?))
                .with_session_timeout_ms(f.i32("session_timeout_ms", 30_000)?)
                .with_rebalance_timeout_ms(f.i32("rebalance_timeout_ms", 30_000)?)
                .with_member_id(f.str("member_id")?)
                .with_group_instance_id(f.opt_str("group_instance_id")?)
                .with_protocol_type(
                    f.opt_str("protocol_type")?
                        .unwrap_or(StrBytes::from_static_str("consumer")),
                )
                .with_protocols(vec![join_group_request::JoinGroupRequestProtocol::default()
                    .with_name(
                        f.opt_str("protocol")?
                            .unwrap_or(StrBytes::from_static_str("range")),
                    )]),
        ),
        ApiKey::SyncGroup => RequestKind::SyncGroup(
            SyncGroupRequest::default()
                .with_group_id(GroupId(f.str("group_id")?))
                .with_generation_id(f.i32("generation_id", -1)?)
                .with_member_id(f.str("member_id")?)
                .with_group_instance_id(f.opt_str("group_instance_id")?)
                .with_protocol_type(Some(
                    f.opt_str("protocol_type")?
                        .unwrap_or(StrBytes::from_static_str("consumer")),
                ))
                .with_protocol_name(Some(
                    f.opt_str("protocol")?
                        .unwrap_or(StrBytes::from_static_str("range")),
                ))
                // The leader's assignment: each member named gets an empty assignment.
                .with_assignments(
                    f.tables("assignments")?
                        .iter()
                        .map(|a| {
                            Ok(sync_group_request::SyncGroupRequestAssignment::default()
                                .with_member_id(a.str("member_id")?))
                        })
                        .collect::<Result<_, String>>()?,
                ),
        ),
        ApiKey::Heartbeat => RequestKind::Heartbeat(
            HeartbeatRequest::default()
                .with_group_id(GroupId(f.str("group_id")?))
                .with_generation_id(f.i32("generation_id", -1)?)
                .with_member_id(f.str("member_id")?)
                .with_group_instance_id(f.opt_str("group_instance_id")?),
        ),
        ApiKey::LeaveGroup => RequestKind::LeaveGroup(leave_group(version, &f)?),
        ApiKey::DeleteGroups => RequestKind::DeleteGroups(
            DeleteGroupsRequest::default().with_groups_names(
                f.strs("groups")?.into_iter().map(GroupId).collect(),
            ),
        ),
        ApiKey::OffsetCommit => RequestKind::OffsetCommit(
            OffsetCommitRequest::default()
                .with_group_id(GroupId(f.str("group_id")?))
                .with_generation_id_or_member_epoch(f.i32("generation_id", -1)?)
                .with_member_id(f.str("member_id")?)
                .with_group_instance_id(f.opt_str("group_instance_id")?)
                .with_retention_time_ms(f.int("retention_time_ms", -1)?)
                .with_topics(
                    f.tables("topics")?
                        .iter()
                        .map(|t| {
                            Ok(offset_commit_request::OffsetCommitRequestTopic::default()
                                .with_name(TopicName(t.str("name")?))
                                .with_partitions(
                                    t.tables("partitions")?
                                        .iter()
                                        .map(|p| {
                                            Ok(offset_commit_request::OffsetCommitRequestPartition::default()
                                                .with_partition_index(p.i32("partition_index", 0)?)
                                                .with_committed_offset(p.int("committed_offset", 0)?)
                                                .with_committed_leader_epoch(p.i32("committed_leader_epoch", -1)?)
                                                .with_committed_metadata(p.opt_str("committed_metadata")?))
                                        })
                                        .collect::<Result<_, String>>()?,
                                ))
                        })
                        .collect::<Result<_, String>>()?,
                ),
        ),
        other => return Err(format!("{other:?} is not a scenario API yet")),
    })
}

/// LeaveGroup: v0–2 carry one `member_id`; v3+ a batch of `members` ([{ member_id,
/// group_instance_id }]), or the one `member_id` when no batch is given.
fn leave_group(version: i16, f: &Fields<'_>) -> Result<LeaveGroupRequest, String> {
    let request = LeaveGroupRequest::default().with_group_id(GroupId(f.str("group_id")?));
    if version < 3 {
        return Ok(request.with_member_id(f.str("member_id")?));
    }
    let mut members = f
        .tables("members")?
        .iter()
        .map(|m| {
            Ok(leave_group_request::MemberIdentity::default()
                .with_member_id(m.str("member_id")?)
                .with_group_instance_id(m.opt_str("group_instance_id")?))
        })
        .collect::<Result<Vec<_>, String>>()?;
    if members.is_empty() {
        members.push(
            leave_group_request::MemberIdentity::default().with_member_id(f.str("member_id")?),
        );
    }
    Ok(request.with_members(members))
}

/// `isolation_level`: 0 / "read_uncommitted" (default) or 1 / "read_committed".
fn isolation(f: &Fields<'_>) -> Result<i8, String> {
    match f.get("isolation_level") {
        None => Ok(0),
        Some(toml::Value::String(s)) if s == "read_uncommitted" => Ok(0),
        Some(toml::Value::String(s)) if s == "read_committed" => Ok(1),
        Some(toml::Value::Integer(i @ 0..=1)) => Ok(*i as i8),
        Some(other) => Err(format!(
            "isolation_level: expected read_committed or read_uncommitted, got {other}"
        )),
    }
}

/// Produce to one partition: one batch of `records` ([{ key, value }]) stamped with the
/// producer fields. acks = 0 is refused: it has no answer to record.
fn produce(f: &Fields<'_>) -> Result<ProduceRequest, String> {
    let acks = f.i16("acks", -1)?;
    if acks == 0 {
        return Err("acks = 0 gets no answer; use 1 or -1".into());
    }
    let records = f
        .tables("records")?
        .iter()
        .map(|r| {
            Ok(crate::wire::record_batch::Plain {
                key: r.opt_str("key")?.map(|s| s.to_string()),
                value: r.opt_str("value")?.map(|s| s.to_string()),
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    if records.is_empty() {
        return Err("records: a Produce step needs at least one record".into());
    }
    let batch = crate::wire::record_batch::encode_batch(
        crate::wire::record_batch::BatchHeader {
            producer_id: f.int("producer_id", -1)?,
            producer_epoch: f.i16("producer_epoch", -1)?,
            base_sequence: f.i32("base_sequence", -1)?,
            transactional: f.boolean("transactional", false)?,
        },
        &records,
    )?;
    Ok(ProduceRequest::default()
        .with_transactional_id(f.opt_str("transactional_id")?.map(TransactionalId))
        .with_acks(acks)
        .with_timeout_ms(f.i32("timeout_ms", 30_000)?)
        .with_topic_data(vec![produce_request::TopicProduceData::default()
            .with_name(TopicName(f.str("topic")?))
            .with_partition_data(vec![
                produce_request::PartitionProduceData::default()
                    .with_index(f.i32("partition", 0)?)
                    .with_records(Some(batch)),
            ])]))
}

/// Fetch from one partition by topic name (versions up to 12; 13 and later name topics by id).
fn fetch(f: &Fields<'_>) -> Result<FetchRequest, String> {
    Ok(FetchRequest::default()
        .with_replica_id(BrokerId(-1))
        .with_max_wait_ms(f.i32("max_wait_ms", 100)?)
        .with_min_bytes(f.i32("min_bytes", 1)?)
        .with_max_bytes(f.i32("max_bytes", 1 << 20)?)
        .with_isolation_level(isolation(f)?)
        .with_session_epoch(-1)
        .with_topics(vec![fetch_request::FetchTopic::default()
            .with_topic(TopicName(f.str("topic")?))
            .with_partitions(vec![fetch_request::FetchPartition::default()
                .with_partition(f.i32("partition", 0)?)
                .with_fetch_offset(f.int("fetch_offset", 0)?)
                .with_partition_max_bytes(
                    f.i32("partition_max_bytes", 1 << 20)?,
                )])]))
}

/// The `topics` of an OffsetFetch request as `$ty` (a different generated type in the v0–7
/// and the v8+ shape, with the same fields).
macro_rules! offset_fetch_topics {
    ($topics:expr, $ty:ty) => {
        $topics
            .iter()
            .map(|t| {
                Ok(<$ty>::default()
                    .with_name(TopicName(t.str("name")?))
                    .with_partition_indexes(t.i32s("partition_indexes")?))
            })
            .collect::<Result<Vec<_>, String>>()?
    };
}

/// OffsetFetch of one group: `topics = [{ name, partition_indexes }]`, the v0–7 shape or the
/// v8+ batched shape with the same fields.
fn offset_fetch(version: i16, f: &Fields<'_>) -> Result<OffsetFetchRequest, String> {
    let topics = f.tables("topics")?;
    let group = GroupId(f.str("group_id")?);
    let request =
        OffsetFetchRequest::default().with_require_stable(f.boolean("require_stable", false)?);
    Ok(match version >= 8 {
        true => request.with_groups(vec![
            offset_fetch_request::OffsetFetchRequestGroup::default()
                .with_group_id(group)
                .with_topics(Some(offset_fetch_topics!(
                    topics,
                    offset_fetch_request::OffsetFetchRequestTopics
                ))),
        ]),
        false => request
            .with_group_id(group)
            .with_topics(Some(offset_fetch_topics!(
                topics,
                offset_fetch_request::OffsetFetchRequestTopic
            ))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str) -> toml::Table {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn a_misspelt_field_is_refused_with_the_fields_the_api_takes() {
        let e = build(
            ApiKey::EndTxn,
            3,
            &table("transactional_id = \"t\"\ncomitted = true"),
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "unknown field 'comitted' (EndTxn takes committed, producer_epoch, producer_id, transactional_id)"
        );
    }

    #[test]
    fn a_misspelt_nested_field_is_refused_by_its_path() {
        let e = build(
            ApiKey::AddPartitionsToTxn,
            3,
            &table("transactional_id = \"t\"\ntopics = [{ name = \"x\", partition = [0] }]"),
        )
        .unwrap_err();
        assert!(
            matches!(&e, BuildError::UnknownField { field, .. } if field == "topics[].partition"),
            "{e}"
        );
    }

    #[test]
    fn a_field_of_another_version_is_taken() {
        // verify_only is a field of the v4 (broker) shape only; a sweep sends it to v3 too.
        let fields = table("transactional_id = \"t\"\nverify_only = true");
        assert!(build(ApiKey::AddPartitionsToTxn, 3, &fields).is_ok());
        assert!(build(ApiKey::AddPartitionsToTxn, 4, &fields).is_ok());
    }

    #[test]
    fn a_wrong_type_is_invalid_not_unknown() {
        let e = build(ApiKey::EndTxn, 3, &table("producer_id = \"x\"")).unwrap_err();
        assert!(matches!(e, BuildError::Invalid(_)), "{e}");
    }
}
