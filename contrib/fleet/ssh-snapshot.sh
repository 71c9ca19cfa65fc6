#!/bin/sh
# Snapshots over plain ssh, streamed back: nothing is written on the hosts.
#   ENV=/opt/venvs/serving OUT=./snapshots sh ssh-snapshot.sh host1 host2 ...
# SSH_ARGS adds options to every ssh (SSH_ARGS='-F cluster.conf').  A host
# that gives no snapshot (unreachable, abiscope missing, the local folder
# not writable) leaves no file and is named in the fleet report.
set -eu
: "${ENV:?the environment to describe on every host}"
OUT=${OUT:-snapshots}
mkdir -p "$OUT"
pids=
for h in "$@"; do
	# shellcheck disable=SC2086 # SSH_ARGS is a list of options
	(ssh -o BatchMode=yes ${SSH_ARGS:-} "$h" abiscope snapshot --label "$h" -o - "$ENV" >"$OUT/$h.json" ||
		{ s=$?; rm -f "$OUT/$h.json"; echo "ssh-snapshot: no snapshot from $h (exit $s)" >&2; exit "$s"; }) &
	pids="$pids $!"
done
failed=0
for p in $pids; do wait "$p" || failed=$((failed + 1)); done
fleet_status=0
abiscope fleet --expect "$*" "$OUT" || fleet_status=$?
[ "$fleet_status" -ne 0 ] && exit "$fleet_status"
[ "$failed" -eq 0 ]
