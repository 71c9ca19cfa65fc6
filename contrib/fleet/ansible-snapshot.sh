#!/bin/sh
# Ansible ad-hoc: write a snapshot on every host, fetch them back.
#   ENV=/opt/venvs/serving OUT=./snapshots INVENTORY=hosts.ini sh ansible-snapshot.sh [PATTERN]
# REMOTE_TMP: the folder on the hosts for the file before it is fetched
# (default /tmp).  Hosts that give no snapshot are named in the fleet report; exit status:
# the fleet's, else Ansible's.
set -eu
: "${ENV:?}" "${INVENTORY:?an Ansible inventory}"
OUT=${OUT:-snapshots}
pattern=${1:-all}
mkdir -p "$OUT"
tmp=${REMOTE_TMP:-/tmp}/abiscope-snapshot.json.gz
expected=$(ansible "$pattern" -i "$INVENTORY" --list-hosts | sed -n 's/^ *//; /^hosts (/d; p')
ansible_status=0
ansible "$pattern" -i "$INVENTORY" -m ansible.builtin.command \
	-a "abiscope snapshot --label {{ inventory_hostname }} -o $tmp.{{ inventory_hostname }} $ENV" || ansible_status=$?
ansible "$pattern" -i "$INVENTORY" -m ansible.builtin.fetch \
	-a "src=$tmp.{{ inventory_hostname }} dest=$OUT/{{ inventory_hostname }}.json.gz flat=yes" || ansible_status=$?
fleet_status=0
abiscope fleet --expect "$expected" "$OUT" || fleet_status=$?
[ "$fleet_status" -ne 0 ] && exit "$fleet_status"
exit "$ansible_status"
