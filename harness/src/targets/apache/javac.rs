//! One Java program kconform carries as source, compiled with `javac` against the kafka-clients
//! jars of an Apache release the Apache target caches (3.7.2 unless another is asked for; no
//! other build tool at run time): the Java client workloads
//! ([`crate::clients::java`]) and Apache's parser as an oracle ([`super::parser`]). Each source
//! compiles once into a directory named by its hash, so an edited source compiles again.

use std::path::PathBuf;
use std::process::Command;

use super::release::Release;
use super::ApacheError;

/// Why a program could not be compiled.
#[derive(Debug, thiserror::Error)]
pub enum CompileError {
    /// No Java or no jars.
    #[error(transparent)]
    Setup(#[from] ApacheError),
    /// javac refused the program.
    #[error("javac failed:\n{0}")]
    Javac(String),
    /// Local files.
    #[error("i/o: {0}")]
    Io(#[from] std::io::Error),
}

/// The directory of `class`'s compiled classes (the public class of `source`) against the
/// jars of `release`, compiling it first when this source has not been compiled against them.
pub fn compile(class: &str, source: &str, release: &Release) -> Result<PathBuf, CompileError> {
    super::available()?;
    let jars = super::jars::resolve_jars(release)?;
    // A name per source text: a hash that changes with the toolchain only compiles once more.
    let hash = {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        source.hash(&mut h);
        h.finish()
    };
    let dir = super::jars::cache_dir(&jars.release).join(format!("java-{class}-{hash:016x}"));
    let classes = dir.join("classes");
    if classes.join(format!("{class}.class")).exists() {
        return Ok(classes);
    }
    // Compiled in a directory of this call's own, then renamed into place whole: tests compile
    // the same program at once on a fresh machine, and a JVM started on a class file that
    // another javac was still writing read it truncated ("ClassFormatError: Truncated class
    // file", a fresh machine's CI run).
    std::fs::create_dir_all(&dir)?;
    let work = tempfile::Builder::new()
        .prefix("compiling-")
        .tempdir_in(&dir)?;
    let file = work.path().join(format!("{class}.java"));
    std::fs::write(&file, source)?;
    let compiled = work.path().join("classes");
    let out = Command::new("javac")
        .arg("-cp")
        .arg(format!("{}/*", jars.libs.display()))
        .arg("-d")
        .arg(&compiled)
        .arg(&file)
        .output()?;
    if !out.status.success() {
        return Err(CompileError::Javac(
            String::from_utf8_lossy(&out.stderr).into_owned(),
        ));
    }
    if std::fs::rename(&compiled, &classes).is_err() {
        // Another call's classes came first (ours go with `work`), or an older compile left
        // an incomplete directory, which ours replaces.
        if !classes.join(format!("{class}.class")).exists() {
            std::fs::remove_dir_all(&classes)?;
            std::fs::rename(&compiled, &classes)?;
        }
    }
    Ok(classes)
}

/// The class path for running `classes` compiled against `release`: them, then its jars.
pub fn class_path(classes: &std::path::Path, release: &Release) -> Result<String, ApacheError> {
    let jars = super::jars::resolve_jars(release)?;
    Ok(format!("{}:{}/*", classes.display(), jars.libs.display()))
}
