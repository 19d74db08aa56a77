#!/usr/bin/env bash
# Benchmarks our transaction-API codecs against kafka-protocol's (criterion), then prints the
# time ratio ours/kafka-protocol for encode and decode of each message at its highest version.
# A ratio below 1.00 means ours is faster.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo bench -p reference-broker --bench codec -- --noplot "$@"
# Function ids "encode/ours" are stored by criterion as directories "encode_ours".
python3 - <<'PY'
import json, pathlib
root = pathlib.Path("target/criterion")
def mean(group, fn):
    p = root / group / fn / "new" / "estimates.json"
    return json.loads(p.read_text())["mean"]["point_estimate"] if p.exists() else None
rows, worst = [], 0.0
for group in sorted(d.name for d in root.iterdir() if d.is_dir() and d.name != "report"):
    for op in ("encode", "decode"):
        ours, theirs = mean(group, f"{op}_ours"), mean(group, f"{op}_kafka-protocol")
        if ours and theirs:
            rows.append((group, op, ours, theirs, ours / theirs))
            worst = max(worst, ours / theirs)
print(f"\n{'message':32} {'op':6} {'ours ns':>9} {'kp ns':>9} {'ours/kp':>8}")
for g, op, o, t, r in rows:
    print(f"{g:32} {op:6} {o:9.1f} {t:9.1f} {r:8.2f}")
if len(rows) != 24:
    raise SystemExit(f"expected 24 results (12 messages x encode/decode), found {len(rows)}")
print(f"\nworst ratio: {worst:.2f} ({'ours no slower anywhere' if worst <= 1.0 else 'ours slower somewhere'})")
PY
