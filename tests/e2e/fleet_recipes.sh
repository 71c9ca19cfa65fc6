#!/bin/sh
# The fleet collection recipes of contrib/fleet, run here: srun, ssh and
# pdsh through stand-ins on PATH that run the remote command locally (with
# the node name a real one would give), Ansible for real against hosts that
# are this machine (ansible_connection=local; skipped when ansible is not
# installed), and the Kubernetes manifests' commands run the way the
# container runs them.  Each must leave one snapshot per host that
# `abiscope fleet` groups.
. "$(dirname "$0")/lib.sh"
fixture_dir fleet_recipes
R=$TOP/contrib/fleet
bin=$FX/bin
mkdir -p "$bin"
# abiscope as the hosts would run it
printf '#!/bin/sh\nexec "%s" "$@"\n' "$(cd "$(dirname "$ABISCOPE")" && pwd)/$(basename "$ABISCOPE")" >"$bin/abiscope"
# a small environment to describe
ENV=$FX/venv
mkdir -p "$ENV/bin" "$ENV/lib/python3.11/site-packages/pkg"
ln -sf "$(command -v python3)" "$ENV/bin/python3"
printf 'home = /usr/bin\nversion = 3.11.2\n' >"$ENV/pyvenv.cfg"
printf 'int f(void){return 0;}\n' >"$FX/f.c"
$CC -shared -fPIC -o "$ENV/lib/python3.11/site-packages/pkg/_f.so" "$FX/f.c"
# stand-ins: srun runs its command once per node, as the node
cat >"$bin/srun" <<'S'
#!/bin/sh
n=1
while [ $# -gt 0 ]; do case $1 in --nodes=*) n=${1#--nodes=}; shift ;; --*) shift ;; *) break ;; esac; done
i=1
while [ $i -le $n ]; do SLURMD_NODENAME=node$i "$@" || exit 1; i=$((i + 1)); done
S
cat >"$bin/ssh" <<'S'
#!/bin/sh
while [ $# -gt 0 ]; do case $1 in -o) shift 2 ;; -*) shift ;; *) break ;; esac; done
shift	# the host
exec "$@"
S
cat >"$bin/pdsh" <<'S'
#!/bin/sh
# pdsh -w 'h1,h2' CMD: CMD through a shell, on each host (hostname answers it)
hosts=$2
shift 2
for h in $(echo "$hosts" | tr ',' ' '); do FAKE_HOST=$h sh -c "$*" || exit 1; done
S
cat >"$bin/hostname" <<'S'
#!/bin/sh
echo "${FAKE_HOST:-$(cat /etc/hostname)}"
S
chmod +x "$bin"/*
P="$bin:$PATH"

count() { ls "$1" 2>/dev/null | grep -c '\.json'; }

OUT=$FX/srun NODES=3 ENV=$ENV PATH=$P sh "$R/srun-snapshot.sh" >"$FX/srun.txt" 2>&1
expect_eq "$?:$(count "$FX/srun")" "0:3" "srun recipe: one snapshot per node, fleet exit 0"
expect_contains "$(cat "$FX/srun.txt")" "3 hosts, 1 group" "srun recipe: fleet groups the nodes"
expect_eq "$(ls "$FX/srun")" "$(printf 'node1.json.gz\nnode2.json.gz\nnode3.json.gz')" "srun recipe: files named by node"

OUT=$FX/ssh ENV=$ENV PATH=$P sh "$R/ssh-snapshot.sh" gpu-a gpu-b >"$FX/ssh.txt" 2>&1
expect_eq "$?:$(count "$FX/ssh")" "0:2" "ssh recipe: streamed back, one per host"
expect_contains "$(cat "$FX/ssh.txt")" "gpu-a, gpu-b" "ssh recipe: labelled by host"

OUT=$FX/pdsh HOSTS=p1,p2 ENV=$ENV PATH=$P sh "$R/pdsh-snapshot.sh" >"$FX/pdsh.txt" 2>&1
expect_eq "$?:$(count "$FX/pdsh")" "0:2" "pdsh recipe: one snapshot per host"

if command -v ansible >/dev/null 2>&1; then
	printf '[gpu]\nans1 ansible_connection=local ansible_python_interpreter=%s\nans2 ansible_connection=local ansible_python_interpreter=%s\n' \
		"$(command -v python3)" "$(command -v python3)" >"$FX/hosts.ini"
	OUT=$FX/ansible ENV=$ENV INVENTORY=$FX/hosts.ini PATH=$P ANSIBLE_LOCAL_TEMP=$FX/ansible-tmp \
		ANSIBLE_HOME=$FX/ansible-home sh "$R/ansible-snapshot.sh" gpu >"$FX/ansible.txt" 2>&1
	expect_eq "$?:$(count "$FX/ansible")" "0:2" "ansible recipe: written and fetched back"
	expect_contains "$(cat "$FX/ansible.txt")" "ans1, ans2" "ansible recipe: labelled by inventory name"
else
	echo "ok - ansible recipe # SKIP ansible is not installed"
fi

# Kubernetes: the container's command, as `sh -c ARGS` with the env it sets
for m in k8s-daemonset k8s-job; do
	cmd=$(python3 -c "import yaml,sys; d=yaml.safe_load(open('$R/$m.yaml')); c=d['spec']['template']['spec']['containers'][0]; print(c['args'][0])")
	expect_contains "$cmd" "abiscope snapshot" "$m: its container runs abiscope snapshot"
	mkdir -p "$FX/$m/out" "$FX/$m/host"
	# /host is this machine's root (the node's, mounted), /out a folder
	run=$(printf '%s' "$cmd" | sed -e "s#/out/#$FX/$m/out/#g" -e 's# && sleep infinity##' -e "s#--root /host#--root /#")
	NODE_NAME=kn1 LABEL=img ENV=$ENV PATH=$P sh -c "$run" >"$FX/$m.txt" 2>&1
	expect_eq "$?:$(count "$FX/$m/out")" "0:1" "$m: the command writes its snapshot to the volume"
done
PATH=$P abiscope fleet "$FX/srun" "$FX/ssh" "$FX/k8s-daemonset/out" >"$FX/all.txt" 2>&1
expect_contains "$(cat "$FX/all.txt")" "6 hosts, 1 group" "fleet over the folders of several recipes"
finish
