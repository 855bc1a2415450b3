#!/usr/bin/env bash
# The console's start-up end to end (benches/startup.rs): first useful frame, first complete
# grid, requests in the first 10 s, RSS at +10 s and idle CPU, at 1,000 and 10,000 pods of a
# served simulator, beside the saved baseline. Minutes; needs nothing beyond cargo.
#   benches/tools/startup.sh                      # 1000 and 10000 pods, 3 runs each
#   benches/tools/startup.sh --pods 1000 --runs 5 --idle 30 --verbose   # --verbose: each request
#   benches/tools/startup.sh --save               # make these figures the baseline
#   benches/tools/startup.sh --control-plane      # on the upstream control plane (1000 pods;
#                                                 # builds it first when missing: see docs/control-plane.md)
#   benches/tools/startup.sh --sets               # the StatefulSet list instead of one set's grid
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build --release --quiet
if [[ " $* " == *" --control-plane "* ]]; then
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  # kube-apiserver's audit log counts the console's requests (its `bench` user's).
  STSTUI_AUDIT_LOG="$work/audit.log" STSTUI_BIN="$PWD/target/release/ststui" \
    tests/control-plane/run -- cargo bench --quiet --bench startup -- "$@"
  exit
fi
exec cargo bench --quiet --bench startup -- "$@"
