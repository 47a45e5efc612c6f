#!/usr/bin/env bash
# Remote cache throughput against a private nginx on 127.0.0.1 (~10 KB
# entries): synchronous PUT, GET with the entry check (1 and 4 threads),
# HEAD, and write-behind uploads. Installs nginx-light if missing (root).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test -p ludus-anim-remote-cache --profile ci --test bench_loopback \
    -- --ignored --nocapture --test-threads=1
