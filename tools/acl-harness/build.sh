#!/bin/bash
# Build ludus-anim (as ../shared/anchors/acl-side-by-side/build_ours.sh does)
# and this harness in place of the shared one, at $OUT/decode-harness.
# env: PROJECT (this checkout), OUT; SKIP_LUDUS=1 builds the harness only
# (phase_b_decode.py then takes LUDUS=path/to/ludus-anim).
set -euo pipefail
: "${PROJECT:?set PROJECT to the ludus-anim checkout}"
: "${OUT:?set OUT to a writable work/results directory}"
HERE=$(cd "$(dirname "$0")" && pwd)
PROJECT=$(cd "$PROJECT" && pwd)
mkdir -p "$OUT/results"
if [ -z "${SKIP_LUDUS:-}" ]; then
  ( cd "$PROJECT" && CARGO_TARGET_DIR="$OUT/target-bench" cargo build --release -p ludus-anim-cooker )
fi
H=$OUT/decode-harness
mkdir -p "$H/src"
cp "$HERE/src/main.rs" "$H/src/main.rs"
cp "$HERE/Cargo.lock" "$H/Cargo.lock"
sed "s|path = \"../../runtime\"|path = \"$PROJECT/runtime\"|" "$HERE/Cargo.toml" > "$H/Cargo.toml"
CARGO_TARGET_DIR="$H/target" cargo build --release --manifest-path "$H/Cargo.toml"
{
  echo "project $(git -C "$PROJECT" rev-parse HEAD 2>/dev/null || echo unknown) dirty=$(git -C "$PROJECT" status --porcelain 2>/dev/null | wc -l)"
  rustc --version
} | tee "$OUT/results/ours_versions.txt"
ls -la "$H/target/release/decode-harness"
