//! The jars of an Apache release, fetched once: Maven resolves `org.apache.kafka:kafka_2.13`
//! and its runtime dependencies (with the logging binding the release's broker needs to log
//! its readiness line) into `$XDG_CACHE_HOME/kconform/apache-kafka-<version>/libs`, under a
//! lock that every thread and process of every kconform honours, copied aside and renamed
//! into place whole. What launches a broker or compiles a Java program against them asks
//! here.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use super::release::{Logging, Release};
use super::{tail, ApacheError};

/// SLF4J binding and log4j implementation a 3.x broker needs to log its readiness line.
const SLF4J_RELOAD4J: &str = "1.7.36";
const RELOAD4J: &str = "1.2.25";
/// Log4j 2 and its SLF4J 1.7 binding for a 4.x broker, whose jars bring Log4j 2 but no
/// binding: pinned together, so every 4.x logs through one version (4.4.0's).
const LOG4J2_VERSION: &str = "2.25.5";
/// kconform's cache directory (`$XDG_CACHE_HOME/kconform`, else `~/.cache/kconform`).
pub fn cache_root() -> PathBuf {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    base.join("kconform")
}

/// The cache directory of a Kafka version's jars (one for both transaction versions).
pub fn cache_dir(release: &Release) -> PathBuf {
    cache_root().join(format!("apache-kafka-{}", release.version()))
}

