#!/usr/bin/env bash
# Decode time against ACL on a day ACL cannot be run (#17).
#
# ACL's figures in ../shared/anchors/acl.md were measured side by side with
# this project's decoder as it was when #17 was filed (commit $FILING), on a
# quiet day. This machine's speed moves by up to 2x from day to day and
# within a run, so today's figures cannot be set against those fixed
# numbers. What can be measured today is the ratio of this checkout's
# decoder to the filing-time one: tools/decode-ab runs both in one process,
# interleaved chunk by chunk with ACL's method (copies in rotation, as many
# as ACL's benchmark makes: 13,953 for 31 joints, 5,768 for 75),
# so a slow phase hits both alike (a filing-against-filing control gives
# 0.99-1.02). How the copies' state lies in memory still moves a ratio by
# up to 30% on some clips (tools/decode-ab's header), and whole runs of
# the same build differ by up to 30% a cell (static-pose geomeans
# 0.86-0.95x ACL over five runs on 2026-12-03). So the script makes ROUNDS
# (default 3) passes over every clip, and gives each cell the median of
# its rounds with the lowest and highest, and each geomean the range of
# the single rounds' geomeans: take the spread, not one figure. The whole
# pose is timed the ways a game can ask for it: from the packed static
# tracks (what `bench` calls the pose), from the static pose, and from the
# static pose through a playing instance's track cache (`whole-cached`:
# 32 bytes per animated track per copy, which a pose in the segment the
# cache holds reads instead of the segment's rate bytes, range entries and
# clip ranges). The estimate
# against ACL is then
#     now / ACL  =  (now / filing, today)  x  (filing / ACL, anchor day).
#
# Where the copies' per-instance state lies is decode-ab's choice (its
# header): SHUFFLE_CACHES=1 or INSTANCES=order|scatter pass through.
#
# Usage: [ROUNDS=3] [COPIES=N] [CELLS="whole-static whole-cached"]
#   tools/bench-decode-vs-filing.sh [PASSES]   (default 12;
# cached builds and packages under target/decode-ab)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
FILING=${FILING:-2288c43}
PASSES=${1:-12}
ROUNDS=${ROUNDS:-3}
ANCHORS=${LUDUS_SHARED_ANCHORS:-$ROOT/../shared/anchors}
W=$ROOT/target/decode-ab
CLIPS="quaternius_KnightCharacter__HumanArmature_Idle khronos_Fox_cm__Survey makehuman_zombieWalk1 cmu_12_01_walk_24hz cmu_01_01"
mkdir -p "$W/in"
for c in $CLIPS; do cp "$ANCHORS/acl-clips/$c.acl.sjson" "$W/in/"; done
cd "$ROOT"
# The filing-time tree: its cooker (for its own packages, codec v2) and its
# runtime as a separately named crate.
if [ ! -x "$W/src-filing/target/release/ludus-anim" ]; then
  rm -rf "$W/src-filing" && mkdir -p "$W/src-filing"
  git archive "$FILING" | tar -x -C "$W/src-filing"
  (cd "$W/src-filing" && cargo build -q --release --bin ludus-anim)
fi
[ -d "$W/filing-out/packages" ] || "$W/src-filing/target/release/ludus-anim" -q cook "$W/in" -o "$W/filing-out"
if [ ! -f "$W/rt-filing/Cargo.toml" ]; then
  rm -rf "$W/rt-filing" && cp -r "$W/src-filing/runtime" "$W/rt-filing"
  rm -rf "$W/rt-filing/examples" "$W/rt-filing/tests" "$W/rt-filing/benches"
  cat > "$W/rt-filing/Cargo.toml" <<'EOT'
[package]
name = "ludus-anim-runtime-filing"
version = "0.1.0"
edition = "2021"
[lib]
name = "rt_filing"
# The filing-time sources test features this stand-alone copy does not have.
[lints.rust]
unexpected_cfgs = "allow"
[dependencies]
glam = { version = "0.30", default-features = false, features = ["std"] }
thiserror = "2"
EOT
  find "$W/rt-filing" -type f -exec touch {} +
