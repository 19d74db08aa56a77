//! Bytes as hex: [`kconform_wire::hex`].

pub use kconform_wire::hex::*;
