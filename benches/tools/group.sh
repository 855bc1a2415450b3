#!/usr/bin/env bash
# A rollout group's view and a fleet's against one set of as many pods, side by side in one run
# (benches/group.rs): first useful frame, complete, requests, sockets and RSS at +10 s, idle CPU,
# key → screen, for a set of N pods, a group of 3 × N/3 and a fleet of 3 clusters × 3 × N/9.
# Minutes; needs nothing beyond cargo.
#   benches/tools/group.sh                          # 2,700 pods, 3 runs of each
#   benches/tools/group.sh --pods 900 --runs 5 --keys 40
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build --release --quiet
exec cargo bench --quiet --bench group -- "$@"
