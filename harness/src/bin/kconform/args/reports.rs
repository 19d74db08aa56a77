//! The flag groups every command that reports shares: the report files, and the baseline.

use std::path::PathBuf;

use kconform::report::forms::Files;

/// A baseline to gate on, the same flags for every command that judges (`run`, `certify`,
/// `clients`, `chaos`, `peers`, `fuzz`): one file holds every judge's entries, and each command
/// reads and writes its own judges' alone.
#[derive(Debug, Clone, clap::Args)]
pub struct BaselineArgs {
    /// Fail only on what is not in this baseline (a file --save-baseline or --add-to-baseline
    /// wrote, of this command or of `kconform certify`: the entries of judges that did not run
    /// are left alone); what went is reported as fixed.
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
    /// Write what fails this run, keyed without addresses, generated names or drawn numbers,
    /// to FILE, for --baseline.
    #[arg(long, value_name = "FILE")]
    pub save_baseline: Option<PathBuf>,
    /// Gate on the baseline in FILE (none yet when it is missing) and add what fails this run
    /// to it: run a few times on one build, it holds everything that build has shown, each
    /// entry counting the runs it showed in. For a broker whose findings vary from run to run
    /// (a real cluster's clients and chaos); --save-baseline starts it afresh.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["baseline", "save_baseline"])]
    pub add_to_baseline: Option<PathBuf>,
}

impl BaselineArgs {
    /// Every file these flags will write, with its flag, for a check before the run.
    pub fn outputs(&self) -> Vec<(&PathBuf, &'static str)> {
        let saved = self.save_baseline.iter().map(|p| (p, "--save-baseline"));
        let added = self
            .add_to_baseline
            .iter()
            .map(|p| (p, "--add-to-baseline"));
        saved.chain(added).collect()
    }
}

/// The report files a command that reports can write, the same flags for each.
#[derive(Debug, clap::Args)]
pub struct ReportFiles {
    /// Write the report as JSON.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write the report as JUnit XML.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Write the report as Markdown (for a pull-request comment).
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
}

impl ReportFiles {
    /// Every file these flags will write, with its flag, for a check before the run.
    pub fn outputs(&self) -> Vec<(&PathBuf, &'static str)> {
        [
            (&self.json, "--json"),
            (&self.junit, "--junit"),
            (&self.markdown, "--markdown"),
        ]
        .into_iter()
        .filter_map(|(path, flag)| path.as_ref().map(|p| (p, flag)))
        .collect()
    }

    /// The library's report files.
    pub fn files(&self) -> Files {
        Files {
            json: self.json.clone(),
            junit: self.junit.clone(),
            markdown: self.markdown.clone(),
        }
    }
}
