#!/bin/bash
# phase_b_decode.py asks the harness for `pose,bone,one:MID,one:LAST`; this
# wrapper adds the playing request (`cached`) after `pose`. HARNESS_BIN:
# the harness binary (default $OUT/decode-harness/target/release/decode-harness).
BIN=${HARNESS_BIN:-$OUT/decode-harness/target/release/decode-harness}
args=()
for a in "$@"; do
  if [[ $a == pose,* ]]; then a="pose,cached,${a#pose,}"; fi
  args+=("$a")
done
exec "$BIN" "${args[@]}"
