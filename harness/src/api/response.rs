//! Responses as plain trees (JSON values): what transcripts record, normalise and compare.

use kafka_protocol::messages::ResponseKind;
use serde_json::{json, Value};

/// Per-topic, per-partition error codes: the results of WriteTxnMarkers and TxnOffsetCommit,
/// the same fields in two generated types.
macro_rules! partition_errors {
    ($topics:expr) => {
        by_name(
            $topics
                .iter()
                .map(|t| {
                    json!({
                        "name": t.name.0.as_str(),
                        "partitions": sorted(t.partitions.iter().map(|p| json!({
                            "partition_index": p.partition_index,
                            "error_code": p.error_code,
                        })).collect()),
                    })
                })
                .collect(),
        )
    };
}

/// OffsetFetch's per-topic results, the same fields in the v0–7 and the v8+ shape (two
/// generated types).
macro_rules! offset_fetch_topics {
    ($topics:expr) => {
        by_name(
            $topics
                .iter()
                .map(|t| {
                    json!({
                        "name": t.name.0.as_str(),
                        "partitions": sorted(t.partitions.iter().map(|p| json!({
                            "partition_index": p.partition_index,
                            "error_code": p.error_code,
                            "committed_offset": p.committed_offset,
                            "metadata": p.metadata.as_ref().map(|m| m.as_str()),
                        })).collect()),
                    })
                })
                .collect(),
        )
    };
}

