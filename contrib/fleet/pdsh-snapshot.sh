#!/bin/sh
# pdsh runs the same command on every host; each writes to a shared folder.
#   ENV=/opt/venvs/serving OUT=/shared/abiscope HOSTS='node[01-64]' sh pdsh-snapshot.sh
set -eu
: "${ENV:?}" "${OUT:?a folder every host can write}" "${HOSTS:?a pdsh host list}"
mkdir -p "$OUT"
pdsh -w "$HOSTS" "abiscope snapshot --label \$(hostname) -o $OUT/\$(hostname).json.gz $ENV"
abiscope fleet "$OUT"
