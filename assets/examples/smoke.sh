#!/bin/sh
# The README's example plan check: `ststui rollout web --steps 1,50%,100% --check ./smoke.sh`.
# A check runs after each step's bake with the step's facts in its environment; exit 0 passes,
# anything else halts the plan (its last lines are shown). Here: every pod the step opened
# answers on its readiness port through kubectl (replace with your own smoke test).
set -eu
echo "step $STSTUI_STEP/$STSTUI_STEPS of $STSTUI_NAMESPACE/$STSTUI_SET, partition $STSTUI_PARTITION: $STSTUI_PODS"
for pod in $STSTUI_PODS; do
  kubectl -n "$STSTUI_NAMESPACE" get pod "$pod" \
    -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' | grep -qx True \
    || { echo "$pod is not Ready"; exit 1; }
done
echo "ok"
