//! Fragments: files of shared steps (`scenarios/fragments/<name>.toml`) that a step
//! `include`s, such as "coordinator found, topic created, producer initialised".

use serde::Deserialize;
use sha2::{Digest, Sha256};

use super::step::StepFile;
use crate::data::Source;

/// A file of shared steps that scenarios `include`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Fragment {
    /// What the steps do.
    #[allow(dead_code)]
    description: String,
    #[serde(rename = "step")]
    steps: Vec<StepFile>,
}

/// Replaces each `include` step by the fragment's steps (fragments may include fragments,
/// four deep at most), adding each fragment's text, as read, to `digest`.
pub(super) fn expand(
    steps: Vec<StepFile>,
    source: &Source,
    depth: usize,
    digest: &mut Sha256,
) -> Result<Vec<StepFile>, String> {
    let mut out = Vec::new();
    for step in steps {
        let Some(name) = &step.include else {
            out.push(step);
            continue;
        };
        if depth >= 4 {
            return Err(format!("fragment '{name}': includes nest too deep"));
        }
        let text = source
            .read(&format!("fragments/{name}.toml"))
            .map_err(|e| format!("include '{name}' ({e})"))?;
        digest.update(text.as_bytes());
        let fragment: Fragment =
            toml::from_str(&text).map_err(|e| format!("fragment '{name}': {e}"))?;
        out.extend(expand(fragment.steps, source, depth + 1, digest)?);
    }
    Ok(out)
}
