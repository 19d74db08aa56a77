//! The flag groups every command that reports shares: the report files, and the baseline.

use std::path::PathBuf;

use kconform::report::forms::Files;

/// A baseline to gate on, the same two flags for every judge's command (`run` has its own).
#[derive(Debug, Clone, clap::Args)]
pub struct BaselineArgs {
    /// Fail only on what is not in this baseline (a file --save-baseline wrote, of this
    /// command or of `kconform certify`: the entries of other judges are left alone); what
    /// went is reported as fixed.
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
    /// Write what fails this run, keyed without addresses, generated names or drawn numbers,
    /// to FILE, for --baseline.
    #[arg(long, value_name = "FILE")]
    pub save_baseline: Option<PathBuf>,
}

/// The report files a command that reports can write, the same flags for each.
#[derive(Debug, clap::Args)]
pub struct ReportFiles {
    /// Write the report as JSON.
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,
    /// Write the report as JUnit XML.
    #[arg(long, value_name = "PATH")]
    pub junit: Option<PathBuf>,
    /// Write the report as Markdown (for a pull-request comment).
    #[arg(long, value_name = "PATH")]
    pub markdown: Option<PathBuf>,
}

impl ReportFiles {
    /// The library's report files.
    pub fn files(&self) -> Files {
        Files {
            json: self.json.clone(),
            junit: self.junit.clone(),
            markdown: self.markdown.clone(),
        }
    }
}
