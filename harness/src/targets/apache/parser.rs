//! Apache's own parser as an oracle: kafka-clients 3.7.2 reading frames the way a Java client
//! reads a broker's answer and the way Apache's broker reads a request
//! (`harness/java/KconformFrames.java`, compiled once by [`super::javac`], one JVM for as many
//! frames as a caller gives it). kconform's definition of a well-formed frame
//! ([`crate::wire::frame`]) is checked against it: the same frames accepted, the same refused, and
//! where both accept, the same values (Apache's writer encodes what Apache read; kconform's
//! decoder re-encodes what it read; the bytes must be equal).

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

use super::javac::{self, CompileError};
use crate::wire::hex::{hex_compact, unhex};

/// The program's source, built into kconform so that it runs from any directory.
const SOURCE: &str = include_str!("../../../java/KconformFrames.java");

/// How long one frame may take to be judged (the first includes the JVM's start).
const DEADLINE: Duration = Duration::from_secs(30);

/// What Apache's parser made of a frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Read to its last byte: the body as Apache's writer encodes the values read, unknown
    /// tagged fields left out.
    Accepted(Vec<u8>),
    /// Refused, with Apache's reason (its exception and message).
    Refused(String),
}

/// Why the oracle could not answer.
#[derive(Debug, thiserror::Error)]
pub enum ParserError {
    /// No Java, no jars, or javac refused the program.
    #[error(transparent)]
    Compile(#[from] CompileError),
    /// The JVM could not be started or talked to.
    #[error("Apache's parser (java KconformFrames): {0}")]
    Io(#[from] std::io::Error),
    /// The JVM gave no verdict within the deadline, or stopped.
    #[error("Apache's parser gave no verdict: {0}")]
    Gone(String),
}

/// One running JVM with Apache's parser, stopped when dropped.
pub struct ApacheParser {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    /// Frames judged so far.
    pub judged: usize,
}

impl ApacheParser {
    /// Compiles the program if needed and starts it with Apache 3.7.2's parser: what decides
    /// what is malformed at the versions kaas claims.
    pub fn start() -> Result<ApacheParser, ParserError> {
        ApacheParser::start_at(&super::Release::CLAIMED)
    }

    /// The same program on `release`'s kafka-clients: the parser that decides at the versions
    /// only a later release has (EndTxn v5, TxnOffsetCommit v5 and v6...), which 3.7.2's
    /// refuses as versions. The jars are fetched into the cache if they are not there.
    pub fn start_at(release: &super::Release) -> Result<ApacheParser, ParserError> {
        let release = *release;
        let classes = javac::compile("KconformFrames", SOURCE, &release)?;
        let class_path = javac::class_path(&classes, &release).map_err(CompileError::from)?;
        let mut child = Command::new("java")
            .args(super::jvm::JVM_FLAGS)
            .arg("-cp")
            .arg(class_path)
            .arg("KconformFrames")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()?;
        let stdin = child.stdin.take().expect("piped");
        let stdout = child.stdout.take().expect("piped");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Ok(ApacheParser {
            child,
            stdin,
            lines,
            judged: 0,
        })
    }

    /// Apache's verdict on `frame` (after its size) as the answer to `api` v`version` whose
    /// request carried `correlation`.
    pub fn response(
        &mut self,
        api: i16,
        version: i16,
        correlation: i32,
        frame: &[u8],
    ) -> Result<Verdict, ParserError> {
        self.ask(&format!(
            "response {api} {version} {correlation} {}",
            hex_compact(frame)
        ))
    }

    /// Apache's broker's verdict on a request `frame` (after its size): header, then body.
    pub fn request(&mut self, frame: &[u8]) -> Result<Verdict, ParserError> {
        self.ask(&format!("request {}", hex_compact(frame)))
    }

    /// Java's reading of `bytes` as a string field (`new String(bytes, UTF_8)`), as UTF-8.
    pub fn utf8(&mut self, bytes: &[u8]) -> Result<Verdict, ParserError> {
        self.ask(&format!("utf8 {}", hex_compact(bytes)))
    }

    fn ask(&mut self, line: &str) -> Result<Verdict, ParserError> {
        writeln!(self.stdin, "{line}")?;
        self.stdin.flush()?;
        let answer = self
            .lines
            .recv_timeout(DEADLINE)
            .map_err(|e| ParserError::Gone(e.to_string()))?;
        self.judged += 1;
        match answer.split_once(' ') {
            Some(("ok", body)) => Ok(Verdict::Accepted(unhex(body).ok_or_else(|| {
                ParserError::Gone(format!("an answer that is not hex: {answer:?}"))
            })?)),
            Some(("err", why)) => Ok(Verdict::Refused(why.to_owned())),
            _ if answer == "ok" => Ok(Verdict::Accepted(Vec::new())),
            _ => Err(ParserError::Gone(format!(
                "an answer it should not give: {answer:?}"
            ))),
        }
    }
}

impl Drop for ApacheParser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
