#!/usr/bin/env bash
# Pipeline benchmark (issue: staged, cached, parallel cooking).
# Generates a project of N varied bipeds (3 clips each; default 334 files =
# 1,002 clips), then for --jobs 1 and --jobs 2 measures: a cold cook (empty
# cache), a warm no-op cook, and a re-cook after a quality-profile change,
# with wall time, peak RSS and the stage counters that prove what re-ran;
# then the stage cache's size after a cold cook against the sources'.
# Usage: tools/bench-pipeline.sh [N] [WORKDIR]
set -euo pipefail
N=${1:-334}
WORK=${2:-$(mktemp -d /tmp/ludus-bench.XXXXXX)}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
[ -n "${SKIP_BUILD:-}" ] || cargo build --release -q -p ludus-anim-cooker -p ludus-anim-fixture-gen
BIN="${BIN:-$ROOT/target/release/ludus-anim}"
mkdir -p "$WORK"
"$ROOT/target/release/fixture-gen" --variants "$N" "$WORK/src" >/dev/null
sed 's/name = "standard"/name = "bench"/' profiles/standard.toml > "$WORK/bench.toml"
cat > "$WORK/ludus-anim.toml" <<TOML
[project]
output = "out"
cache = "cache"
profile = "bench.toml"

[[asset]]
sources = ["src/*.glb"]
TOML
cd "$WORK"
run() { # label jobs
  local t0 t1
  t0=$(date +%s.%N)
  /usr/bin/time -f "%M" -o rss.txt "$BIN" cook --jobs "$2" > cook.out 2> cook.err || { cat cook.err; exit 1; }
  t1=$(date +%s.%N)
  python3 - "$1" "$2" "$t0" "$t1" <<'PY'
import json, sys
label, jobs, t0, t1 = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
rss_mb = int(open("rss.txt").read().split()[-1]) / 1024
r = json.load(open("out/report.json"))
t = r["totals"]
if "up to date" in open("cook.out").read():
    # Nothing cooked or written: report.json is the last cook's.
    ran = "nothing (up to date)"
else:
    st = r["stages"]
    ran = ", ".join(f"{k} {v['misses']}" for k, v in st.items() if v["misses"]) or "nothing"
print(f"| {label:<22} | {jobs:>4} | {t1 - t0:>8.2f} | {rss_mb:>8.1f} | {t['clips']:>5} | {ran} |")
PY
}
echo "| cook                   | jobs | wall (s) | RSS (MB) | clips | stages that ran (misses) |"
echo "|---|---|---|---|---|---|"
for jobs in 1 2; do
  rm -rf cache out
  sed -i 's/error_threshold_m = 0.0002/error_threshold_m = 0.0001/' bench.toml
  run "cold" "$jobs"
  src_kb=$(du -sk --apparent-size src | cut -f1)
  cache_kb=$(du -sk --apparent-size cache | cut -f1)
  run "warm no-op" "$jobs"
  sed -i 's/error_threshold_m = 0.0001/error_threshold_m = 0.0002/' bench.toml
  run "profile threshold change" "$jobs"
done
echo "stage cache after a cold cook: $((cache_kb / 1024)) MiB for $((src_kb / 1024)) MiB of sources ($(python3 -c "print(round($cache_kb / $src_kb, 2))")x)"
echo "(project: $WORK, $N files)"
