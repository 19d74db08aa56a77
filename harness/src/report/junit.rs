//! JUnit XML, written one way for every report (`run`, `peers`, `clients`, `fuzz`): each report
//! says what its test cases are and which failed; this writes the suite, counts and escapes.
//! CI dashboards read it (`--junit PATH`).

use std::fmt::Write as _;

/// One test case: passed, or failed with a message (and, for some, the details).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Case {
    /// The class the dashboard groups it under (`kconform.ref`, `peers`, `clients.java`...).
    pub class: String,
    /// The case's name.
    pub name: String,
    /// Why it failed, when it did.
    pub failure: Option<Failure>,
}

/// Why a case failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// One line.
    pub message: String,
    /// Everything that failed, one per line (may be empty).
    pub details: String,
}

impl Case {
    /// A case that passed.
    pub fn passed(class: impl Into<String>, name: impl Into<String>) -> Case {
        Case {
            class: class.into(),
            name: name.into(),
            failure: None,
        }
    }

    /// A case that failed with `message` and `details`.
    pub fn failed(
        class: impl Into<String>,
        name: impl Into<String>,
        message: impl Into<String>,
        details: impl Into<String>,
    ) -> Case {
        Case {
            class: class.into(),
            name: name.into(),
            failure: Some(Failure {
                message: message.into(),
                details: details.into(),
            }),
        }
    }
}

/// The suite `name` of `cases` as a JUnit XML document.
pub fn suite(name: &str, cases: &[Case]) -> String {
    let failures = cases.iter().filter(|c| c.failure.is_some()).count();
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\">",
        xml(name),
        cases.len()
    );
    for c in cases {
        let _ = write!(
            out,
            "  <testcase classname=\"{}\" name=\"{}\"",
            xml(&c.class),
            xml(&c.name)
        );
        match &c.failure {
            None => out.push_str("/>\n"),
            Some(f) => {
                let _ = writeln!(
                    out,
                    "><failure message=\"{}\">{}</failure></testcase>",
                    xml(&f.message),
                    xml(&f.details)
                );
            }
        }
    }
    out.push_str("</testsuite>\n");
    out
}

/// `s` as XML or HTML text or attribute text: the JUnit files, and the HTML pages
/// ([`super::html`]).
pub(crate) fn xml(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_suite_counts_its_cases_and_failures_and_escapes_every_text() {
        let doc = suite(
            "kconform <x>",
            &[
                Case::passed("a", "one"),
                Case::failed("b", "t\"wo", "bad & worse", "line 1\n<line 2>"),
                Case::passed("a", "three"),
            ],
        );
        assert!(doc.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"));
        assert!(doc.contains("<testsuite name=\"kconform &lt;x&gt;\" tests=\"3\" failures=\"1\">"));
        assert!(doc.contains("  <testcase classname=\"a\" name=\"one\"/>\n"));
        assert!(doc.contains(
            "<testcase classname=\"b\" name=\"t&quot;wo\"><failure message=\"bad &amp; worse\">line 1\n&lt;line 2&gt;</failure></testcase>"
        ));
        assert!(doc.ends_with("</testsuite>\n"));
    }
}
