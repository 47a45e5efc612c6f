#!/usr/bin/env bash
# Cooking with Bazel, measured (issue #49 item 5; docs/perf/bazel.md).
# Generates the pipeline benchmark's project (N varied bipeds, 3 clips
# each; default 334 files = 1,002 clips) inside a Bazel workspace using
# bazel/, then measures, each from nothing (no stage cache, a fresh Bazel
# output base):
#   1. ludus-anim cook --jobs 2 --no-cache            (one process)
#   2. bazel build --jobs=2, local sandboxed actions  (one action per asset)
#   3. bazel build --jobs=2 --remote_executor         (BuildGrid, 2 bots)
#   4. bazel build against a warm remote cache        (nginx, filled by a
#      local build with --remote_upload_local_results, also timed)
# and the overhead of one process per asset: every asset through
# `cook-asset` one after another against `cook --jobs 1`.
# Needs: bazel (bazel-bootstrap), nginx (nginx-light), a Python with
# buildgrid==0.0.97 (BG_PYTHON, default /tmp/ludus-buildgrid-venv/bin/python).
# Usage: tools/bench-bazel.sh [N] [WORKDIR]
set -euo pipefail
N=${1:-334}
WORK=${2:-$(mktemp -d /tmp/ludus-bazel-bench.XXXXXX)}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BG_PYTHON=${BG_PYTHON:-/tmp/ludus-buildgrid-venv/bin/python}
cd "$ROOT"
[ -n "${SKIP_BUILD:-}" ] || cargo build --release -q -p ludus-anim-cooker -p ludus-anim-fixture-gen
BIN="$ROOT/target/release/ludus-anim"
mkdir -p "$WORK/proj" "$WORK/bazel"
cp bazel/BUILD.bazel bazel/defs.bzl bazel/repositories.bzl "$WORK/bazel/"
[ -d "$WORK/proj/src" ] || "$ROOT/target/release/fixture-gen" --variants "$N" "$WORK/proj/src" >/dev/null
sed 's/name = "standard"/name = "bench"/' profiles/standard.toml > "$WORK/proj/bench.toml"
cat > "$WORK/proj/ludus-anim.toml" <<'TOML'
[project]
output = "out"
profile = "bench.toml"

[[asset]]
sources = ["src/*.glb"]
TOML
cat > "$WORK/proj/BUILD.bazel" <<'EOF'
load("@proj_assets//:assets.bzl", "LUDUS_ANIM_PROJECT")
load("//bazel:defs.bzl", "ludus_anim_project")
exports_files(["ludus-anim.toml"])
ludus_anim_project(name = "anim", project = LUDUS_ANIM_PROJECT)
EOF
cat > "$WORK/WORKSPACE" <<EOF
workspace(name = "bench")
load("//bazel:repositories.bzl", "ludus_anim_repository")
ludus_anim_repository(name = "proj_assets", manifest = "//proj:ludus-anim.toml", tool = "$BIN")
EOF
cd "$WORK"
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for b in "$WORK"/base-*; do [ -d "$b" ] && bazel --output_user_root="$WORK/user-root" --output_base="$b" shutdown 2>/dev/null || true; done
}
trap cleanup EXIT
now() { date +%s.%N; }
row() { # label seconds log
  python3 - "$@" <<'PY'
import json, sys
label, secs = sys.argv[1], float(sys.argv[2])
ran = hits = 0
if len(sys.argv) > 3:
    text = open(sys.argv[3]).read()
    dec = json.JSONDecoder(); i = 0
    while i < len(text):
        while i < len(text) and text[i].isspace(): i += 1
        if i >= len(text): break
        s, i = dec.raw_decode(text, i)
        if s.get("mnemonic") in ("LudusAnimCook", "LudusAnimMerge"):
            if s.get("remoteCacheHit"): hits += 1
            else: ran += 1
    print(f"| {label:<44} | {secs:>8.2f} | {ran:>11} | {hits:>10} |")
else:
    print(f"| {label:<44} | {secs:>8.2f} | {'1 process':>11} | {'-':>10} |")
PY
}
bz() { # output-base args...
  local base=$1; shift
  bazel --output_user_root="$WORK/user-root" --output_base="$WORK/base-$base" --max_idle_secs=120 "$@"
}
build() { # label output-base flags...
  local label=$1 base=$2; shift 2
  bz "$base" build --nobuild //proj:anim >/dev/null 2>&1   # server start, query, analysis
  local t0 t1
  t0=$(now)
  bz "$base" build --noshow_progress --jobs=2 --execution_log_json_file="$WORK/$base.log" "$@" //proj:anim > "$WORK/$base.out" 2>&1 \
    || { tail -30 "$WORK/$base.out"; exit 1; }
  t1=$(now)
  row "$label" "$(python3 -c "print($t1 - $t0)")" "$WORK/$base.log"
}

