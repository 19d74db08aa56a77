//! The files a report is written to: JSON for tools, JUnit XML for CI dashboards, Markdown for a
//! pull-request comment. Every command that reports (`run`, `peers`, `clients`, `fuzz`) takes
//! the same three flags and writes through here, each form rendered only when asked for.

use std::path::PathBuf;

/// A report in the three forms a file can hold.
pub trait Forms {
    /// JSON, following the report's published schema.
    fn json(&self) -> String;
    /// JUnit XML.
    fn junit(&self) -> String;
    /// Markdown.
    fn markdown(&self) -> String;
}

/// A report file that could not be written.
#[derive(Debug, thiserror::Error)]
#[error("writing {path}: {source}")]
pub struct WriteError {
    /// The file.
    pub path: String,
    /// Why.
    pub source: std::io::Error,
}

/// Where each form goes; a form with no path is not rendered.
#[derive(Debug, Clone, Default)]
pub struct Files {
    /// The JSON report.
    pub json: Option<PathBuf>,
    /// The JUnit XML report.
    pub junit: Option<PathBuf>,
    /// The Markdown report.
    pub markdown: Option<PathBuf>,
}

impl Files {
    /// Writes each file asked for, rendering only those; stops at the first that fails.
    pub fn write<R: Forms>(&self, report: &R) -> Result<(), WriteError> {
        type Render<R> = fn(&R) -> String;
        let forms: [(&Option<PathBuf>, Render<R>); 3] = [
            (&self.json, R::json),
            (&self.junit, R::junit),
            (&self.markdown, R::markdown),
        ];
        for (path, render) in forms {
            if let Some(path) = path {
                std::fs::write(path, render(report)).map_err(|source| WriteError {
                    path: path.display().to_string(),
                    source,
                })?;
            }
        }
        Ok(())
    }
}

/// [`Forms`] for a report whose own methods `json`, `junit` and `markdown` give the three.
macro_rules! report_forms {
    ($report:ty) => {
        impl $crate::report::forms::Forms for $report {
            fn json(&self) -> String {
                Self::json(self)
            }
            fn junit(&self) -> String {
                Self::junit(self)
            }
            fn markdown(&self) -> String {
                Self::markdown(self)
            }
        }
    };
}
pub(crate) use report_forms;

#[cfg(test)]
mod tests {
    use super::*;

    struct Fixed;

    impl Forms for Fixed {
        fn json(&self) -> String {
            "{}".into()
        }
        fn junit(&self) -> String {
            "<testsuites/>".into()
        }
        fn markdown(&self) -> String {
            panic!("a form not asked for is not rendered")
        }
    }

    #[test]
    fn only_the_forms_asked_for_are_written() {
        let dir = tempfile::tempdir().unwrap();
        let files = Files {
            json: Some(dir.path().join("r.json")),
            junit: Some(dir.path().join("r.xml")),
            markdown: None,
        };
        files.write(&Fixed).unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.path().join("r.json")).unwrap(),
            "{}"
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("r.xml")).unwrap(),
            "<testsuites/>"
        );
    }

    #[test]
    fn a_file_that_cannot_be_written_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("no-such-dir/r.json");
        let files = Files {
            json: Some(path.clone()),
            ..Files::default()
        };
        let e = files.write(&Fixed).unwrap_err();
        assert!(
            e.to_string()
                .starts_with(&format!("writing {}: ", path.display())),
            "{e}"
        );
    }
}