/// The Maven project that names the broker and its logging binding.
fn pom(release: &Release) -> String {
    let version = release.version();
    let logging = match release.logging() {
        Logging::Log4j1 => format!(
            r#"<dependency><groupId>org.slf4j</groupId><artifactId>slf4j-reload4j</artifactId><version>{SLF4J_RELOAD4J}</version></dependency>
    <dependency><groupId>ch.qos.reload4j</groupId><artifactId>reload4j</artifactId><version>{RELOAD4J}</version></dependency>"#
        ),
        Logging::Log4j2 => ["log4j-slf4j-impl", "log4j-api", "log4j-core"]
            .map(|a| format!(r#"<dependency><groupId>org.apache.logging.log4j</groupId><artifactId>{a}</artifactId><version>{LOG4J2_VERSION}</version></dependency>"#))
            .join("\n    "),
    };
    format!(
        r#"<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>
  <groupId>local.kconform</groupId><artifactId>apache-kafka-libs</artifactId><version>1</version><packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka_2.13</artifactId><version>{version}</version>
      <exclusions><exclusion><groupId>ch.qos.logback</groupId><artifactId>*</artifactId></exclusion>
        <exclusion><groupId>log4j</groupId><artifactId>log4j</artifactId></exclusion></exclusions></dependency>
    {logging}
  </dependencies></project>"#
    )
}

/// A release's jars, resolved: what a node is formatted and started with.
#[derive(Debug, Clone)]
pub struct Jars {
    /// The directory holding them (the classpath is `<libs>/*`).
    pub libs: PathBuf,
    /// Which Kafka they are, and the transaction version its nodes are formatted with.
    pub release: Release,
}

/// The jars of `release`, resolving them with Maven the first time. Resolution holds a lock
/// on the cache (every thread and process of every kconform, so two tests starting Apache at
/// once on a fresh machine do not copy jars over each other) and copies into a directory of
/// its own, renamed into place once whole: a resolution killed halfway leaves no half a `libs`.
pub fn resolve_jars(release: &Release) -> Result<Jars, ApacheError> {
    let dir = cache_dir(release);
    let version = release.version();
    let libs = resolve_project(
        &dir,
        &pom(release),
        &format!("kafka_2.13-{version}.jar"),
        &version,
    )?;
    Ok(Jars {
        libs,
        release: *release,
    })
}

/// The runtime jars of the Maven project `pom` in `dir/libs`, resolving them the first time:
/// under the cache's lock, into a directory of its own renamed into place once `expect` is
/// there. `what` names it in a refusal (a version). The Apache broker's jars, and the Streams
/// programs beside them.
pub fn resolve_project(
    dir: &Path,
    pom: &str,
    expect: &str,
    what: &str,
) -> Result<PathBuf, ApacheError> {
    let libs = dir.join("libs");
    let done = dir.join("resolved");
    if done.exists() {
        return Ok(libs);
    }
    std::fs::create_dir_all(dir)?;
    let _lock = CacheLock::take(&dir.join("resolve.lock"))?;
    // Another holder may have resolved while this one waited.
    if done.exists() {
        return Ok(libs);
    }
    let what = what.to_owned();
    std::fs::write(dir.join("pom.xml"), pom)?;
    tracing::info!(what, dir = %dir.display(), "resolving jars with Maven");
    let partial = dir.join(format!("libs.partial-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&partial);
    let out = Command::new("mvn")
        .args(["-B", "-q", "-f"])
        .arg(dir.join("pom.xml"))
        .arg("org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy-dependencies")
        .arg("-DincludeScope=runtime")
        .arg(format!("-DoutputDirectory={}", partial.display()))
        .output()
        .map_err(|e| ApacheError::Resolve(what.clone(), e.to_string()))?;
    if !out.status.success() {
        let _ = std::fs::remove_dir_all(&partial);
        let output = String::from_utf8_lossy(&out.stdout);
        let log = dir.join("resolve.log");
        let _ = std::fs::write(&log, output.as_bytes());
        return Err(ApacheError::Resolve(
            what,
            format!(
                "{} (Maven's output: {})",
                maven_reason(&output),
                log.display()
            ),
        ));
    }
    if !partial.join(expect).exists() {
        let _ = std::fs::remove_dir_all(&partial);
        return Err(ApacheError::Resolve(
            what,
            format!("{} missing after resolution", libs.join(expect).display()),
        ));
    }
    let _ = std::fs::remove_dir_all(&libs);
    std::fs::rename(&partial, &libs)?;
    std::fs::write(&done, &what)?;
    Ok(libs)
}

/// `text` without terminal colour codes (`ESC [ n m`): Maven colours its output even when
/// piped, and so does a broker's logger (kconform reads last words from its log).
pub(crate) fn without_colour_codes(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' && chars.peek() == Some(&'[') {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The line of Maven's output that says why it failed (its first `[ERROR]`, without colour
/// codes or the goal's preamble), for a one-line refusal; the whole output is kept in a file.
fn maven_reason(output: &str) -> String {
    // Maven colours its output even when piped.
    let plain = without_colour_codes(output);
    let first = plain
        .lines()
        .filter_map(|l| l.trim().strip_prefix("[ERROR]"))
        .map(str::trim)
        .find(|l| !l.is_empty());
    match first {
        Some(line) => line
            .split_once("apache-kafka-libs: ")
            .map_or(line, |(_, why)| why)
            .to_owned(),
        None => tail(&plain, 5),
    }
}

/// An exclusive lock on a file (`flock`), held until dropped: across threads (each takes its
/// own descriptor) and processes. Waiting is said once in the log; a holder that never lets go
/// (a hung Maven) is given up on after [`LOCK_PATIENCE`].
pub(crate) struct CacheLock {
    /// The locked file: closing it (on drop) lets the next holder in.
    _held: std::fs::File,
}

/// How long a resolution waits for another to finish: a first resolution downloads about
/// 100 jars.
const LOCK_PATIENCE: Duration = Duration::from_secs(15 * 60);

impl CacheLock {
    pub(crate) fn take(path: &Path) -> Result<CacheLock, ApacheError> {
        use std::os::fd::AsRawFd;
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)?;
        let started = Instant::now();
        let mut said = false;
        // SAFETY: flock on a descriptor this function owns; no memory is involved.
        while unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
            if started.elapsed() > LOCK_PATIENCE {
                return Err(ApacheError::Resolve(
                    "(any)".into(),
                    format!(
                        "another resolution has held {} for over {} s",
                        path.display(),
                        LOCK_PATIENCE.as_secs()
                    ),
                ));
            }
            if !said {
                tracing::info!("waiting for another resolution of the Apache jars to finish");
                said = true;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        Ok(CacheLock { _held: file })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// Two resolutions at once (two tests starting Apache on a fresh machine raced Maven's copies
    /// into one `libs` and one failed): the second waits until the first lets go.
    #[test]
    fn the_cache_lock_lets_one_holder_in_at_a_time() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("resolve.lock");
        let first = CacheLock::take(&path).unwrap();
        let released = Arc::new(Mutex::new(None::<Instant>));
        let (p, r) = (path.clone(), released.clone());
        let second = std::thread::spawn(move || {
            let _lock = CacheLock::take(&p).unwrap();
            let at = Instant::now();
            (
                at,
                r.lock()
                    .unwrap()
                    .expect("taken only after the first let go"),
            )
        });
        std::thread::sleep(Duration::from_millis(400));
        *released.lock().unwrap() = Some(Instant::now());
        drop(first);
        let (taken, let_go) = second.join().unwrap();
        assert!(taken >= let_go);
    }

    #[test]
    fn mavens_refusal_is_one_line_without_its_colours() {
        let out = "\u{1b}[0m[ERROR] Failed to execute goal on project apache-kafka-libs: Could not resolve dependencies for project local.kconform:apache-kafka-libs:pom:1: org.apache.kafka:kafka_2.13:jar:4.4.7 was not found\n[ERROR] \n[ERROR] To see the full stack trace\n\u{1b}[0m";
        assert_eq!(
            maven_reason(out),
            "Could not resolve dependencies for project local.kconform:apache-kafka-libs:pom:1: org.apache.kafka:kafka_2.13:jar:4.4.7 was not found"
        );
        assert_eq!(
            maven_reason("no error here\nat all"),
            "no error here\nat all"
        );
    }

    #[test]
    fn the_pom_names_the_release_and_its_logging_binding() {
        let pom37 = pom(&Release::CLAIMED);
        assert!(pom37.contains("<version>3.7.2</version>") && pom37.contains("reload4j"));
        let pom44 = pom(&Release::parse("4.4").unwrap());
        assert!(pom44.contains("<version>4.4.0</version>"), "{pom44}");
        assert!(
            pom44.contains("log4j-slf4j-impl") && !pom44.contains("reload4j"),
            "a 4.x broker logs through Log4j 2, bound to SLF4J: {pom44}"
        );
    }
}
