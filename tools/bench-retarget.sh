#!/usr/bin/env bash
# Retarget benchmark (#14). On a copy of the shared fixtures (every glTF,
# GLB, FBX and BVH file, one manifest asset each):
#  1. a profile per humanoid source rig onto the Quaternius Knight, proposed
#     by `ludus-anim retarget suggest` (budgets opened, so that every asset
#     is cooked to the end: these figures measure time, not quality);
#  2. retarget time per asset, per clip and per 1,000 baked frames (the
#     retarget stage's own time from `cook --json`, frames from report.json);
#  3. cold cooks (empty cache) of the whole set, plain vs every humanoid
#     asset retargeted, alternated REPS times; medians.
# Usage: tools/bench-retarget.sh [REPS] [WORKDIR]
set -euo pipefail
REPS=${1:-3}
WORK=${2:-$(mktemp -d /tmp/ludus-bench-retarget.XXXXXX)}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
FX=${LUDUS_SHARED_FIXTURES:-$ROOT/../shared/fixtures}
cd "$ROOT"
[ -n "${SKIP_BUILD:-}" ] || cargo build --profile ci -q -p ludus-anim-cooker
BIN="${BIN:-$ROOT/target/ci/ludus-anim}"
HUMANOIDS="bvh/cmu_01_01.bvh bvh/cmu_12_01_walk.bvh bvh/makehuman_zombieWalk1.bvh
bvh/makehuman_tpose.bvh fbx/pab_locomotions.fbx fbx/pab_crackhead.fbx
fbx/quaternius_KnightCharacter.fbx gltf/quaternius_KnightCharacter.glb"
mkdir -p "$WORK/src" "$WORK/rig" "$WORK/profiles"
cp -r "$FX/gltf" "$FX/fbx" "$FX/bvh" "$WORK/src/"
cp "$FX/gltf/quaternius_KnightCharacter.glb" "$WORK/rig/knight.glb"
cd "$WORK"
profile_of() { echo "profiles/$(echo "$1" | tr '/.' '__').toml"; }
for h in $HUMANOIDS; do
  p=$(profile_of "$h")
  "$BIN" -q retarget suggest "src/$h" rig/knight.glb -o "$p"
  sed -i -e 's/^max_skate_fraction = .*/max_skate_fraction = 1.0/' \
    -e 's/^min_contact_preservation = .*/min_contact_preservation = 0.0/' \
    -e 's/^max_end_effector_error = .*/max_end_effector_error = 100.0/' \
    -e 's/^max_bone_length_deviation_m = .*/max_bone_length_deviation_m = 100.0/' \
    -e 's/^max_angular_jump_deg = .*/max_angular_jump_deg = 360.0/' \
    -e 's/^max_twist_range_deg = .*/max_twist_range_deg = 100000.0/' "$p"
done
manifest() { # name retarget(0|1)
  printf '[project]\noutput = "out-%s"\ncache = "cache-%s"\n' "$1" "$1" > "$1.toml"
  find src -type f \( -name '*.gltf' -o -name '*.glb' -o -name '*.fbx' -o -name '*.bvh' \) | sort |
    while read -r f; do
      printf '\n[[asset]]\nsources = ["%s"]\n' "$f" >> "$1.toml"
      rel=${f#src/}
      if [ "$2" = 1 ] && echo $HUMANOIDS | tr ' ' '\n' | grep -qx -- "$rel"; then
        printf 'retarget = "%s"\n' "$(profile_of "$rel")" >> "$1.toml"
      fi
    done
}
manifest plain 0
manifest retargeted 1
cold() { # name -> seconds on stdout, events in NAME.jsonl
  rm -rf "cache-$1" "out-$1"
  local t0 t1
  t0=$(date +%s.%N)
  "$BIN" cook --manifest "$1.toml" --json > "$1.jsonl" 2> "$1.err" || true
  t1=$(date +%s.%N)
  python3 -c "print(f'{$t1 - $t0:.3f}')"
}
: > times.txt
for i in $(seq "$REPS"); do
  echo "plain $(cold plain)" >> times.txt
  echo "retargeted $(cold retargeted)" >> times.txt
done
python3 - <<'PY'
import json, statistics
times = {}
for line in open("times.txt"):
    k, v = line.split()
    times.setdefault(k, []).append(float(v))
def summary(name):
    r = json.load(open(f"out-{name}/report.json"))
    ok = sum(a["status"] == "ok" for a in r["assets"])
    return r, ok, len(r["assets"]), sum(len(a["clips"]) for a in r["assets"])
rp, okp, np_, cp = summary("plain")
rr, okr, nr, cr = summary("retargeted")
print("| cold cook of the shared fixtures | assets ok | clips | runs (s) | median (s) |")
print("|---|---|---|---|---|")
for name, ok, n, c in [("plain", okp, np_, cp), ("humanoids retargeted", okr, nr, cr)]:
    key = "plain" if name == "plain" else "retargeted"
    t = times[key]
    print(f"| {name} | {ok}/{n} | {c} | {', '.join(f'{x:.2f}' for x in t)} | {statistics.median(t):.2f} |")
mp, mr = statistics.median(times["plain"]), statistics.median(times["retargeted"])
print(f"\nretargeted / plain: {mr / mp:.3f} (limit 1.25)\n")
# Where the time goes (the last run of each; stage times summed over
# worker threads): the retarget stage itself, and the stages after it,
# which now run on the target skeleton.
print("| stage (ms, summed over threads) | plain | retargeted | difference |")
print("|---|---|---|---|")
for st in rp["stages"]:
    a, b = rp["stages"][st]["ms"], rr["stages"][st]["ms"]
    print(f"| {st} | {a:.0f} | {b:.0f} | {b - a:+.0f} |")
print()

ms = {}
for line in open("retargeted.jsonl"):
    try:
        e = json.loads(line)
    except ValueError:
        continue
    if e.get("event") == "stage" and e.get("stage") == "retarget":
        ms[e["source"]] = ms.get(e["source"], 0.0) + e["ms"]
print("| asset (onto the Knight) | clips | baked frames | retarget (ms) | ms / clip | ms / 1,000 frames |")
print("|---|---|---|---|---|---|")
tot = [0, 0, 0.0]
for a in rr["assets"]:
    clips = [c for c in a["clips"] if c.get("retarget")]
    if a["source"] not in ms or not clips:
        continue
    frames = sum(c["retarget"]["metrics"]["frames"] for c in clips)
    t = ms[a["source"]]
    tot[0] += len(clips); tot[1] += frames; tot[2] += t
    print(f"| {a['source'][4:]} | {len(clips)} | {frames} | {t:.1f} | {t / len(clips):.1f} | {t / frames * 1000:.1f} |")
print(f"| all | {tot[0]} | {tot[1]} | {tot[2]:.1f} | {tot[2] / max(tot[0], 1):.1f} | {tot[2] / max(tot[1], 1) * 1000:.1f} |")
for name, r in [("plain", rp), ("retargeted", rr)]:
    failed = [a["source"] for a in r["assets"] if a["status"] != "ok"]
    print(f"\nfailed assets ({name}): {', '.join(failed) or 'none'}")
PY
echo "(work directory: $WORK)"
