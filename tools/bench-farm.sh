#!/usr/bin/env bash
# Build-farm benchmark (issues #13, #48), with a private nginx (WebDAV PUT)
# on 127.0.0.1 as the remote and tools/slow-cache-server.py as a slow one.
# Projects (PROJECT=...):
#   generated  (default) the generated project of tools/bench-pipeline.sh:
#              N varied bipeds, 3 clips each (default 334 files)
#   fixtures   the shared fixtures (LUDUS_SHARED_FIXTURES, else
#              ../shared/fixtures), every glTF, FBX and BVH
#   small      three assets (fixtures/biped.glb, an FBX robot, a BVH walk):
#              a sub-second cook, where a fixed remote cost shows most
# Rows:
#   cold                  empty local cache, no remote (the baseline)
#   cold + upload         empty local cache, empty server, read-write (CI
#                         machine A: what write-behind uploads cost)
#   warm remote           empty local cache, the server holds everything,
#                         read (machine B)
#   warm local            the local cache holds everything (for scale)
#   slow 3 s / slow 10 s  empty local cache, read-write, a server taking
#                         3 s / 10 s per answer
#   slow uploads          lookups answered at once (404), uploads 10 s
#   shard I/3             empty local cache, no remote, shard I of 3
# with wall time, bytes transferred, uploads not sent, remote hits,
# cache notices and the stages that ran; then the ratios to cold. Each
# row's report is kept in WORKDIR/reports/.
# Usage: [PROJECT=...] [PROFILE=release|ci] tools/bench-farm.sh [N] [WORKDIR]
#        (JOBS=2 by default)
set -euo pipefail
N=${1:-334}
WORK=${2:-$(mktemp -d /tmp/ludus-bench-farm.XXXXXX)}
JOBS=${JOBS:-2}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
NGINX=${NGINX:-/usr/sbin/nginx}
cd "$ROOT"
[ -x "$NGINX" ] || { echo "needs nginx with the DAV module (apt-get install nginx-light)"; exit 1; }
# PROFILE=ci measures the binary the tests use (quicker to build).
PROFILE=${PROFILE:-release}
[ -n "${SKIP_BUILD:-}" ] || cargo build --profile "$PROFILE" -q -p ludus-anim-cooker -p ludus-anim-fixture-gen
BIN="$ROOT/target/$PROFILE/ludus-anim"
mkdir -p "$WORK"
FX=${LUDUS_SHARED_FIXTURES:-$ROOT/../shared/fixtures}
case "${PROJECT:-generated}" in
  generated)
    "$ROOT/target/$PROFILE/fixture-gen" --variants "$N" "$WORK/src" >/dev/null
    sed 's/name = "standard"/name = "bench"/' profiles/standard.toml > "$WORK/bench.toml"
    printf '[project]\noutput = "out"\nprofile = "bench.toml"\n\n[[asset]]\nsources = ["src/*.glb"]\n' \
      > "$WORK/ludus-anim.toml" ;;
  fixtures)
    for d in gltf fbx bvh; do cp -r "$FX/$d" "$WORK/$d"; done
    SOURCES=$(awk -F'\t' 'NR > 1 && $2 ~ /^(gltf|fbx|bvh)\// {printf "%s\"%s\"", sep, $2; sep=", "}' "$FX/MANIFEST.tsv")
    printf '[project]\noutput = "out"\n\n[[asset]]\nsources = [%s]\n' "$SOURCES" > "$WORK/ludus-anim.toml" ;;
  small)
    mkdir -p "$WORK/src"
    cp fixtures/biped.glb "$WORK/src/"; cp "$FX/fbx/ozz_robot.fbx" "$WORK/src/robot.fbx"
    cp "$FX/bvh/cmu_12_01_walk.bvh" "$WORK/src/walk.bvh"
    printf '[project]\noutput = "out"\n\n[[asset]]\nsources = ["src/*"]\n' > "$WORK/ludus-anim.toml" ;;
  *) echo "PROJECT must be generated, fixtures or small"; exit 1 ;;
esac
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
SLOW_PID=
trap 'kill "$NGINX_PID" 2>/dev/null || true; [ -z "$SLOW_PID" ] || kill "$SLOW_PID" 2>/dev/null || true' EXIT
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

