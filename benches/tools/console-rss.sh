#!/usr/bin/env bash
# The console's resident memory on a served set of N pods: serves a Parallel set of N Ready
# pods (`ststui sim --serve`), opens the console on it in a 200×50 tmux pane, waits, prints
# VmRSS and VmHWM of the console (KiB). Needs tmux and a release build.
#   benches/tools/console-rss.sh 10000      (WAIT=seconds before reading, default 12)
set -euo pipefail
N=${1:?pods}; BIN=${BIN:-$(dirname "$0")/../../target/release/ststui}; BIN=$(realpath "$BIN")
DIR=$(mktemp -d); PORT=$((20000 + RANDOM % 20000))
cat > "$DIR/set.yaml" <<YAML
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: web}
spec:
  replicas: $N
  podManagementPolicy: Parallel
  serviceName: web
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: app, image: nginx:1.25}]}
YAML
"$BIN" sim --serve 127.0.0.1:$PORT --write-kubeconfig "$DIR/kc" --headless --speed 1000 \
  -f "$DIR/set.yaml" --log-file "$DIR/serve.log" >/dev/null 2>&1 &
SERVER=$!
trap 'tmux kill-session -t ststui-rss 2>/dev/null; kill $SERVER 2>/dev/null; rm -rf "$DIR"' EXIT
sleep 4
tmux new-session -d -s ststui-rss -x 200 -y 50 "$BIN --kubeconfig $DIR/kc web --log-file $DIR/console.log"
sleep "${WAIT:-12}"
PID=$(pgrep -f "^$BIN --kubeconfig $DIR/kc web" | head -1)
grep -E "VmRSS|VmHWM" "/proc/$PID/status" | tr -s ' \t\n' ' '; echo
