//! The decoder crate under test: tansu-sans-io 0.6.0 from crates.io (tansu's sans-io Kafka
//! codec), exactly as published. `fuzz-apache/` is what `kconform fuzz init-decoders --crate
//! examples/decoders-tansu` wrote, with `decode` filled in for tansu's `Frame`.

pub use tansu_sans_io;