# tools/slow-cache-server.py on a free port, answering after $1 s (lookups)
# and $2 s (uploads); sets SLOW_URL and SLOW_PID.
slow_server() {
  local port
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  python3 "$ROOT/tools/slow-cache-server.py" "$port" "$1" "$2" &
  SLOW_PID=$!
  python3 - "$port" <<'PY'
import socket, sys, time
for _ in range(100):
    try:
        socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=1).close()
        sys.exit(0)
    except OSError:
        time.sleep(0.05)
sys.exit("the slow server did not start")
PY
  SLOW_URL="http://127.0.0.1:$port/ludus"
}
stop_slow() { kill "$SLOW_PID" 2>/dev/null || true; wait "$SLOW_PID" 2>/dev/null || true; SLOW_PID=; }

run() { # label cache-dir report-file [cook args...]
  local label=$1 cache=$2 report=$3 t0 t1
  shift 3
  t0=$(date +%s.%N)
  "$BIN" cook --jobs "$JOBS" --cache "$cache" "$@" > /dev/null 2> cook.err || { cat cook.err; exit 1; }
  t1=$(date +%s.%N)
  mkdir -p reports && cp "out/$report" "reports/${label//[ \/]/-}.json"
  python3 - "$label" "$t0" "$t1" "out/$report" <<'PY'
import json, sys
label, t0, t1, path = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
r = json.load(open(path))
ran = ", ".join(f"{k} {v['misses']}" for k, v in r["stages"].items() if v["misses"]) or "nothing"
rem = r.get("remote")
down = up = hits = unsent = 0
if rem:
    unsent = rem["pending_uploads"]
    for s in rem["stages"].values():
        down += s["bytes_down"]; up += s["bytes_up"]; hits += s["hits"]
        unsent += s["dropped_uploads"] + s["upload_errors"]
notices = len(r.get("cache_notices", []))
wall = t1 - t0
open("walls.txt", "a").write(f"{label}\t{wall}\n")
mb = lambda b: f"{b / 1e6:.1f}"
print(f"| {label:<13} | {wall:>8.2f} | {mb(down):>9} | {mb(up):>7} | {unsent:>8} | {hits:>11} | {notices:>7} | {r['totals']['clips']:>5} | {ran} |")
PY
}
rm -f walls.txt
echo "| cook          | wall (s) | down (MB) | up (MB) | not sent | remote hits | notices | clips | stages that ran (misses) |"
echo "|---|---|---|---|---|---|---|---|---|"
rm -rf cache-* out
run "cold" cache-cold report.json
rm -rf out
run "cold + upload" cache-a report.json --remote-cache "$URL" --remote-cache-mode read-write
rm -rf out
run "warm remote" cache-b report.json --remote-cache "$URL"
rm -rf out
run "warm local" cache-b report.json --remote-cache "$URL"
for row in "slow 3 s:3:3" "slow 10 s:10:10" "slow uploads:0:10"; do
  IFS=: read -r label get put <<< "$row"
  slow_server "$get" "$put"
  rm -rf out cache-slow
  run "$label" cache-slow report.json --remote-cache "$SLOW_URL" --remote-cache-mode read-write
  stop_slow
done
rm -rf out
for i in 1 2 3; do
  run "shard $i/3" "cache-shard-$i" "report.shard-$i-of-3.json" --shard "$i/3"
done
python3 - <<'PY'
w = {k: float(v) for k, v in (l.rstrip("\n").split("\t") for l in open("walls.txt"))}
cold = w["cold"]
print(f"\ncold / warm remote = {cold / w['warm remote']:.1f}x")
for k in ["cold + upload", "slow 3 s", "slow 10 s", "slow uploads"]:
    print(f"{k} / cold = {w[k] / cold:.2f}x (goal: <= 2x)")
shards = [w[f"shard {i}/3"] for i in (1, 2, 3)]
print(f"shards: slowest {max(shards):.2f} s, fastest {min(shards):.2f} s; cold / slowest shard = {cold / max(shards):.2f}x")
PY
echo "server holds $(ls nginx/root/ludus/ac | wc -l) entries, $(du -sh nginx/root/ludus/ac | cut -f1); project: ${PROJECT:-generated} in $WORK, --jobs $JOBS"
