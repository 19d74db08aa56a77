#!/bin/bash -eu
# ClusterFuzzLite's build step (run inside its builder image, which sets SRC, OUT and the
# sanitizer flags): every cargo-fuzz target of fuzz/, copied to $OUT with its seed corpus
# zipped beside it (<target>_seed_corpus.zip, as ClusterFuzzLite looks for).
#
# Outside the image (to check the script), SRC being a directory that holds this checkout as
# kconform/: OUT=/tmp/cflite-out SRC=/path/to/parent bash .clusterfuzzlite/build.sh
cd "$SRC/kconform/fuzz"
targets=$(cargo fuzz list)
# --release with debug assertions, as OSS-Fuzz builds Rust; the image's nightly needs no
# RUSTC_BOOTSTRAP, a stable toolchain outside it does.
RUSTC_BOOTSTRAP=1 cargo fuzz build -O --debug-assertions
# fuzz/ is a workspace of its own: its targets land under fuzz/target.
built=target/x86_64-unknown-linux-gnu/release
mkdir -p "$OUT"
for target in $targets; do
  cp "$built/$target" "$OUT/"
  if [ -d "corpus/$target" ]; then
    (cd "corpus/$target" && zip -q -r "$OUT/${target}_seed_corpus.zip" .)
  fi
done
echo "built $(echo $targets | wc -w) targets into $OUT"