/// The response's fields at `version` as a tree, named as Apache names them (snake_case).
pub fn to_value(response: &ResponseKind, version: i16) -> Value {
    match response {
        ResponseKind::InitProducerId(r) => json!({
            "throttle_time_ms": r.throttle_time_ms,
            "error_code": r.error_code,
            "producer_id": r.producer_id.0,
            "producer_epoch": r.producer_epoch,
        }),
        // v4: the batched broker form, one result per transaction.
        ResponseKind::AddPartitionsToTxn(r) if version >= 4 => json!({
            "throttle_time_ms": r.throttle_time_ms,
            "error_code": r.error_code,
            "results_by_transaction": r.results_by_transaction.iter().map(|x| json!({
                "transactional_id": x.transactional_id.0.as_str(),
                "topic_results": add_partitions_results(&x.topic_results),
            })).collect::<Vec<_>>(),
        }),
        ResponseKind::AddPartitionsToTxn(r) => json!({
            "throttle_time_ms": r.throttle_time_ms,
            "results": add_partitions_results(&r.results_by_topic_v3_and_below),
        }),
        ResponseKind::AddOffsetsToTxn(r) => json!({
            "throttle_time_ms": r.throttle_time_ms,
            "error_code": r.error_code,
        }),
        ResponseKind::EndTxn(r) => json!({
            "throttle_time_ms": r.throttle_time_ms,
            "error_code": r.error_code,
        }),
        // Apache keys the markers by producer id (a hash map): ordered by producer id here.
        ResponseKind::WriteTxnMarkers(r) => json!({
            "markers": by_producer(r.markers.iter().map(|m| json!({
                "producer_id": m.producer_id.0,
                "topics": partition_errors!(m.topics),
            })).collect()),
        }),
        ResponseKind::TxnOffsetCommit(r) => json!({
            "throttle_time_ms": r.throttle_time_ms,
            "topics": partition_errors!(r.topics),
        }),
        ResponseKind::CreateTopics(r) => json!({
            "throttle_time_ms": r.throttle_time_ms,
            "topics": by_name(r.topics.iter().map(|t| {
                let mut topic = json!({
                    "name": t.name.0.as_str(),
                    "error_code": t.error_code,
                    "num_partitions": t.num_partitions,
                    "replication_factor": t.replication_factor,
                });
                // A refusal's message says which config or value was wrong; a success's is
                // null on both brokers (kept out so that every transcript need not carry it).
                if t.error_code != 0 {
                    topic["error_message"] = json!(t.error_message.as_ref().map(|m| m.as_str()));
                }
                topic
            }).collect()),
        }),
        // v4 batches keys: the single-key fields are not on the wire any more.
        ResponseKind::FindCoordinator(r) if version >= 4 => json!({
            "throttle_time_ms": r.throttle_time_ms,
            "coordinators": r.coordinators.iter().map(|c| json!({
                "key": c.key.as_str(),
                "node_id": c.node_id.0,
                "host": c.host.as_str(),
                "port": c.port,
                "error_code": c.error_code,
                "error_message": c.error_message.as_ref().map(|m| m.as_str()),
            })).collect::<Vec<_>>(),
        }),
        ResponseKind::FindCoordinator(r) => json!({
            "throttle_time_ms": r.throttle_time_ms,
            "error_code": r.error_code,
            "error_message": r.error_message.as_ref().map(|m| m.as_str()),
            "node_id": r.node_id.0,
            "host": r.host.as_str(),
            "port": r.port,
        }),
        ResponseKind::Metadata(r) => json!({
            "throttle_time_ms": r.throttle_time_ms,
            "topics": by_name(r.topics.iter().map(|t| {
                let mut topic = json!({
                    "name": t.name.as_ref().map(|n| n.0.as_str()),
                    "error_code": t.error_code,
                    "partitions": sorted(t.partitions.iter().map(|p| json!({
                        "partition_index": p.partition_index,
                        "error_code": p.error_code,
                        "leader_id": p.leader_id.0,
                    })).collect()),
                });
                // Only internal topics carry the flag, so ordinary topics' transcripts stay
                // as they were.
                if t.is_internal {
                    topic["is_internal"] = json!(true);
                }
                topic
            }).collect()),
        }),
        // The transaction APIs' ranges only: the brokers serve different sets of other APIs,
        // which is not what this harness checks.
        ResponseKind::ApiVersions(r) => json!({
            "error_code": r.error_code,
            "throttle_time_ms": r.throttle_time_ms,
            "transaction_apis": r.api_keys.iter()
                .filter(|k| (22..=28).contains(&k.api_key) && k.api_key != 23)
                .map(|k| (crate::wire::error_codes::api_name(k.api_key), json!({
                    "min_version": k.min_version,
                    "max_version": k.max_version,
                }))).collect::<serde_json::Map<_, _>>(),
        }),
        ResponseKind::Produce(r) => json!({
            "throttle_time_ms": r.throttle_time_ms,
            "responses": by_name(r.responses.iter().map(|t| json!({
                "name": t.name.0.as_str(),
                "partitions": sorted(t.partition_responses.iter().map(|p| json!({
                    "partition_index": p.index,
                    "error_code": p.error_code,
                    "base_offset": p.base_offset,
                    "log_append_time_ms": p.log_append_time_ms,
                    "log_start_offset": p.log_start_offset,
                    "record_errors": p.record_errors.iter().map(|e| json!({
                        "batch_index": e.batch_index,
                        "message": e.batch_index_error_message.as_ref().map(|m| m.as_str()),
                    })).collect::<Vec<_>>(),
                    "error_message": p.error_message.as_ref().map(|m| m.as_str()),
                })).collect()),
            })).collect()),
        }),
        ResponseKind::Fetch(r) => json!({
            "throttle_time_ms": r.throttle_time_ms,
            "error_code": r.error_code,
            "responses": by_name(r.responses.iter().map(|t| json!({
                "name": t.topic.0.as_str(),
                "partitions": sorted(t.partitions.iter().map(|p| {
                    let mut aborted: Vec<(i64, i64)> = p.aborted_transactions.iter().flatten()
                        .map(|a| (a.first_offset, a.producer_id.0)).collect();
                    aborted.sort();
                    json!({
                        "partition_index": p.partition_index,
                        "error_code": p.error_code,
                        "high_watermark": p.high_watermark,
                        "last_stable_offset": p.last_stable_offset,
                        "log_start_offset": p.log_start_offset,
                        "aborted_transactions": p.aborted_transactions.as_ref().map(|_| aborted.iter()
                            .map(|(first_offset, producer_id)| json!({
                                "producer_id": producer_id,
                                "first_offset": first_offset,
                            })).collect::<Vec<_>>()),
                        "batches": crate::wire::record_batch::describe(&p.records),
                    })
                }).collect()),
            })).collect()),
        }),
        ResponseKind::ListOffsets(r) => json!({
            "throttle_time_ms": r.throttle_time_ms,
            "topics": by_name(r.topics.iter().map(|t| json!({
                "name": t.name.0.as_str(),
                "partitions": sorted(t.partitions.iter().map(|p| json!({
                    "partition_index": p.partition_index,
                    "error_code": p.error_code,
                    "offset": p.offset,
                    "timestamp": p.timestamp,
                    "leader_epoch": p.leader_epoch,
                })).collect()),
            })).collect()),
        }),
        // v8+: the batched shape, one entry per group.
        ResponseKind::OffsetFetch(r) if version >= 8 => json!({
            "throttle_time_ms": r.throttle_time_ms,
            "groups": r.groups.iter().map(|g| json!({
                "error_code": g.error_code,
                "topics": offset_fetch_topics!(g.topics),
            })).collect::<Vec<_>>(),
        }),
        ResponseKind::OffsetFetch(r) => json!({
            "throttle_time_ms": r.throttle_time_ms,
            "error_code": r.error_code,
            "topics": offset_fetch_topics!(r.topics),
        }),
        ResponseKind::JoinGroup(r) => {
            let mut tree = json!({
                "throttle_time_ms": r.throttle_time_ms,
                "error_code": r.error_code,
                "generation_id": r.generation_id,
                "protocol_name": r.protocol_name.as_ref().map(|m| m.as_str()),
                "leader": r.leader.as_str(),
                "member_id": r.member_id.as_str(),
                "members": r.members.len(),
            });
            if version >= 9 {
                tree["skip_assignment"] = json!(r.skip_assignment);
            }
            tree
        }
        ResponseKind::SyncGroup(r) => json!({
            "throttle_time_ms": r.throttle_time_ms,
            "error_code": r.error_code,
            "assignment_bytes": r.assignment.len(),
        }),
        ResponseKind::Heartbeat(r) => json!({
            "throttle_time_ms": r.throttle_time_ms,
            "error_code": r.error_code,
        }),
        ResponseKind::LeaveGroup(r) => json!({
            "throttle_time_ms": r.throttle_time_ms,
            "error_code": r.error_code,
            "members": r.members.iter().map(|m| json!({
                "member_id": m.member_id.as_str(),
                "group_instance_id": m.group_instance_id.as_ref().map(|i| i.as_str()),
                "error_code": m.error_code,
            })).collect::<Vec<_>>(),
        }),
        ResponseKind::DeleteGroups(r) => {
            let mut results: Vec<Value> = r
                .results
                .iter()
                .map(|g| {
                    json!({
                        "group_id": g.group_id.as_str(),
                        "error_code": g.error_code,
                    })
                })
                .collect();
            results.sort_by(|a, b| a["group_id"].as_str().cmp(&b["group_id"].as_str()));
            json!({ "throttle_time_ms": r.throttle_time_ms, "results": results })
        }
        ResponseKind::OffsetCommit(r) => json!({
            "throttle_time_ms": r.throttle_time_ms,
            "topics": by_name(r.topics.iter().map(|t| json!({
                "name": t.name.0.as_str(),
                "partitions": sorted(t.partitions.iter().map(|p| json!({
                    "partition_index": p.partition_index,
                    "error_code": p.error_code,
                })).collect()),
            })).collect()),
        }),
        ResponseKind::SaslHandshake(r) => json!({
            "error_code": r.error_code,
            "mechanisms": r.mechanisms.iter().map(|m| m.as_str()).collect::<Vec<_>>(),
        }),
        // The tokens of a PLAIN exchange are empty; a scenario sends no SCRAM token itself
        // (its server messages carry a random nonce and salt), so the bytes read as text.
        ResponseKind::SaslAuthenticate(r) => json!({
            "error_code": r.error_code,
            "error_message": r.error_message.as_deref(),
            "auth_bytes": String::from_utf8_lossy(&r.auth_bytes),
            "session_lifetime_ms": r.session_lifetime_ms,
        }),
        // Apache groups the bindings in a hash map: ordered here by resource, then principal.
        ResponseKind::DescribeAcls(r) => {
            let mut resources: Vec<Value> = r
                .resources
                .iter()
                .map(|res| {
                    let mut acls: Vec<Value> = res
                        .acls
                        .iter()
                        .map(|a| {
                            json!({
                                "principal": a.principal.as_str(),
                                "host": a.host.as_str(),
                                "operation": a.operation,
                                "permission_type": a.permission_type,
                            })
                        })
                        .collect();
                    acls.sort_by_key(|a| a.to_string());
                    json!({
                        "resource_type": res.resource_type,
                        "resource_name": res.resource_name.as_str(),
                        "pattern_type": res.pattern_type,
                        "acls": acls,
                    })
                })
                .collect();
            resources.sort_by_key(|r| r.to_string());
            json!({
                "throttle_time_ms": r.throttle_time_ms,
                "error_code": r.error_code,
                "error_message": r.error_message.as_deref(),
                "resources": resources,
            })
        }
        other => {
            json!({ "unrecorded": format!("{other:?}").chars().take(200).collect::<String>() })
        }
    }
}

