//! Messages written and read by Apache's message definitions alone: [`kconform_wire::by_schema`],
//! and where kafka-protocol 0.15 stops, so that the harness knows which versions its typed
//! messages cover and which the definitions write.

use kafka_protocol::messages::ApiKey;

pub use kconform_wire::by_schema::*;

use crate::wire::schema;

/// Whether kafka-protocol 0.15 generates `api` at `version`: where it does not, a transaction
/// API is written and read by its definitions alone.
pub fn kafka_protocol_has(api: ApiKey, version: i16) -> bool {
    let generated = api.valid_versions();
    (generated.min..=generated.max).contains(&version)
}

/// The version kafka-protocol 0.15 writes and reads `api` v`version` as: the version itself
/// where it generates it; else its highest, when Apache's definitions (kafka-clients
/// [`schema::LATER_RELEASE`]'s request and response) write both versions alike: Produce v12
/// as v11 ("the same as version 11", KIP-890 part 2). None where neither holds.
pub fn kafka_protocol_version(api: ApiKey, version: i16) -> Option<i16> {
    if kafka_protocol_has(api, version) {
        return Some(version);
    }
    let name = kconform_wire::api_name(api as i16);
    let highest = api.valid_versions().max;
    let request = schema::later_request(&name)?;
    let response = schema::response_at(&name, version)?;
    (version > highest
        && schema::same_wire(request, version, highest)
        && schema::same_wire(response, version, highest))
    .then_some(highest)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Apache's "Produce v12 is the same as version 11", read from its definitions: kafka-
    /// protocol writes v12 as v11; v13 (topic ids) and EndTxn v5 (two more answer fields) are
    /// written otherwise, so no version stands in for them.
    #[test]
    fn a_version_is_written_as_an_earlier_one_only_where_the_definitions_agree() {
        assert_eq!(kafka_protocol_version(ApiKey::Produce, 12), Some(11));
        assert_eq!(kafka_protocol_version(ApiKey::Produce, 13), None);
        assert_eq!(kafka_protocol_version(ApiKey::Produce, 9), Some(9));
        assert_eq!(kafka_protocol_version(ApiKey::EndTxn, 5), None);
        let produce = schema::later_request("Produce").unwrap();
        assert!(schema::same_wire(produce, 12, 11));
        assert!(!schema::same_wire(produce, 13, 12), "topic ids from v13");
        assert!(!schema::same_wire(produce, 9, 8), "flexible from v9");
        let end_txn = schema::response_at("EndTxn", 5).unwrap();
        assert!(!schema::same_wire(end_txn, 5, 4));
    }
}
