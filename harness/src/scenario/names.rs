//! Unique names of a given shape. A scenario at the edges of what Kafka allows asks for an id
//! of an exact length in bytes (1, 249, 32,767), made of non-ASCII characters, or beginning
//! with bytes a file system treats specially (`..`, `/`, `\`, NUL); each run still gets a name
//! of its own, the nonce kept where the length leaves room for it.
//!
//! ```toml
//! unique = ["topic", { name = "group", bytes = 300, fill = "é" }, { name = "txn", prefix = "../" }]
//! ```

use serde::Deserialize;

/// Kafka's longest string: a length is an INT16.
pub const MOST_BYTES: usize = 32_767;

/// How the run's name of a unique variable is shaped (none of it set: `{var}-{scenario}-{nonce}`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Shape {
    /// Its exact length in bytes (1 to 32,767). Shorter than its prefix and nonce, the name is
    /// the start of those: under 8 bytes it is unique only by chance, so the steps must not
    /// depend on what earlier runs did with it.
    pub bytes: Option<usize>,
    /// What pads it to `bytes` (default `x`); ASCII `x` finishes a length a multi-byte fill
    /// cannot reach exactly.
    pub fill: Option<String>,
    /// What it begins with.
    pub prefix: Option<String>,
}

/// One entry of a scenario file's `unique`: a variable's name, or a table with its shape.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub(super) enum UniqueEntry {
    /// `"txn"`.
    Plain(String),
    /// `{ name = "txn", bytes = 249 }`.
    Shaped(ShapedEntry),
}

/// A `unique` entry with a shape, as the file gives it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ShapedEntry {
    name: String,
    #[serde(default)]
    bytes: Option<usize>,
    #[serde(default)]
    fill: Option<String>,
    #[serde(default)]
    prefix: Option<String>,
}

impl UniqueEntry {
    /// The variable, and its shape when it has one.
    pub(super) fn split(self) -> (String, Option<Shape>) {
        match self {
            UniqueEntry::Plain(name) => (name, None),
            UniqueEntry::Shaped(e) => (
                e.name,
                Some(Shape {
                    bytes: e.bytes,
                    fill: e.fill,
                    prefix: e.prefix,
                }),
            ),
        }
    }
}

impl Shape {
    /// Why the shape cannot be made, if it cannot.
    pub(super) fn check(&self) -> Result<(), String> {
        if let Some(bytes) = self.bytes.filter(|b| !(1..=MOST_BYTES).contains(b)) {
            return Err(format!(
                "bytes = {bytes}: a Kafka string has 1 to {MOST_BYTES} bytes"
            ));
        }
        if self.fill.as_deref() == Some("") {
            return Err("fill = \"\": nothing pads nothing".into());
        }
        Ok(())
    }

    /// The name of a run: `core` (`{var}-{scenario}-{nonce}`) after the prefix, padded or cut
    /// to `bytes`.
    pub fn name(&self, core: &str, nonce: &str) -> String {
        let prefix = self.prefix.as_deref().unwrap_or("");
        let mut name = format!("{prefix}{core}");
        let Some(bytes) = self.bytes else {
            return name;
        };
        if name.len() > bytes {
            name = format!("{prefix}{nonce}");
            while name.len() > bytes {
                name.pop();
            }
        }
        let fill = self.fill.as_deref().unwrap_or("x");
        while name.len() + fill.len() <= bytes {
            name.push_str(fill);
        }
        while name.len() < bytes {
            name.push('x');
        }
        name
    }

    /// Whether a name this short could turn up inside other strings, so that only a whole
    /// string equal to it may be read back as its placeholder.
    pub fn short(name: &str) -> bool {
        name.len() < 8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(bytes: usize, fill: Option<&str>, prefix: Option<&str>) -> Shape {
        Shape {
            bytes: Some(bytes),
            fill: fill.map(str::to_owned),
            prefix: prefix.map(str::to_owned),
        }
    }

    #[test]
    fn a_name_has_exactly_its_bytes_and_keeps_the_nonce_where_it_fits() {
        let core = "group-edge-ids-0123abcd";
        for bytes in [1, 7, 8, 23, 249, 255, 256, 300, 4096, MOST_BYTES] {
            for fill in [None, Some("é"), Some("日本")] {
                let name = shape(bytes, fill, None).name(core, "0123abcd");
                assert_eq!(name.len(), bytes, "{bytes} {fill:?}");
                if bytes >= core.len() {
                    assert!(name.starts_with(core), "{name}");
                }
                if bytes >= 8 {
                    assert!(name.contains("0123abcd"), "{name}");
                }
            }
        }
        assert_eq!(shape(1, None, None).name(core, "0123abcd"), "0");
        assert_eq!(
            shape(30, Some("é"), None).name(core, "0123abcd"),
            "group-edge-ids-0123abcdéééx"
        );
    }

    #[test]
    fn a_prefix_comes_first_even_when_the_length_cuts_the_rest() {
        let s = shape(5, None, Some("../"));
        assert_eq!(s.name("txn-x-0123abcd", "0123abcd"), "../01");
        let s = Shape {
            prefix: Some("\0".into()),
            ..Shape::default()
        };
        assert_eq!(s.name("txn-x-1", "1"), "\0txn-x-1");
    }

    #[test]
    fn impossible_shapes_are_refused() {
        assert!(shape(0, None, None).check().is_err());
        assert!(shape(MOST_BYTES + 1, None, None).check().is_err());
        assert!(shape(10, Some(""), None).check().is_err());
        assert!(shape(MOST_BYTES, Some("é"), None).check().is_ok());
    }

    #[test]
    fn unique_reads_plain_names_and_shaped_ones() {
        #[derive(Deserialize)]
        struct F {
            unique: Vec<UniqueEntry>,
        }
        let f: F =
            toml::from_str("unique = [\"txn\", { name = \"group\", bytes = 300, fill = \"é\" }]")
                .unwrap();
        assert_eq!(f.unique[0].clone().split(), ("txn".into(), None));
        assert_eq!(
            f.unique[1].clone().split(),
            ("group".into(), Some(shape(300, Some("é"), None)))
        );
        assert!(toml::from_str::<F>("unique = [{ name = \"g\", byte = 3 }]").is_err());
    }
}