echo "| run | wall (s) | actions run | cache hits |"
echo "|---|---|---|---|"
cd proj
t0=$(now); "$BIN" --quiet cook --jobs 2 --no-cache --out ../cooked; t1=$(now)
row "ludus-anim cook --jobs 2 --no-cache" "$(python3 -c "print($t1 - $t0)")"
cd ..
build "bazel build --jobs=2, local sandbox" local

# nginx remote cache on loopback.
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
mkdir -p "$WORK/nginx/root/ludus" "$WORK/nginx/body"
cat > "$WORK/nginx/nginx.conf" <<EOF
user root;
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
        location / { dav_methods PUT DELETE MKCOL; create_full_put_path on; dav_access user:rw; }
    }
}
EOF
/usr/sbin/nginx -p "$WORK/nginx" -c "$WORK/nginx/nginx.conf" & PIDS+=($!)
sleep 1
RC="--remote_cache=http://127.0.0.1:$PORT/ludus"
build "bazel build --jobs=2, local + upload to nginx" fill "$RC" --remote_upload_local_results
build "bazel build, fresh output base, warm nginx" warm "$RC"

# BuildGrid with two bots on loopback.
GPORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
mkdir -p "$WORK/grid"
sed -e "s/PORT/$GPORT/" -e "s#STATE#$WORK/grid/state.db#" "$ROOT/tests/reapi/buildgrid.yml" > "$WORK/grid/bg.yml"
"$(dirname "$BG_PYTHON")/bgd" server start "$WORK/grid/bg.yml" > "$WORK/grid/server.log" 2>&1 & PIDS+=($!)
for i in 1 2; do
  "$BG_PYTHON" "$ROOT/tests/reapi/buildgrid_bot.py" "127.0.0.1:$GPORT" "$WORK/grid/bot-$i" "bot-$i" 3600 > "$WORK/grid/bot-$i.log" 2>&1 & PIDS+=($!)
done
for _ in $(seq 100); do python3 -c "import socket; socket.create_connection(('127.0.0.1', $GPORT))" 2>/dev/null && break; sleep 0.2; done
build "bazel build --jobs=2, BuildGrid 2 bots" remote "--remote_executor=grpc://127.0.0.1:$GPORT"

for b in local warm remote; do
  diff -r cooked/packages "$(bz $b info bazel-bin 2>/dev/null)/proj/anim/packages" >/dev/null \
    || { echo "bazel build ($b) packages differ from cook's"; exit 1; }
done
echo "(packages of every bazel build identical to cook's)"

# One process per asset against one process for all, sequentially.
cd proj
"$BIN" query > ../query.json
t0=$(now); "$BIN" --quiet cook --jobs 1 --no-cache --out ../cooked-1; t1=$(now)
one=$(python3 -c "print($t1 - $t0)")
t0=$(now)
python3 - "$BIN" <<'PY'
import json, subprocess, sys
q = json.load(open("../query.json"))
for a in q["assets"]:
    args = [sys.argv[1], "--quiet", "cook-asset", a["source"], "--manifest", "ludus-anim.toml",
            "--out", "../frags/" + a["name"]]
    for i in a["all_inputs"]:
        args += ["--input", i]
    subprocess.run(args, check=True)
PY
t1=$(now)
each=$(python3 -c "print($t1 - $t0)")
echo
echo "one process, --jobs 1: ${one} s; one cook-asset process per asset, one after another: ${each} s ($(python3 -c "print(round(($each - $one) / $(ls src | wc -l) * 1000, 1))") ms more per asset)"
echo "(project: $WORK, $(ls src | wc -l) files)"
