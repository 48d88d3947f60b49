#!/usr/bin/env bash
# ctest `slurm_sbatch` (label cluster; `ctest -L cluster`): a single-node Slurm on loopback runs
# examples/launch/troupe.sbatch with a tiny config, and the job must complete with the agent
# joined and released. It starts its own munged, slurmctld and slurmd with a config in a temp
# directory and stops them however it ends. Skips (exit 0, saying so) without root or without
# slurm-wlm and munge (`make bench-deps` installs them).
# Usage: tests/slurm_cluster.sh BUILD_DIR SOURCE_DIR   (KEEP=1 keeps its temp directory: logs)
set -euo pipefail
build=$(cd "$1" && pwd); src=$(cd "$2" && pwd)

skip() { echo "skipped: $*"; exit 0; }
[ "$(id -u)" -eq 0 ] || skip "needs root to start slurmctld, slurmd and munged"
for b in slurmctld slurmd munged sbatch scontrol; do
  command -v "$b" > /dev/null || [ -x "/usr/sbin/$b" ] || skip "$b is not installed (make bench-deps)"
done
if pgrep -x slurmctld > /dev/null || pgrep -x slurmd > /dev/null; then
  skip "a Slurm is already running on this machine"
fi

work=$(mktemp -d /tmp/troupe-slurm.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2> /dev/null || true; done
  wait 2> /dev/null || true
  [ -n "${KEEP:-}" ] || rm -rf "$work"
}
trap cleanup EXIT

host=$(hostname -s)
chmod 755 "$work"  # munged runs as munge and must reach its directory
mkdir -p "$work/state" "$work/spool" "$work/munge"
chown munge:munge "$work/munge" 2> /dev/null || true
export SLURM_CONF=$work/slurm.conf
cat > "$SLURM_CONF" << CONF
ClusterName=troupe-test
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=16817
SlurmdPort=16818
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$work/munge/munge.socket
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=10 State=UP OverSubscribe=YES
CONF

# munged with its own socket, so a host munged (if any) is left alone.
socket=$work/munge/munge.socket
runuser -u munge -- /usr/sbin/munged --socket="$socket" --pid-file="$work/munge/munged.pid" \
  --log-file="$work/munge/munged.log" --seed-file="$work/munge/seed" -f
export MUNGE_SOCKET=$socket
pids+=("$(cat "$work/munge/munged.pid")")
/usr/sbin/slurmctld -D -f "$SLURM_CONF" > "$work/ctld.out" 2>&1 & pids+=($!)
/usr/sbin/slurmd -D -f "$SLURM_CONF" > "$work/d.out" 2>&1 & pids+=($!)

for _ in $(seq 100); do
  sinfo -h -o %t 2> /dev/null | grep -q idle && break
  sleep 0.2
done
sinfo -h -o %t | grep -q idle || { cat "$work"/*.log; echo "Slurm did not come up"; exit 1; }

cat > "$work/tiny.yaml" << CONF
cluster:
  groups:
    - {name: cpu, device: cpu, count: 1}
jobs:
  - name: tiny
    data: {dataset: synthetic, synthetic: {kind: blobs, samples: 256}}
    model: {kind: mlp, hidden: [16]}
    optimizer: {kind: sgd, lr: 0.1}
    batch: 32
    epochs: 1
CONF

job=$(PATH=$build:$PATH CONFIG=$work/tiny.yaml TROUPE_PORT=17070 \
  sbatch --parsable --nodes=1 --time=5 --chdir="$work" --output="$work/job.out" --export=ALL \
  "$src/examples/launch/troupe.sbatch")
state=""
for _ in $(seq 300); do
  state=$(scontrol show job "$job" | grep -o 'JobState=[A-Z_]*' | cut -d= -f2)
  case $state in COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL) break ;; esac
  sleep 0.2
done
cat "$work/job.out"
[ "$state" = COMPLETED ] || { echo "job $job ended $state"; exit 1; }
grep -q "joined: agent agent-0 (group agent-0" "$work/job.out"
grep -q "tiny: completed" "$work/job.out"
grep -q "the run at $host:17070 is over" "$work/job.out"
echo "slurm: job $job COMPLETED with the agent joined and released"
