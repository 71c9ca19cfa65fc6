#!/bin/sh
# One snapshot per node of a Slurm allocation, into a shared folder.
#   ENV=/opt/venvs/serving OUT=/shared/abiscope NODES=64 sh srun-snapshot.sh
# srun starts one task per node; SLURMD_NODENAME names the node.
set -eu
: "${ENV:?the environment to describe on every node}"
: "${OUT:?a folder every node can write}"
mkdir -p "$OUT"
srun --nodes="${NODES:-${SLURM_JOB_NUM_NODES:-1}}" --ntasks-per-node=1 \
	sh -c 'n=${SLURMD_NODENAME:-$(hostname)}; abiscope snapshot --label "$n" -o "$0/$n.json.gz" "$1"' "$OUT" "$ENV"
abiscope fleet "$OUT"
