//! The Kafka wire as kconform speaks and reads it: a raw client with a deadline on every wait
//! ([`client`]), Apache's own message schemas ([`schema`]), frames read exactly as Apache's
//! parser reads them ([`frame`]), messages written and read by those schemas alone at any
//! version they define ([`by_schema`]), SASL logins ([`sasl`]), bytes as hex ([`hex`]), record batches ([`record_batch`]) and
//! Kafka's error codes by their Apache names ([`error_codes`]). It knows no scenario and no
//! target.

pub mod by_schema;
pub mod client;
pub mod error_codes;
pub mod frame;
pub mod hex;
pub mod record_batch;
pub mod sasl;
pub mod schema;
