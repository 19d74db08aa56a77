//! `kconform fuzz init-decoders`: the cargo-fuzz crate a kaas engineer starts from, written into
//! their decoder crate ([`kconform_wire::skeleton`]): the manifest naming their package and
//! kconform-wire, the target with the one function they fill in, and the seed corpus.

use std::path::{Path, PathBuf};

use kconform_wire::skeleton;

/// Why the skeleton was not written.
#[derive(Debug, thiserror::Error)]
pub enum InitError {
    /// The crate folder has no Cargo.toml.
    #[error("{0}: no Cargo.toml there (give the folder of your decoder crate's manifest)")]
    NotACrate(PathBuf),
    /// Its Cargo.toml does not read.
    #[error("{0}: {1}")]
    Manifest(PathBuf, String),
    /// Files of the skeleton are there already.
    #[error("{} already has {} (--force writes over them)", .0.display(), .1.join(", "))]
    Exists(PathBuf, Vec<String>),
    /// No kconform-wire to name by path, and none given.
    #[error("no kconform-wire to depend on: give --wire-dep 'path = \"...\"' or 'git = \"...\"'")]
    NoWire,
    /// A write failed.
    #[error("{0}: {1}")]
    Io(PathBuf, std::io::Error),
}

/// What was written.
#[derive(Debug)]
pub struct Written {
    /// The skeleton's folder.
    pub folder: PathBuf,
    /// The package the fuzz crate depends on, if the manifest names one.
    pub package: Option<String>,
    /// Files written (the corpus among them).
    pub files: usize,
    /// Of them, seed inputs.
    pub corpus: usize,
    /// How the manifest names kconform-wire.
    pub wire: String,
}

/// The kconform-wire this binary was built from, by path, when it is still there.
pub fn built_from() -> Option<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()?
        .join("kconform-wire");
    let dir = dir.canonicalize().ok()?;
    dir.join("Cargo.toml")
        .exists()
        .then(|| format!("path = {:?}", dir.display().to_string()))
}

/// Writes the skeleton into the crate at `krate`; `wire` as [`built_from`] when `None`.
pub fn init(krate: &Path, wire: Option<String>, force: bool) -> Result<Written, InitError> {
    let manifest = krate.join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest)
        .map_err(|_| InitError::NotACrate(krate.to_path_buf()))?;
    let table: toml::Table =
        toml::from_str(&text).map_err(|e| InitError::Manifest(manifest.clone(), e.to_string()))?;
    let package = table
        .get("package")
        .and_then(|p| p.get("name"))
        .and_then(|n| n.as_str())
        .map(str::to_owned);
    let wire = wire.or_else(built_from).ok_or(InitError::NoWire)?;
    let files = skeleton::files(package.as_deref(), &wire);
    let there: Vec<String> = files
        .iter()
        .filter(|f| !f.path.contains("/corpus/") && krate.join(&f.path).exists())
        .map(|f| f.path.clone())
        .collect();
    if !there.is_empty() && !force {
        return Err(InitError::Exists(krate.to_path_buf(), there));
    }
    for f in &files {
        let path = krate.join(&f.path);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| InitError::Io(dir.to_path_buf(), e))?;
        }
        std::fs::write(&path, &f.bytes).map_err(|e| InitError::Io(path.clone(), e))?;
    }
    Ok(Written {
        folder: krate.join(skeleton::FOLDER),
        package,
        files: files.len(),
        corpus: files.iter().filter(|f| f.path.contains("/corpus/")).count(),
        wire,
    })
}

impl Written {
    /// What was done and what to do next, for people.
    pub fn summary(&self) -> String {
        format!(
            "wrote {} ({} files, {} seed inputs), depending on {} and kconform-wire ({})\n\
             next: fill in `decode` in {}/src/lib.rs (for {}), then\n  \
             cd {} && cargo fuzz run --fuzz-dir {} {}",
            self.folder.display(),
            self.files,
            self.corpus,
            self.package
                .as_deref()
                .unwrap_or("no package (a workspace root: add yours)"),
            self.wire,
            skeleton::FOLDER,
            skeleton::TARGET,
            self.folder.parent().unwrap_or(Path::new(".")).display(),
            skeleton::FOLDER,
            skeleton::TARGET,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_skeleton_is_written_once_and_names_the_users_package() {
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(
            init(dir.path(), None, false),
            Err(InitError::NotACrate(_))
        ));
        std::fs::write(
            dir.path().join("Cargo.toml"),
            "[package]\nname = \"kaas-codec\"\n",
        )
        .unwrap();
        let w = init(dir.path(), Some("path = \"/w\"".into()), false).unwrap();
        assert_eq!(w.package.as_deref(), Some("kaas-codec"));
        assert!(w.corpus > 100, "{}", w.corpus);
        let manifest = std::fs::read_to_string(dir.path().join("fuzz-apache/Cargo.toml")).unwrap();
        assert!(
            manifest.contains("kaas-codec = { path = \"..\" }"),
            "{manifest}"
        );
        assert!(
            manifest.contains("kconform-wire = { path = \"/w\" }"),
            "{manifest}"
        );
        let target = dir.path().join("fuzz-apache/src/lib.rs");
        assert!(std::fs::read_to_string(&target)
            .unwrap()
            .contains("// use kaas_codec::...;"));
        let again = init(dir.path(), Some("path = \"/w\"".into()), false).unwrap_err();
        assert!(again.to_string().contains("--force"), "{again}");
        init(dir.path(), Some("path = \"/w\"".into()), true).unwrap();
    }
}
