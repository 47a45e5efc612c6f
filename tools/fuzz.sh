#!/usr/bin/env bash
# tools/fuzz.sh SECONDS [TARGET...]
#
# Runs every fuzz target in fuzz/ (or the ones named) for SECONDS each,
# one at a time, with cargo-fuzz on the nightly toolchain, and prints one
# line per target: executions, corpus size, crashes. Corpora live in
# fuzz/corpus/<target> (not committed); they are seeded from fuzz/seeds,
# the bundled and shared fixtures, the ACL clips, and packages cooked
# from them. Crashes land in fuzz/artifacts/<target>.
#
# Without a nightly toolchain or cargo-fuzz it prints why and exits 0, so
# CI can call it unconditionally. Install with
#   rustup toolchain install nightly && cargo +nightly install cargo-fuzz
#
# Builds go to LUDUS_FUZZ_TARGET_DIR (default ~/.cache/ludus-anim/fuzz-target)
# so that repeated runs, and CI on a machine that ran it before, rebuild
# only what changed.
#
# Sanitizers: the targets over code that has `unsafe` (the runtime's
# bounded loads in `package`, ufbx's C in `fbx`, the server's HTTP stack)
# run under AddressSanitizer; the others exercise crates that
# `forbid(unsafe_code)` and safe-Rust dependencies, where ASan can find
# nothing a panic would not and costs about 6x the executions, so they
# run without (`-s none`, a target directory of their own).
#
# LUDUS_FUZZ_RUNS=N stops each target after N executions (the long runs'
# goal of 10^7) if that comes before SECONDS.
set -euo pipefail
cd "$(dirname "$0")/.."

SECS=${1:?usage: tools/fuzz.sh SECONDS [TARGET...]}
shift
ALL=(package gltf bvh sjson fbx manifest retarget server program)
TARGETS=("$@")
[ ${#TARGETS[@]} -eq 0 ] && TARGETS=("${ALL[@]}")

if ! rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
    echo "fuzz: skipped (no nightly toolchain; rustup toolchain install nightly)"
    exit 0
fi
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
    echo "fuzz: skipped (cargo-fuzz not installed; cargo +nightly install cargo-fuzz)"
    exit 0
fi

TARGET_DIR=${LUDUS_FUZZ_TARGET_DIR:-$HOME/.cache/ludus-anim/fuzz-target}
SHARED=${LUDUS_SHARED:-../shared}

# The sanitizer a target runs under (see the header).
sanitizer() {
    case $1 in
        package | fbx | server) echo address ;;
        *) echo none ;;
    esac
}

# Where a sanitizer's builds go (the two must not share a directory:
# their flags differ, so each build would throw the other's away).
target_dir() {
    case $1 in
        address) echo "$TARGET_DIR" ;;
        *) echo "$TARGET_DIR-$1" ;;
    esac
}

# Largest input per target: big enough for real seeds' structure, small
# enough that each execution stays fast.
max_len() {
    case $1 in
        package) echo 262144 ;;
        fbx) echo 262144 ;;
        *) echo 65536 ;;
    esac
}

# Copy regular files matching the find expression into a corpus dir, cut
# to the target's max length (a truncated text seed is still a good one).
seed_files() {
    local dir=$1 len=$2
    shift 2
    find "$@" -type f 2>/dev/null | while read -r f; do
        head -c "$len" "$f" >"$dir/seed-$(basename "$f")"
    done
}

seed() {
    local t=$1 dir=fuzz/corpus/$1 len
    len=$(max_len "$t")
    mkdir -p "$dir"
    # Packages follow the format: freshly cooked ones join the corpus on
    # every run, so that it holds packages this runtime loads (after a
    # codec version change, the old ones stop at the version check).
    [ "$t" = package ] && seed_packages "$dir"
    [ -n "$(ls -A "$dir")" ] && return 0
    seed_files "$dir" "$len" "fuzz/seeds/$t"
    case $t in
        gltf) seed_files "$dir" "$len" fixtures "$SHARED/fixtures/gltf" \( -name '*.gltf' -o -name '*.glb' \) ;;
        bvh) seed_files "$dir" "$len" "$SHARED/fixtures/bvh" -name '*.bvh' ;;
        sjson) seed_files "$dir" "$len" "$SHARED/anchors/acl-clips" -name '*.sjson' ;;
        fbx) seed_files "$dir" "$len" "$SHARED/fixtures/fbx" -name '*.fbx' -size -256k ;;
        manifest) seed_files "$dir" "$len" profiles -name '*.toml' ;;
        program) seed_files "$dir" "$len" fixtures/locomotion -name '*.program.toml' ;;
    esac
}

