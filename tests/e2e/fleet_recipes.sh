#!/bin/sh
# The fleet recipes of contrib/fleet that need no daemons of their own:
# Ansible for real against hosts that are this machine
# (ansible_connection=local; skipped when ansible is not installed), and the
# Kubernetes manifests: their container commands run the way the container
# runs them (in the image itself: container.sh), the manifests validated
# offline against the Kubernetes API schemas (kubernetes-validate from PyPI, installed into
# $BUILD/pip-kubernetes-validate; skipped when it cannot be).  Slurm, ssh,
# pdsh and Ansible over ssh run on real daemons in fleet_slurm.sh and
# fleet_ssh.sh.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_fleet.sh"
fixture_dir fleet_recipes
R=$TOP/contrib/fleet
fleet_fixture

if command -v ansible >/dev/null 2>&1; then
	printf '[gpu]\nans1 ansible_connection=local ansible_python_interpreter=%s\nans2 ansible_connection=local ansible_python_interpreter=%s\n' \
		"$(command -v python3)" "$(command -v python3)" >"$FX/hosts.ini"
	mkdir -p "$FX/ansible-files"
	OUT=$FX/ansible ENV=$ENV INVENTORY=$FX/hosts.ini PATH=$P REMOTE_TMP=$FX/ansible-files ANSIBLE_LOCAL_TEMP=$FX/ansible-tmp \
		ANSIBLE_REMOTE_TEMP=$FX/ansible-remote \
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
	# /tools/abiscope: the binary the job's init container copies in
	run=$(printf '%s' "$cmd" | sed -e "s#/out/#$FX/$m/out/#g" -e 's# && sleep infinity##' -e "s#--root /host#--root /#" \
		-e 's#^/tools/abiscope #abiscope #')
	NODE_NAME=kn1 LABEL=img ENV=$ENV PATH=$P sh -c "$run" >"$FX/$m.txt" 2>&1
	expect_eq "$?:$(count "$FX/$m/out")" "0:1" "$m: the command writes its snapshot to the volume"
done
if [ -d "$FX/ansible" ]; then
	PATH=$P abiscope fleet --expect ans1,ans2,kn1,img "$FX/ansible" "$FX/k8s-daemonset/out" "$FX/k8s-job/out" \
		>"$FX/all.txt" 2>&1
	expect_eq "$?" 0 "fleet over the folders of several recipes: every expected host there"
	expect_contains "$(cat "$FX/all.txt")" "4 hosts, 1 group" "fleet over the folders of several recipes"
fi

# the manifests against the Kubernetes API schemas, offline
KV=$BUILD/pip-kubernetes-validate
kv() { PYTHONPATH=$KV python3 -m kubernetes_validate "$@"; }
if ! kv --version >/dev/null 2>&1; then
	python3 -m pip install --quiet --disable-pip-version-check --target "$KV" kubernetes-validate \
		>"$FX/pip.txt" 2>&1
fi
if kv --version >/dev/null 2>&1; then
	# without a network where this machine can take it away (the schemas are in the package)
	offline=
	unshare --net true 2>/dev/null && offline="unshare --net"
	for m in k8s-daemonset k8s-job; do
		$offline env PYTHONPATH="$KV" python3 -m kubernetes_validate --strict "$R/$m.yaml" >"$FX/$m.kv" 2>&1
		expect_eq "$?" 0 "$m: valid against the Kubernetes API schemas ($(kv --version 2>&1), --strict${offline:+, no network})"
	done
	# and it can fail: a misspelt field, a wrong type
	sed 's/mountPath: \/out}/mountPth: \/out}/' "$R/k8s-job.yaml" >"$FX/bad-field.yaml"
	sed 's/restartPolicy: Never/restartPolicy: 7/' "$R/k8s-job.yaml" >"$FX/bad-type.yaml"
	for b in bad-field bad-type; do
		kv --strict "$FX/$b.yaml" >"$FX/$b.kv" 2>&1
		expect_eq "$?" 1 "kubernetes-validate rejects a manifest with a $b"
	done
else
	echo "ok - k8s manifests against the API schemas # SKIP kubernetes-validate could not be installed from PyPI: $(tail -1 "$FX/pip.txt")"
fi
finish
