#!/bin/sh
# One snapshot per node of a Slurm allocation, into a shared folder.
#   ENV=/opt/venvs/serving OUT=/shared/abiscope NODES=64 sh srun-snapshot.sh
#   ENV=... OUT=... sbatch --nodes=64 srun-snapshot.sh     (as a batch job)
# srun starts one task per node; SLURMD_NODENAME names the node.  Each task
# prints its node's name before the snapshot, so a node whose snapshot fails
# (abiscope missing there, the folder not writable) is still named by
# `abiscope fleet --expect`.  Exit status: the fleet's, else srun's.
set -eu
: "${ENV:?the environment to describe on every node}"
: "${OUT:?a folder every node can write}"
mkdir -p "$OUT"
srun_status=0
# shellcheck disable=SC2016 # expanded by each task's shell
nodes=$(srun --nodes="${NODES:-${SLURM_JOB_NUM_NODES:-1}}" --ntasks-per-node=1 \
	sh -c 'n=${SLURMD_NODENAME:-$(hostname)}; echo "$n"
		abiscope snapshot --label "$n" -o "$0/$n.json.gz" "$1" >&2 ||
		{ s=$?; echo "srun-snapshot: no snapshot from $n (exit $s)" >&2; exit "$s"; }' "$OUT" "$ENV") ||
	srun_status=$?
fleet_status=0
abiscope fleet --expect "$nodes" "$OUT" || fleet_status=$?
[ "$fleet_status" -ne 0 ] && exit "$fleet_status"
exit "$srun_status"
