//! ListOffsets: earliest (-2), latest (-1), max timestamp (-3) and by timestamp (batch
//! granularity: the first batch whose max timestamp reaches it).

use kafka_protocol::messages::list_offsets_response::{
    ListOffsetsPartitionResponse, ListOffsetsTopicResponse,
};
use kafka_protocol::messages::{ListOffsetsRequest, ListOffsetsResponse};

use super::Ctx;
use crate::auth::{Operation, Resource};
use crate::errors;

/// Answers ListOffsets.
pub fn handle(ctx: &Ctx, req: ListOffsetsRequest) -> ListOffsetsResponse {
    let mut topics = Vec::new();
    for t in req.topics {
        let name = t.name.0.to_string();
        let authorized = ctx.allowed(Operation::Describe, Resource::Topic(&name));
        let mut partitions = Vec::new();
        for p in t.partitions {
            let mut r = ListOffsetsPartitionResponse::default()
                .with_partition_index(p.partition_index)
                .with_timestamp(-1)
                .with_offset(-1)
                .with_leader_epoch(-1);
            let found = match (
                authorized,
                ctx.state.led_partition(&name, p.partition_index),
            ) {
                (false, _) => Err(errors::TOPIC_AUTHORIZATION_FAILED),
                (true, Err(code)) => Err(code),
                (true, Ok(log)) => {
                    let log = log.lock();
                    Ok(match p.timestamp {
                        -1 if req.isolation_level == 1 => Some((log.last_stable_offset(), -1)),
                        -1 => Some((log.high_watermark(), -1)),
                        -2 => Some((log.log_start_offset(), -1)),
                        -3 => log.max_timestamp(),
                        ts => log.offset_for_timestamp(ts),
                    })
                }
            };
            // The leader epoch exists from v4 on; below, only its default encodes.
            let leader_epoch = if ctx.version >= 4 { 0 } else { -1 };
            r = match found {
                Err(code) => r.with_error_code(code),
                Ok(None) => r.with_leader_epoch(leader_epoch),
                Ok(Some((offset, ts))) if ctx.version == 0 => {
                    r.with_old_style_offsets(vec![offset]).with_timestamp(ts)
                }
                Ok(Some((offset, ts))) => r
                    .with_offset(offset)
                    .with_timestamp(ts)
                    .with_leader_epoch(leader_epoch),
            };
            partitions.push(r);
        }
        topics.push(
            ListOffsetsTopicResponse::default()
                .with_name(t.name)
                .with_partitions(partitions),
        );
    }
    ListOffsetsResponse::default().with_topics(topics)
}
