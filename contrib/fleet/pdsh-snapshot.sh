#!/bin/sh
# pdsh runs the same command on every host; each writes to a shared folder.
#   ENV=/opt/venvs/serving OUT=/shared/abiscope HOSTS='node[01-64]' sh pdsh-snapshot.sh
# pdsh's own variables apply (PDSH_RCMD_TYPE, PDSH_SSH_ARGS_APPEND='-F
# cluster.conf').  Hosts whose snapshot fails are named in the fleet report;
# exit status: the fleet's, else pdsh's (-S: the largest of the hosts').
set -eu
: "${ENV:?}" "${OUT:?a folder every host can write}" "${HOSTS:?a pdsh host list}"
mkdir -p "$OUT"
# the host list as pdsh expands it, run here
expected=$(pdsh -N -R exec -w "$HOSTS" echo %h)
pdsh_status=0
pdsh -S -w "$HOSTS" "abiscope snapshot --label \$(hostname) -o $OUT/\$(hostname).json.gz $ENV" || pdsh_status=$?
fleet_status=0
abiscope fleet --expect "$expected" "$OUT" || fleet_status=$?
[ "$fleet_status" -ne 0 ] && exit "$fleet_status"
exit "$pdsh_status"
