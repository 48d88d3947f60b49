#!/usr/bin/env bash
# The fault soak, behind a flag (not in ctest): the Fashion-MNIST MLP with N random faults
# (`--fault-soak N`, default 200) over a long run must finish (no hang: a hard timeout; no crash:
# exit 0) with a test accuracy within one point of the same run without faults.
#
#   tests/soak.sh [BUILD_DIR] [FAULTS] [EPOCHS]      (defaults: build 200 3)
set -euo pipefail
build=${1:-build}
faults=${2:-200}
epochs=${3:-3}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
run() {  # NAME EXTRA...
  local name=$1
  shift
  timeout 1200 "$build/troupe" run config/fashion_mlp.yaml --quiet --set jobs.0.epochs="$epochs" \
    --report "$out/$name.json" --log-dir "$out/logs-$name" "$@"
}
run clean
run soak --fault-soak "$faults"
python3 - "$out/clean.json" "$out/soak.json" <<'PY'
import json, sys
clean = json.load(open(sys.argv[1]))["jobs"][0]
soak = json.load(open(sys.argv[2]))["jobs"][0]
f = soak["faults"]
rec = sorted(f["recovery_ms"])
print(f"clean: accuracy {clean['test_accuracy']:.4f}  steps {clean['steps']}  {clean['wall_seconds']:.1f} s")
print(f"soak:  accuracy {soak['test_accuracy']:.4f}  steps {soak['steps']}  {soak['wall_seconds']:.1f} s")
print(f"faults: injected {f['injected']} failures {f['failures']} {f['failures_by_class']} "
      f"restarts {f['restarts']} migrations {f['migrations']} lost_steps {f['lost_steps']}")
if rec:
    print(f"recovery_ms: median {rec[len(rec) // 2]:.1f}  max {rec[-1]:.1f}")
ok = soak["status"] == "completed" and abs(soak["test_accuracy"] - clean["test_accuracy"]) <= 0.01 \
    and f["lost_steps"] == 0
print("PASS" if ok else "FAIL")
sys.exit(0 if ok else 1)
PY
