//! Writes the fuzzers' seed corpora: every sample message of every API, direction and version,
//! in the fuzz input format (a selector byte for direction and version, then the body).
//!
//! Run from anywhere: `cargo run -p reference-broker --example write_fuzz_seeds`. The
//! `corpus_replay` test fails when the committed seeds differ from what this writes.

use std::path::Path;

use reference_broker::codec::differential::fuzz_selector;
use reference_broker::codec::samples::{encoded_samples, fuzz_target_name, seed_file_name};
use reference_broker::codec::{ApiKey, Direction};

fn main() -> std::io::Result<()> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus");
    let mut written = 0;
    for api in ApiKey::ALL {
        let dir = root.join(fuzz_target_name(api));
        std::fs::create_dir_all(&dir)?;
        for direction in [Direction::Request, Direction::Response] {
            for (i, (version, body)) in encoded_samples(api, direction).into_iter().enumerate() {
                let mut data = vec![fuzz_selector(direction, version)];
                data.extend(body);
                std::fs::write(dir.join(seed_file_name(direction, version, i)), data)?;
                written += 1;
            }
        }
    }
    println!("wrote {written} seed files under {}", root.display());
    Ok(())
}
