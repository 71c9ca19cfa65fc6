#!/bin/sh
# contrib/fleet/ssh-snapshot.sh, pdsh-snapshot.sh and ansible-snapshot.sh
# over real ssh: one Debian sshd per host (gpu1..gpu5 on 127.0.0.1..5, free
# ports), started here with throwaway host keys and stopped when the suite
# ends, a throwaway user key, and an ssh config that maps each host alias to
# its address, port, key and host key.  Each sshd is a host of its own
# (in_node): its hostname, its file system.  gpu4 has no abiscope installed,
# gpu5's view of the shared folder $FX/pdsh-fail is read-only (a full
# disk), gpu9 is an alias whose port is closed (unreachable).
# Skipped, with a SKIP line, without openssh-server/pdsh or root.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_fleet.sh"
fixture_dir fleet_ssh
R=$TOP/contrib/fleet
RECIPES="ssh-recipe pdsh-recipe ssh-failures pdsh-failures ansible-over-ssh"
for c in ssh ssh-keygen unshare; do
	command -v $c >/dev/null 2>&1 || skip_suite "$RECIPES" "$c is not installed (Debian: openssh-client, util-linux)"
done
SSHD=$(command -v sshd || echo /usr/sbin/sshd)
[ -x "$SSHD" ] || skip_suite "$RECIPES" "sshd is not installed (Debian: openssh-server)"
can_make_nodes || skip_suite "$RECIPES" "needs root and mount/UTS namespaces to run sshd hosts here"
fleet_fixture
t0=$(date +%s)
lap() { echo "# $(($(date +%s) - t0)) s"; }
S=$FX/ssh
mkdir -p "$S/home" "$FX/pdsh-fail"
# sshd refuses to start without its privilege separation folder
[ -d /run/sshd ] || mkdir -m 0755 /run/sshd
ssh-keygen -q -t ed25519 -N '' -C abiscope-test-user -f "$S/user"
cp "$S/user.pub" "$S/authorized_keys"
: >"$S/known_hosts"
: >"$S/config"
for i in 1 2 3 4 5; do
	h=gpu$i
	port=$(free_port)
	ssh-keygen -q -t ed25519 -N '' -C "$h" -f "$S/$h.key"
	echo "$h $(cat "$S/$h.key.pub")" >>"$S/known_hosts"
	cat >"$S/$h.sshd_config" <<EOF
ListenAddress 127.0.0.$i:$port
HostKey $S/$h.key
PidFile $S/$h.pid
AuthorizedKeysFile $S/authorized_keys
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
StrictModes no
UsePAM no
Subsystem sftp internal-sftp
SetEnv PATH=$bin:/usr/local/bin:/usr/bin:/bin HOME=$S/home
EOF
	cat >>"$S/config" <<EOF
Host $h
  HostName 127.0.0.$i
  Port $port
  HostKeyAlias $h
EOF
	stop_at_exit "$S/$h.pid"
	hide= ro=
	[ $i = 4 ] && hide=$bin
	[ $i = 5 ] && ro=$FX/pdsh-fail
	in_node "$h" "$hide" "$ro" "$SSHD" -f "$S/$h.sshd_config" -E "$S/$h.log"
done
cat >>"$S/config" <<EOF
Host gpu9
  HostName 127.0.0.9
  Port $(free_port)
Host gpu*
  User $(id -un)
  IdentityFile $S/user
  IdentitiesOnly yes
  UserKnownHostsFile $S/known_hosts
  StrictHostKeyChecking yes
  ConnectTimeout 5
EOF
up=0
for i in 1 2 3 4 5; do
	n=0
	while [ $n -lt 50 ] && ! grep -q 'Server listening' "$S/gpu$i.log" 2>/dev/null; do
		sleep 0.1
		n=$((n + 1))
	done
	grep -q 'Server listening' "$S/gpu$i.log" 2>/dev/null && up=$((up + 1))
done
expect_eq "$up" 5 "ssh: five sshd hosts listening ($(($(date +%s) - t0)) s to start)"
names=$(for h in gpu1 gpu4; do ssh -F "$S/config" -o BatchMode=yes $h hostname; done | tr '\n' ' ')
expect_eq "$names" "gpu1 gpu4 " "ssh: each alias reaches its own host"
SSHA="-F $S/config"

lap
OUT=$FX/ssh-out ENV=$ENV SSH_ARGS=$SSHA PATH=$P sh "$R/ssh-snapshot.sh" gpu1 gpu2 gpu3 >"$FX/ssh.txt" 2>"$FX/ssh.err"
expect_eq "$?:$(count "$FX/ssh-out")" "0:3" "ssh-recipe: streamed back, one per host, exit 0"
expect_contains "$(cat "$FX/ssh.txt")" "3 hosts, 1 group" "ssh-recipe: fleet groups the hosts"
expect_eq "$(jq_py 'j["hostname"]' <"$FX/ssh-out/gpu2.json")" gpu2 "ssh-recipe: gpu2's snapshot was taken on gpu2"

