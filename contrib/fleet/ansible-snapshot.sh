#!/bin/sh
# Ansible ad-hoc: write a snapshot on every host, fetch them back.
#   ENV=/opt/venvs/serving OUT=./snapshots INVENTORY=hosts.ini sh ansible-snapshot.sh [PATTERN]
set -eu
: "${ENV:?}" "${INVENTORY:?an Ansible inventory}"
OUT=${OUT:-snapshots}
pattern=${1:-all}
mkdir -p "$OUT"
tmp=/tmp/abiscope-snapshot.json.gz
ansible "$pattern" -i "$INVENTORY" -m ansible.builtin.command \
	-a "abiscope snapshot --label {{ inventory_hostname }} -o $tmp.{{ inventory_hostname }} $ENV"
ansible "$pattern" -i "$INVENTORY" -m ansible.builtin.fetch \
	-a "src=$tmp.{{ inventory_hostname }} dest=$OUT/{{ inventory_hostname }}.json.gz flat=yes"
abiscope fleet "$OUT"
