#!/usr/bin/env bash
# Build-farm benchmark (issue #13): a cold cook against a warm remote cache
# cook with an empty local cache, on the generated 1,000-clip project of
# tools/bench-pipeline.sh (N varied bipeds, 3 clips each; default 334 files
# = 1,002 clips), with a private nginx (WebDAV PUT) on 127.0.0.1 as the
# remote. Rows:
#   cold                  empty local cache, no remote (the baseline)
#   cold + upload         empty local cache, empty server, read-write (CI
#                         machine A: what write-behind uploads cost)
#   warm remote           empty local cache, the server holds everything,
#                         read (machine B)
#   warm local            the local cache holds everything (for scale)
# with wall time, bytes transferred (the report's remote counters), the
# stages that ran, and the ratio cold / warm remote. Each row's report.json
# is kept in WORKDIR/reports/ (per-stage remote counters).
# Usage: tools/bench-farm.sh [N] [WORKDIR]   (JOBS=2 by default)
set -euo pipefail
N=${1:-334}
WORK=${2:-$(mktemp -d /tmp/ludus-bench-farm.XXXXXX)}
JOBS=${JOBS:-2}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
NGINX=${NGINX:-/usr/sbin/nginx}
cd "$ROOT"
[ -x "$NGINX" ] || { echo "needs nginx with the DAV module (apt-get install nginx-light)"; exit 1; }
[ -n "${SKIP_BUILD:-}" ] || cargo build --release -q -p ludus-anim-cooker -p ludus-anim-fixture-gen
BIN="$ROOT/target/release/ludus-anim"
mkdir -p "$WORK"
"$ROOT/target/release/fixture-gen" --variants "$N" "$WORK/src" >/dev/null
sed 's/name = "standard"/name = "bench"/' profiles/standard.toml > "$WORK/bench.toml"
cat > "$WORK/ludus-anim.toml" <<TOML
[project]
output = "out"
profile = "bench.toml"

[[asset]]
sources = ["src/*.glb"]
TOML
cd "$WORK"

# A private nginx, single process, killed by its PID on exit.
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
rm -rf nginx && mkdir -p nginx/root/ludus nginx/body
USER_LINE=""; [ "$(id -u)" = 0 ] && USER_LINE="user root;"
cat > nginx/nginx.conf <<CONF
$USER_LINE
daemon off;
master_process off;
worker_processes 1;
pid $WORK/nginx/nginx.pid;
error_log $WORK/nginx/error.log warn;
events { worker_connections 256; }
http {
    access_log off;
    client_body_temp_path $WORK/nginx/body;
    client_max_body_size 1g;
    server {
        listen 127.0.0.1:$PORT;
        root $WORK/nginx/root;
        location / { dav_methods PUT; create_full_put_path on; dav_access user:rw; }
    }
}
CONF
"$NGINX" -p "$WORK/nginx" -c "$WORK/nginx/nginx.conf" -e "$WORK/nginx/error.log" &
NGINX_PID=$!
trap 'kill "$NGINX_PID" 2>/dev/null || true' EXIT
echo ready > nginx/root/ready
python3 - "$PORT" <<'PY'
import sys, time, urllib.request
for _ in range(100):
    try:
        urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/ready", timeout=1)
        sys.exit(0)
    except Exception:
        time.sleep(0.05)
sys.exit("nginx did not start")
PY
URL="http://127.0.0.1:$PORT/ludus"

run() { # label cache-dir [cook args...]
  local label=$1 cache=$2 t0 t1
  shift 2
  t0=$(date +%s.%N)
  "$BIN" cook --jobs "$JOBS" --cache "$cache" "$@" > /dev/null 2> cook.err || { cat cook.err; exit 1; }
  t1=$(date +%s.%N)
  mkdir -p reports && cp out/report.json "reports/${label// /-}.json"
  python3 - "$label" "$t0" "$t1" <<'PY'
import json, sys
label, t0, t1 = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
r = json.load(open("out/report.json"))
ran = ", ".join(f"{k} {v['misses']}" for k, v in r["stages"].items() if v["misses"]) or "nothing"
rem = r.get("remote")
down = up = hits = unsent = 0
if rem:
    unsent = rem["pending_uploads"]
    for s in rem["stages"].values():
        down += s["bytes_down"]; up += s["bytes_up"]; hits += s["hits"]
        unsent += s["dropped_uploads"] + s["upload_errors"]
wall = t1 - t0
open("walls.txt", "a").write(f"{label}\t{wall}\n")
mb = lambda b: f"{b / 1e6:.1f}"
print(f"| {label:<13} | {wall:>8.2f} | {mb(down):>9} | {mb(up):>7} | {unsent:>8} | {hits:>11} | {r['totals']['clips']:>5} | {ran} |")
PY
}
rm -f walls.txt
echo "| cook          | wall (s) | down (MB) | up (MB) | not sent | remote hits | clips | stages that ran (misses) |"
echo "|---|---|---|---|---|---|---|---|"
rm -rf cache-* out
run "cold" cache-cold
rm -rf out
run "cold + upload" cache-a --remote-cache "$URL" --remote-cache-mode read-write
rm -rf out
run "warm remote" cache-b --remote-cache "$URL"
rm -rf out
run "warm local" cache-b --remote-cache "$URL"
python3 - <<'PY'
w = dict(l.rstrip("\n").split("\t") for l in open("walls.txt"))
cold, warm = float(w["cold"]), float(w["warm remote"])
print(f"\ncold / warm remote = {cold / warm:.1f}x (goal: >= 10x)")
PY
echo "server holds $(ls nginx/root/ludus/ac | wc -l) entries, $(du -sh nginx/root/ludus/ac | cut -f1); project: $WORK, $N files, --jobs $JOBS"
