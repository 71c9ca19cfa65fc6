#!/bin/sh
# Snapshots over plain ssh, streamed back: nothing is written on the hosts.
#   ENV=/opt/venvs/serving OUT=./snapshots sh ssh-snapshot.sh host1 host2 ...
set -eu
: "${ENV:?the environment to describe on every host}"
OUT=${OUT:-snapshots}
mkdir -p "$OUT"
for h in "$@"; do
	ssh -o BatchMode=yes "$h" abiscope snapshot --label "$h" -o - "$ENV" >"$OUT/$h.json" &
done
wait
abiscope fleet "$OUT"