fi
cargo build -q --release --bin ludus-anim
rm -rf "$W/now-out" && target/release/ludus-anim -q cook "$W/in" -o "$W/now-out"
CARGO_TARGET_DIR=$W/target cargo build -q --release --manifest-path tools/decode-ab/Cargo.toml
AB=$W/target/release/decode-ab
# ACL's copy count for each rig (decode-ab's `acl_copies`), or COPIES.
copies=${COPIES:-acl}
# ROUNDS passes over every clip and request, one after the other, so that
# a cell's rounds are minutes apart rather than back to back.
printf '%s\n' "round clip mode now/filing filing-ns now-ns" > "$W/ratios.txt"
for round in $(seq "$ROUNDS"); do
  for c in $CLIPS; do
    a=$(ls "$W"/filing-out/packages/"$c".acl-*.ludanim); b=$(ls "$W"/now-out/packages/"$c".acl-*.ludanim)
    joints=$(target/release/ludus-anim inspect "$b" --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["skeleton"]["joints"]))')
    for m in "pose packed whole-packed" "pose pose whole-static" "pose pose-cached whole-cached" "joint=$((joints / 2)) joint=$((joints / 2)) mid" "joint joint last"; do
      set -- $m
      # CELLS: only these cells (default: all five).
      case " ${CELLS:-whole-packed whole-static whole-cached mid last} " in *" $3 "*) ;; *) continue ;; esac
      r=$(taskset -c 0 "$AB" "$1" "$a" "$2" "$b" "$copies" "$PASSES" 2>/dev/null | tail -1)
      # The ratio, then A's and B's median ns: the machine's state of the
      # moment (identical builds gave static-pose geomeans 0.865x and
      # 0.924x within an hour on 2026-12-04), which the ratio hides.
      echo "$round $c $3 $(echo "$r" | awk '{for (i = 1; i <= NF; i++) if ($i == "median") print $(i+1); print $2, $6}' | tr '\n' ' ')" >> "$W/ratios.txt"
    done
  done
done
python3 - "$ANCHORS/acl.md" "$W/ratios.txt" <<'PY'
import math, re, sys
names = {"Knight Idle": "quaternius_KnightCharacter__HumanArmature_Idle", "Fox Survey": "khronos_Fox_cm__Survey",
         "zombieWalk1": "makehuman_zombieWalk1", "CMU 12_01": "cmu_12_01_walk_24hz", "CMU 01_01 120": "cmu_01_01"}
anchor = {}
for line in open(sys.argv[1]):
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    if len(cells) != 5 or not re.match(r"^\d", cells[1]): continue
    clip = next((v for k, v in names.items() if k in cells[0]), None)
    if clip is None: continue
    acl_mid, acl_last = (float(x) for x in cells[3].split("/"))
    fil_mid, fil_last = (float(x) for x in cells[4].split("/"))
    anchor[clip] = {"whole": (float(cells[1]), float(cells[2])), "mid": (acl_mid, fil_mid), "last": (acl_last, fil_last)}
rows = [l.split() for l in open(sys.argv[2]).readlines()[1:]]
cells, rounds, ns = {}, {}, {}
for rnd, clip, req, r, *abs_ns in rows:
    if clip not in anchor: continue
    acl, fil = anchor[clip][req.split("-")[0]]
    cells.setdefault((clip, req), []).append(float(r))
    if len(abs_ns) == 2:
        ns.setdefault((clip, req), []).append(tuple(map(float, abs_ns)))
    rounds.setdefault((req, rnd), []).append(float(r) * fil / acl)
def median(v):
    v = sorted(v); n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2
def geomean(v): return math.exp(sum(map(math.log, v)) / len(v))
print("| clip | request | ACL ns (anchor day) | filing-time ludus ns (anchor day) | filing-time / now ns today (medians) | now / filing today, median of rounds (lowest-highest) | now / ACL, estimated |")
print("|---|---|---|---|---|---|---|")
est = {"whole-packed": [], "whole-static": [], "whole-cached": [], "mid": [], "last": []}
for (clip, req), v in cells.items():
    acl, fil = anchor[clip][req.split("-")[0]]
    e = median(v) * fil / acl
    est[req].append(e)
    t = ns.get((clip, req), [])
    today = f"{median([a for a, _ in t]):.0f} / {median([b for _, b in t]):.0f}" if t else "-"
    print(f"| {clip} | {req} | {acl:.0f} | {fil:.0f} | {today} | {median(v):.3f} ({min(v):.3f}-{max(v):.3f}) | {e:.3f}x |")
for req, v in est.items():
    if not v: continue
    per = [geomean(g) for (q, _), g in sorted(rounds.items()) if q == req]
    spread = f"; single rounds {min(per):.3f}-{max(per):.3f}x" if len(per) > 1 else ""
    print(f"geomean {req}: {geomean(v):.3f}x ACL (estimated, {len(v)} clips, medians of {len(per)} rounds{spread})")
PY