if command -v pdsh >/dev/null 2>&1; then
lap
	OUT=$FX/pdsh ENV=$ENV HOSTS='gpu[1-3]' PDSH_RCMD_TYPE=ssh PDSH_SSH_ARGS_APPEND=$SSHA PATH=$P \
		sh "$R/pdsh-snapshot.sh" >"$FX/pdsh.txt" 2>"$FX/pdsh.err"
	expect_eq "$?:$(ls "$FX/pdsh" | tr '\n' ' ')" "0:gpu1.json.gz gpu2.json.gz gpu3.json.gz " \
		"pdsh-recipe: one snapshot per host, named by the host's hostname"
	expect_contains "$(cat "$FX/pdsh.txt")" "3 hosts, 1 group" "pdsh-recipe: fleet groups the hosts"
else
	echo "ok - pdsh-recipe # SKIP pdsh is not installed (Debian: pdsh)"
fi

# failures: no abiscope on gpu4, gpu9 unreachable
lap
OUT=$FX/ssh-fail ENV=$ENV SSH_ARGS=$SSHA PATH=$P sh "$R/ssh-snapshot.sh" gpu1 gpu4 gpu9 >"$FX/ssh-fail.txt" 2>"$FX/ssh-fail.err"
expect_eq "$?:$(ls "$FX/ssh-fail")" "1:gpu1.json" "ssh-failures: exit 1, only gpu1's snapshot is left"
expect_contains "$(cat "$FX/ssh-fail.txt")" "missing (2 of 3 expected hosts, no snapshot): gpu4, gpu9" \
	"ssh-failures: the fleet report names the missing hosts"
expect_contains "$(cat "$FX/ssh-fail.err")" "no snapshot from gpu4 (exit 127)" "ssh-failures: abiscope missing on gpu4"
expect_contains "$(cat "$FX/ssh-fail.err")" "no snapshot from gpu9 (exit 255)" "ssh-failures: gpu9 unreachable"
# the local folder read-only (a full disk where the snapshots are streamed to)
mkdir -p "$FX/ssh-ro"
lap
(export OUT="$FX/ssh-ro" ENV SSH_ARGS="$SSHA" PATH="$P"; in_node here "" "$FX/ssh-ro" sh "$R/ssh-snapshot.sh" gpu1 gpu2) \
	>"$FX/ssh-ro.txt" 2>"$FX/ssh-ro.err"
expect_eq "$?:$(count "$FX/ssh-ro")" "1:0" "ssh-failures: read-only local folder: exit 1, nothing written"
expect_contains "$(cat "$FX/ssh-ro.txt")" "missing (2 of 2 expected hosts, no snapshot): gpu1, gpu2" \
	"ssh-failures: read-only local folder: every host named missing"

if command -v pdsh >/dev/null 2>&1; then
lap
	OUT=$FX/pdsh-fail ENV=$ENV HOSTS='gpu[1-5]' PDSH_RCMD_TYPE=ssh PDSH_SSH_ARGS_APPEND=$SSHA PATH=$P \
		sh "$R/pdsh-snapshot.sh" >"$FX/pdsh-fail.txt" 2>"$FX/pdsh-fail.err"
	expect_eq "$?:$(count "$FX/pdsh-fail")" "1:3" "pdsh-failures: exit 1, gpu1..gpu3 wrote snapshots"
	expect_contains "$(cat "$FX/pdsh-fail.txt")" "missing (2 of 5 expected hosts, no snapshot): gpu4, gpu5" \
		"pdsh-failures: the fleet report names the missing hosts"
	expect_contains "$(cat "$FX/pdsh-fail.err")" "gpu4: ssh exited with exit code 127" "pdsh-failures: pdsh names gpu4's exit"
	expect_contains "$(cat "$FX/pdsh-fail.err")" "Read-only file system" "pdsh-failures: gpu5's write error is shown"
else
	echo "ok - pdsh-failures # SKIP pdsh is not installed (Debian: pdsh)"
fi

if command -v ansible >/dev/null 2>&1; then
	py=/usr/bin/python3
	[ -x $py ] || py=$(command -v python3)
	{
		echo "[gpu]"
		for h in gpu1 gpu2 gpu4; do
			echo "$h ansible_python_interpreter=$py ansible_ssh_common_args='$SSHA' ansible_remote_tmp=$FX/ansible-remote"
		done
	} >"$FX/hosts.ini"
	mkdir -p "$FX/ansible-files"
lap
	OUT=$FX/ansible ENV=$ENV INVENTORY=$FX/hosts.ini REMOTE_TMP=$FX/ansible-files ANSIBLE_LOCAL_TEMP=$FX/ansible-tmp \
		ANSIBLE_HOME=$FX/ansible-home ANSIBLE_REMOTE_TEMP=$FX/ansible-remote ANSIBLE_SSH_CONTROL_PATH_DIR=$FX/ansible-cp \
		ANSIBLE_SSH_ARGS='-o ControlMaster=no' ANSIBLE_PIPELINING=True ANSIBLE_HOST_KEY_CHECKING=True PATH=$P sh "$R/ansible-snapshot.sh" gpu \
		>"$FX/ansible.txt" 2>&1
	expect_eq "$?:$(ls "$FX/ansible" | tr '\n' ' ')" "1:gpu1.json.gz gpu2.json.gz " \
		"ansible-over-ssh: exit 1, gpu1 and gpu2 fetched back"
	expect_contains "$(cat "$FX/ansible.txt")" "missing (1 of 3 expected hosts, no snapshot): gpu4" \
		"ansible-over-ssh: the fleet report names gpu4"
else
	echo "ok - ansible-over-ssh # SKIP ansible is not installed (Debian: ansible-core)"
fi
echo "# ssh suite: $(($(date +%s) - t0)) s"
finish
