#!/usr/bin/env bash
# How the HTML report holds up on a large run: the page of a clean run (kaas-ref against the
# recorded Apache 3.7.2 answers) beside the page of the same run against kaas-ref behind a
# `kconform proxy` mutant that changes every answer (throttle_time_ms plus one: dozens of root
# causes, over a thousand differences), each measured in Debian's headless Chromium: bytes,
# first contentful paint and load with the causes closed, and with every cause open
# (#open-all). Prints a line per page and the ratios large/clean. A measurement, not a test:
# timings vary with the machine, so nothing here fails on a figure.
#
#   ci/html-paint.sh            # pages and figures in $OUT (default: a temporary directory)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
out="${OUT:-$(mktemp -d)}"
mkdir -p "$out"
browser="$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)"
[ -n "$browser" ] || { echo "html-paint: no chromium here (apt-get install chromium)" >&2; exit 2; }
cargo build -q --bin kconform
kconform="$root/target/debug/kconform"

"$kconform" run --target ref --target apache-recorded --html "$out/clean.html" --json "$out/clean.json" >/dev/null 2>"$out/clean.log" || true
"$kconform" proxy --upstream ref --api all --mutation add-one:throttle_time_ms >"$out/proxy.out" 2>&1 &
proxy=$!
trap 'kill $proxy 2>/dev/null || true' EXIT
for _ in $(seq 50); do [ -s "$out/proxy.out" ] && break; sleep 0.2; done
addr="$(head -1 "$out/proxy.out")"
"$kconform" run --target "external=$addr" --target apache-recorded --html "$out/large.html" --json "$out/large.json" >/dev/null 2>"$out/large.log" || true

# measure PAGE: "bytes causes differences fcp load open_fcp open_load" (ms, each the median of
# three loads; headless Chromium does not report a paint on every load).
measure() {
  python3 - "$1" "$browser" <<'PY'
import json, re, statistics, subprocess, sys
page, browser = sys.argv[1], sys.argv[2]
text = open(page, encoding="utf-8").read()
probe = ("<script>setTimeout(function(){var p=performance.getEntriesByName('first-contentful-paint')[0]"
         "||performance.getEntriesByName('first-paint')[0];var n=performance.getEntriesByType('navigation')[0];"
         "document.body.dataset.fcp=p?p.startTime.toFixed(0):'none';"
         "document.body.dataset.load=n?n.loadEventEnd.toFixed(0):'none'},1500)</script></body>")
probed = page + ".probe.html"
open(probed, "w", encoding="utf-8").write(text.replace("</body>", probe))
figures = []
for hash in ["", "#open-all"]:
    fcp, load = [], []
    for _ in range(3):
        dom = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu",
                              "--virtual-time-budget=4000", "--dump-dom", f"file://{probed}{hash}"],
                             capture_output=True, text=True).stdout
        for name, into in (("fcp", fcp), ("load", load)):
            m = re.search(f'data-{name}="([0-9]+)"', dom)
            if m:
                into.append(int(m.group(1)))
    figures += [str(int(statistics.median(v))) if v else "n/a" for v in (fcp, load)]
report = json.load(open(page[:-len(".html")] + ".json"))
print(len(text.encode()), len(report["causes"]), len(report["differences"]), *figures)
PY
}

read -r cb cc cd cf cl of ol <<<"$(measure "$out/clean.html")"
read -r lb lc ld lf ll lof lol <<<"$(measure "$out/large.html")"
printf '%-6s %9s %7s %12s %10s %9s %10s %9s\n' page bytes causes differences fcp_ms load_ms open_fcp open_load
printf '%-6s %9s %7s %12s %10s %9s %10s %9s\n' clean "$cb" "$cc" "$cd" "$cf" "$cl" "$of" "$ol"
printf '%-6s %9s %7s %12s %10s %9s %10s %9s\n' large "$lb" "$lc" "$ld" "$lf" "$ll" "$lof" "$lol"
python3 -c "
import sys
cb,lb,cl,ll,ol,lol=sys.argv[1:]
ratio=lambda a,b: f'x{float(a)/float(b):.1f}' if a.isdigit() and b.isdigit() else 'n/a'
print(f'large/clean: bytes {ratio(lb,cb)}, load closed {ratio(ll,cl)}, load all open {ratio(lol,ol)}')
" "$cb" "$lb" "$cl" "$ll" "$ol" "$lol"
echo "pages: $out/clean.html $out/large.html"
