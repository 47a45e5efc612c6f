#!/usr/bin/env bash
# Decode cost in instructions and cache lines (#17): deterministic figures
# (cachegrind), where wall-clock timing on a shared 2-vCPU machine spreads
# by tens of percent between identical runs.
#
# Cooks the anchor clips ACL was measured on (../shared/anchors/acl-clips)
# at the standard profile, then per clip, with ACL's method (copies in
# rotation, `decode_rotate`):
#  - instructions per decode: a static pose (`sample_static`), a packed
#    pose (`sample_packed`, what `bench` times as the whole pose), the
#    middle and the last joint, ten joints;
#  - cache lines first touched per decode (D1 misses, 400 copies): packed
#    pose, middle joint, last joint.
# Each figure is the difference of two runs over the difference of their
# decode counts, so the harness's setup cancels.
# Usage: tools/bench-decode-instructions.sh [WORKDIR]
#   (BIN=path/to/decode_rotate to reuse a build; CLIPS="..." for a subset)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=${1:-$(mktemp -d /tmp/ludus-bench-decode.XXXXXX)}
ANCHORS=${LUDUS_SHARED_ANCHORS:-$ROOT/../shared/anchors}
CLIPS=${CLIPS:-"quaternius_KnightCharacter__HumanArmature_Idle khronos_Fox_cm__Survey
makehuman_zombieWalk1 cmu_12_01_walk_24hz cmu_01_01 cmu_01_01_24hz"}
command -v valgrind >/dev/null || { echo "needs valgrind" >&2; exit 2; }
cd "$ROOT"
if [ -z "${BIN:-}" ]; then
  cargo build --release -q -p ludus-anim-cooker -p ludus-anim-runtime --example decode_rotate
  BIN=$ROOT/target/release/examples/decode_rotate
fi
COOK=${COOK:-$ROOT/target/release/ludus-anim}
mkdir -p "$WORK/in"
for c in $CLIPS; do cp "$ANCHORS/acl-clips/$c.acl.sjson" "$WORK/in/"; done
[ -d "$WORK/out/packages" ] || "$COOK" -q cook "$WORK/in" -o "$WORK/out"
instr() { # MODE PKG
  r() { valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
          "$BIN" "$1" "$2" 100 "$3" 2>&1 | grep -o 'I *refs: *[0-9,]*' | tr -d ', ' | grep -o '[0-9]*$'; }
  local a b; a=$(r "$1" 1000 "$2"); b=$(r "$1" 3000 "$2"); echo $(((b - a) / 2000))
}
lines() { # MODE PKG
  r() { valgrind --tool=cachegrind --cache-sim=yes --cachegrind-out-file=/dev/null \
          "$BIN" "$1" "$2" 400 "$3" 2>&1 | grep -E 'D1 +misses' | tr -d ',' | awk '{print $4}'; }
  local a b; a=$(r "$1" 2000 "$2"); b=$(r "$1" 6000 "$2"); echo "scale=1; ($b - $a) / 4000" | bc
}
printf '%-48s %7s %7s %6s %6s %6s %8s %6s %6s\n' clip pose packed mid last sub10 "lines:pk" mid last
for c in $CLIPS; do
  p=$(ls "$WORK"/out/packages/"$c".acl-*.ludanim | head -1)
  joints=$("$COOK" inspect "$p" --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["skeleton"]["joints"]))')
  mid=$((joints / 2))
  printf '%-48s %7s %7s %6s %6s %6s %8s %6s %6s\n' "$c" \
    "$(instr pose "$p")" "$(instr packed "$p")" "$(instr "joint=$mid" "$p")" "$(instr joint "$p")" \
    "$(instr sub10 "$p")" "$(lines packed "$p")" "$(lines "joint=$mid" "$p")" "$(lines joint "$p")"
done
