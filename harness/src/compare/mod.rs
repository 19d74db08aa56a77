//! The compare stage: transcripts of two brokers made comparable ([`normalise`]: run-specific
//! values as symbols), compared field by field ([`diff`]), and each difference classified against
//! the kaas documentation's deviations ([`ledger`]), then grouped into root causes ([`causes`]),
//! a later difference under an earlier one only where the earlier value flowed into it
//! ([`flow`]), a field of a refused answer under the error code that refused it ([`refusal`]), one
//! refusal on several APIs of a scenario as one ([`alike`]).

mod alike;
pub mod causes;
pub mod consequence;
pub mod diff;
pub mod flow;
mod folding;
pub mod ledger;
pub mod normalise;
pub mod refusal;
pub mod shown;
pub mod signature;
