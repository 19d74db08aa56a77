//! Apache's message definitions ([`kconform_wire::schema`]), and the check that the embedded
//! files are Apache's own: it reads them out of the kafka-clients jars the Apache target caches.

pub use kconform_wire::schema::*;

#[cfg(test)]
mod tests {
    use super::*;

    /// The embedded files are Apache's, byte for byte: compared with the kafka-clients jar the
    /// Apache target caches for their release, when it is there (skipped, saying why, when it
    /// is not).
    #[test]
    fn schema_files_are_apaches() {
        let claimed = crate::targets::apache::Release::CLAIMED;
        same_as_in_the_jar(&claimed, file_names(), file_text, "kconform-wire/schema");
        let later = crate::targets::apache::Release::parse(LATER_RELEASE).unwrap();
        same_as_in_the_jar(
            &later,
            later_file_names(),
            later_file_text,
            "kconform-wire/schema/4.4.0",
        );
    }

    fn same_as_in_the_jar(
        release: &crate::targets::apache::Release,
        files: impl Iterator<Item = String>,
        text: fn(&str) -> Option<&'static str>,
        folder: &str,
    ) {
        let jar = crate::targets::apache::jars::cache_dir(release)
            .join("libs")
            .join(format!("kafka-clients-{}.jar", release.version()));
        if !jar.exists() {
            println!(
                "skipped: {} is not cached (run an Apache {} target once)",
                jar.display(),
                release.version()
            );
            return;
        }
        for file in files {
            let out = std::process::Command::new("unzip")
                .arg("-p")
                .arg(&jar)
                .arg(format!("common/message/{file}"))
                .output();
            let Ok(out) = out else {
                println!("skipped: no `unzip` to read {}", jar.display());
                return;
            };
            assert!(out.status.success(), "{file} is not in {}", jar.display());
            assert_eq!(
                String::from_utf8_lossy(&out.stdout),
                text(&file).unwrap(),
                "{folder}/{file} differs from Apache's"
            );
        }
    }
}
