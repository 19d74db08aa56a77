//! The transaction coordinator: the kaas slot-file state store and the logic of the
//! transaction APIs on it.

pub mod coordinator;
pub mod slots;

pub use coordinator::TxnCoordinator;