/// AddPartitionsToTxn's per-topic results, the same in the v0–3 and the v4 shape.
fn add_partitions_results(
    topics: &[kafka_protocol::messages::add_partitions_to_txn_response::AddPartitionsToTxnTopicResult],
) -> Vec<Value> {
    by_name(
        topics
            .iter()
            .map(|t| {
                json!({
                    "name": t.name.0.as_str(),
                    "results": sorted(t.results_by_partition.iter().map(|p| json!({
                        "partition_index": p.partition_index,
                        "partition_error_code": p.partition_error_code,
                    })).collect()),
                })
            })
            .collect(),
    )
}

/// Per-partition results in partition order: brokers answer them from maps, so their order on
/// the wire carries no meaning.
fn sorted(mut partitions: Vec<Value>) -> Vec<Value> {
    partitions.sort_by_key(|p| p.get("partition_index").and_then(Value::as_i64));
    partitions
}

/// WriteTxnMarkers results in producer-id order (the raw ids: both brokers allocate them in
/// increasing order, so the order survives normalisation).
fn by_producer(mut markers: Vec<Value>) -> Vec<Value> {
    markers.sort_by_key(|m| m.get("producer_id").and_then(Value::as_i64));
    markers
}

/// Per-topic results in name order, for the same reason (Apache's come from hash maps).
fn by_name(mut topics: Vec<Value>) -> Vec<Value> {
    topics.sort_by(|a, b| {
        let name = |v: &Value| {
            v.get("name")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned()
        };
        name(a).cmp(&name(b))
    });
    topics
}

/// The value at a dotted path (`results.0.results.0.partition_error_code`).
pub fn at<'a>(value: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.')
        .try_fold(value, |v, part| match part.parse::<usize>() {
            Ok(i) => v.get(i),
            Err(_) => v.get(part),
        })
}

/// Replaces the field at `path` (as [`at`] reads it) by `with`; whether there was one.
pub fn replace_at(value: &mut Value, path: &str, with: Value) -> bool {
    let mut v = value;
    for part in path.split('.') {
        let next = match part.parse::<usize>() {
            Ok(i) => v.get_mut(i),
            Err(_) => v.get_mut(part),
        };
        match next {
            Some(n) => v = n,
            None => return false,
        }
    }
    *v = with;
    true
}
