//! An answer that is not a well-formed response, as a kaas engineer reads it: what was wrong,
//! where, and the frame.

use std::fmt;

use serde::{Deserialize, Serialize};

/// An answer that is not a well-formed response: what was wrong, where, and the frame.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Malformed {
    /// The API of the request (`EndTxn`).
    pub api: String,
    /// The version of the request.
    pub version: i16,
    /// The response header version that API and version answer with.
    pub header_version: i16,
    /// What is wrong, in words.
    pub problem: String,
    /// The field where decoding went wrong (`topics[0].partitions[1].error_code`), if one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// The byte of the frame (after its 4-byte size) where the problem is.
    pub offset: usize,
    /// The whole frame after its size, in hex.
    pub frame: String,
    /// The response header version the answer was read under after all, when its only
    /// defect was the header's version ([`super::read_past`]) and the scenario went on with
    /// the values so read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_past_as_header: Option<i16>,
    /// The answer so read, normalised as a response's is: compared with the other target's
    /// answer as a response would be, beside the malformed outcome itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_past_answer: Option<serde_json::Value>,
}

/// How many bytes of the frame a one-line summary shows.
const SUMMARY_BYTES: usize = 32;

impl Malformed {
    /// One line: API, version, header version, problem, and the start of the frame.
    pub fn summary(&self) -> String {
        let bytes = self.frame.split(' ').filter(|b| !b.is_empty()).count();
        let shown: Vec<&str> = self.frame.split(' ').take(SUMMARY_BYTES).collect();
        let more = match bytes > SUMMARY_BYTES {
            true => " …",
            false => "",
        };
        format!(
            "{} v{} (response header v{}): {}; frame ({bytes} bytes): {}{more}",
            self.api,
            self.version,
            self.header_version,
            self.problem,
            shown.join(" ")
        )
    }
}

impl fmt::Display for Malformed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.summary())
    }
}
