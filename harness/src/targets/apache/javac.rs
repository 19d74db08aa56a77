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
    let src = dir.join("src");
    std::fs::create_dir_all(&src)?;
    std::fs::create_dir_all(&classes)?;
    let file = src.join(format!("{class}.java"));
    std::fs::write(&file, source)?;
    let out = Command::new("javac")
        .arg("-cp")
        .arg(format!("{}/*", jars.libs.display()))
        .arg("-d")
        .arg(&classes)
        .arg(&file)
        .output()?;
    if !out.status.success() {
        let _ = std::fs::remove_dir_all(&classes);
        return Err(CompileError::Javac(
            String::from_utf8_lossy(&out.stderr).into_owned(),
        ));
    }
    Ok(classes)
}

/// The class path for running `classes` compiled against `release`: them, then its jars.
pub fn class_path(classes: &std::path::Path, release: &Release) -> Result<String, ApacheError> {
    let jars = super::jars::resolve_jars(release)?;
    Ok(format!("{}:{}/*", classes.display(), jars.libs.display()))
}
