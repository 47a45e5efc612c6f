#!/usr/bin/env bash
# The asset server's benchmark (issue #15): generates a 1,000-clip project
# from the shared fixtures (964 one-clip BVH assets, 100 of them on their
# own profile file, and 3 copies of the 12-clip Knight FBX), cooks it cold,
# restarts, then measures edit-to-published latency for 20 one-clip edits,
# 20 FBX edits and 20 profile changes, and the daemon's idle CPU and RSS.
# Needs ../shared/fixtures (or LUDUS_SHARED_FIXTURES). LUDUS_BENCH_PROFILE
# picks the cargo profile (default ci; release reuses a release build).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --profile "${LUDUS_BENCH_PROFILE:-ci}" -p ludus-anim-server --test bench -- --ignored --nocapture 2>&1 \
    | grep --line-buffered -v "^\[server\]"