# Packages cooked from the bundled biped and a few shared fixtures, with
# whichever ludus-anim binary the workspace already built.
seed_packages() {
    local dir=$1 bin out
    bin=$(ls target/ci/ludus-anim target/release/ludus-anim target/debug/ludus-anim 2>/dev/null | head -1 || true)
    [ -z "$bin" ] && return 0
    out=$(mktemp -d)
    "$bin" cook --no-cache --out "$out" fixtures/biped.glb \
        "$SHARED/fixtures/bvh/makehuman_zombieWalk1.bvh" \
        "$SHARED/fixtures/gltf/khronos_Fox.glb" >/dev/null 2>&1 || true
    "$bin" cook --no-cache --codec reference --out "$out/ref" fixtures/biped.glb >/dev/null 2>&1 || true
    find "$out" -name '*.ludanim' -exec cp {} "$dir/" \;
    rm -rf "$out"
}

# Build first, once per sanitizer the targets need;
# LUDUS_FUZZ_BUILD_TIMEOUT (seconds) bounds it for CI (a build cut short
# keeps what it compiled, so the next run goes on).
build() {
    local san=$1 blog
    local cmd=(cargo +nightly fuzz build --fuzz-dir fuzz -s "$san")
    if [ -n "${LUDUS_FUZZ_BUILD_TIMEOUT:-}" ]; then
        cmd=(timeout "$LUDUS_FUZZ_BUILD_TIMEOUT" "${cmd[@]}")
    fi
    blog=$(mktemp)
    if ! CARGO_TARGET_DIR=$(target_dir "$san") "${cmd[@]}" >"$blog" 2>&1; then
        if [ -n "${LUDUS_FUZZ_BUILD_TIMEOUT:-}" ] && ! grep -q '^error' "$blog"; then
            echo "fuzz: skipped (building the $san targets took over ${LUDUS_FUZZ_BUILD_TIMEOUT} s; the next run continues the build)"
            rm -f "$blog"
            exit 0
        fi
        tail -40 "$blog" >&2
        rm -f "$blog"
        exit 1
    fi
    rm -f "$blog"
}
for san in $(for t in "${TARGETS[@]}"; do sanitizer "$t"; done | sort -u); do
    build "$san"
done

printf '%-9s %-8s %8s %12s %8s %8s\n' target sanitizer seconds execs corpus crashes
status=0
for t in "${TARGETS[@]}"; do
    seed "$t"
    dict=()
    [ -f "fuzz/dict/$t.dict" ] && dict=("-dict=fuzz/dict/$t.dict")
    log=$(mktemp)
    mkdir -p "fuzz/artifacts/$t"
    before=$(ls "fuzz/artifacts/$t" | wc -l)
    # -rss_limit_mb: an input that makes the importer use over 2 GB is a
    # finding (the limits allow 256 MB per asset in the targets).
    runs=()
    [ -n "${LUDUS_FUZZ_RUNS:-}" ] && runs=("-runs=$LUDUS_FUZZ_RUNS")
    san=$(sanitizer "$t")
    if ! CARGO_TARGET_DIR=$(target_dir "$san") cargo +nightly fuzz run --fuzz-dir fuzz -s "$san" "$t" "fuzz/corpus/$t" -- \
        -max_total_time="$SECS" -max_len="$(max_len "$t")" -timeout=10 \
        -rss_limit_mb=2048 -print_final_stats=1 "${runs[@]}" "${dict[@]}" >"$log" 2>&1; then
        status=1
        tail -40 "$log" >&2
    fi
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
    after=$(ls "fuzz/artifacts/$t" | wc -l)
    secs=$(grep -o 'Done [0-9]* runs in [0-9]* second' "$log" | grep -o '[0-9]* second' | grep -o '[0-9]*' | tail -1)
    printf '%-9s %-8s %8s %12s %8s %8s\n' "$t" "$san" "${secs:-$SECS}" "${execs:-?}" "$(ls "fuzz/corpus/$t" | wc -l)" "$((after - before))"
    rm -f "$log"
done
exit $status
