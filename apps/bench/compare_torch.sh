#!/usr/bin/env bash
# Side-by-side: `troupe bench train` and its PyTorch twin, same model/batch/optimizer/threads,
# alternated RUNS times in one go so both see the same machine load; prints medians and ratio.
# usage: apps/bench/compare_torch.sh [--model mlp] [--batch 64] [--threads 1] [--runs 3]
#                                    [--max-steps 1500] [--epochs 1]
set -euo pipefail
cd "$(dirname "$0")/../.."
model=mlp batch=64 threads=1 runs=3 steps=1500 epochs=1
while [ $# -gt 0 ]; do
  case "$1" in
    --model) model=$2; shift 2 ;; --batch) batch=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;; --runs) runs=$2; shift 2 ;;
    --max-steps) steps=$2; shift 2 ;; --epochs) epochs=$2; shift 2 ;;
    *) echo "unknown flag $1" >&2; exit 2 ;;
  esac
done
[ -x build/troupe ] || { echo "build first: make" >&2; exit 2; }
/usr/bin/python3 -c "import torch" 2>/dev/null || tools/install-deps.sh tools/bench-packages.txt
out=$(mktemp -d)
for i in $(seq 1 "$runs"); do
  OMP_NUM_THREADS=$threads build/troupe bench train --model "$model" --batch "$batch" \
    --threads "$threads" --epochs "$epochs" --max-steps "$steps" --json "$out/troupe$i.json" >/dev/null 2>&1
  OMP_NUM_THREADS=$threads /usr/bin/python3 apps/bench/torch_train.py --model "$model" --batch "$batch" \
    --threads "$threads" --epochs "$epochs" --max-steps "$steps" --json "$out/torch$i.json" >/dev/null
done
/usr/bin/python3 - "$out" "$runs" <<'PY'
import json, statistics, sys
d, runs = sys.argv[1], int(sys.argv[2])
t = [json.load(open(f"{d}/troupe{i}.json"))["samples_per_second"] for i in range(1, runs + 1)]
p = [json.load(open(f"{d}/torch{i}.json"))["samples_per_second"] for i in range(1, runs + 1)]
print("runs        troupe samples/s: " + ", ".join(f"{x:.0f}" for x in t))
print("runs        torch  samples/s: " + ", ".join(f"{x:.0f}" for x in p))
mt, mp = statistics.median(t), statistics.median(p)
print(f"median      troupe {mt:.0f}  torch {mp:.0f}  ratio troupe/torch {mt / mp:.2f}")
PY
