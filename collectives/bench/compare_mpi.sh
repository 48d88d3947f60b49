#!/usr/bin/env bash
# Troupe's allreduce against OpenMPI's MPI_Allreduce, same machine, same run, same sizes and
# method (median of iterations per rank, max across ranks; busbw = algbw * 2(n-1)/n).
#
#   collectives/bench/compare_mpi.sh [TROUPE_BINARY] [RANKS] [MIN] [MAX] [ITERS] [WARMUP]
#
# Needs `apt-get install -y openmpi-bin libopenmpi-dev`. Not part of the CMake build.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
troupe="${1:-$here/../../build/troupe}"
ranks="${2:-4}"
min="${3:-4096}"
max="${4:-67108864}"
iters="${5:-20}"
warmup="${6:-5}"
factor=4
out="${TMPDIR:-/tmp}/troupe-compare-mpi"
mkdir -p "$out"
mpicc -O3 -o "$out/mpi_allreduce_bench" "$here/mpi_allreduce_bench.c"
mpi=(mpirun --allow-run-as-root --oversubscribe -np "$ranks")
args=("$min" "$max" "$factor" "$iters" "$warmup")

echo "## OpenMPI tcp (--mca btl tcp,self)"
"${mpi[@]}" --mca btl tcp,self "$out/mpi_allreduce_bench" "${args[@]}"
echo "## OpenMPI default (shared memory: vader/sm)"
"${mpi[@]}" "$out/mpi_allreduce_bench" "${args[@]}"
for transport in tcp ipc shm inproc; do
  echo "## Troupe $transport"
  # MPI's transports are unencrypted: Troupe's ZeroMQ ones run without CURVE here too, so the
  # table compares transports (bench allreduce --curve on measures the encryption's cost).
  curve=()
  case "$transport" in tcp | ipc) curve=(--curve off) ;; esac
  "$troupe" bench allreduce --ranks "$ranks" --transport "$transport" --min "$min" --max "$max" \
    --step-factor "$factor" --iters "$iters" --warmup "$warmup" "${curve[@]}" \
    --json "$out/troupe-$transport.json"
done
