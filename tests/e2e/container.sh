#!/bin/sh
# The container image (Dockerfile): FROM scratch with the abiscope binary,
# glibc's loader and libraries, busybox and the licenses, nothing else; its
# binary checks an environment mounted into it exactly as this build does;
# its driver probe dlopen()s a libcuda.so.1 put into it the way the NVIDIA
# container toolkit does (here a fake one); and the Kubernetes manifests'
# containers (contrib/fleet) run their commands in it with their volumes.
#
# Runs on the image localhost/abiscope:VERSION in podman's storage, or
# CONTAINER=1 builds it first (podman build; minutes, as make wheel;
# CONTAINER_BUILD_ARGS adds to the command, e.g. a CA bundle a network
# needs).  Containers run through buildah with its chroot isolation, as the
# build's RUN steps do (an OCI runtime needs CAP_SYS_RESOURCE for its
# rlimits, which some sandboxes drop).  SKIPs, saying why, without podman,
# buildah, root or the image.
. "$(dirname "$0")/lib.sh"
fixture_dir container
skip() {
	echo "ok - the container image # SKIP $1"
	exit 0
}
command -v podman >/dev/null 2>&1 || skip "no podman"
command -v buildah >/dev/null 2>&1 || skip "no buildah"
[ "$(id -u)" = 0 ] || skip "needs root (buildah run, mounts)"
version=$("$ABISCOPE" --version | sed 's/^abiscope //')
image=localhost/abiscope:$version
if [ "${CONTAINER:-0}" = 1 ]; then
	# shellcheck disable=SC2086 # the extra arguments are words
	podman build --isolation chroot --network=host ${CONTAINER_BUILD_ARGS:-} -t "$image" "$TOP" >"$FX/build.log" 2>&1
	expect_eq "$?" 0 "podman build of the Dockerfile"
fi
podman image exists "$image" || skip "no image $image: CONTAINER=1 builds it (podman build -t $image .)"
created=$(podman image inspect --format '{{.Created.Unix}}' "$image")
newer=$(find "$TOP/src" "$TOP/data" "$TOP/Dockerfile" "$TOP/mk" -type f -newermt "@$created" | head -1)
[ -z "$newer" ] || skip "$image is older than $newer: CONTAINER=1 builds it again"

ctr=$(buildah from --pull=false "$image")
trap 'buildah rm "$ctr" >/dev/null 2>&1' EXIT
rootfs=$(buildah mount "$ctr")
inimage() { buildah run --isolation chroot "$@"; }

# what it holds
size=$(podman image inspect --format '{{.Size}}' "$image")
expect_eq "$([ "$size" -lt 16000000 ] && echo small)" small "the image is small: $size bytes"
expect_eq "$(podman image inspect --format '{{json .Config.Entrypoint}}' "$image")" '["/usr/bin/abiscope"]' \
	"its entry point is the binary"
arch=$(uname -m)
(cd "$rootfs" && find . -type f | sort) >"$FX/files.txt"
want="./etc/group ./etc/passwd ./usr/bin/abiscope ./usr/bin/busybox"
for l in ld-linux-x86-64.so.2 ld-linux-aarch64.so.1 libc.so.6 libdl.so.2 libm.so.6 libpthread.so.0 librt.so.1; do
	[ -f "$rootfs/usr/lib/$arch-linux-gnu/$l" ] && want="$want ./usr/lib/$arch-linux-gnu/$l"
done
for d in abiscope/LICENSE abiscope/THIRD-PARTY-NOTICES abiscope/debian-packages abiscope/jansson.copyright abiscope/libstdc++.copyright \
	abiscope/libzip.copyright abiscope/zlib.copyright busybox-static/copyright libc6/copyright; do
	want="$want ./usr/share/doc/$d"
done
expect_eq "$(tr '\n' ' ' <"$FX/files.txt")" "$(echo "$want" | tr ' ' '\n' | sort | tr '\n' ' ')" \
	"its files: the binary, glibc's loader and libraries, busybox, the licenses; nothing else"
needed=$(readelf -d "$rootfs/usr/bin/abiscope" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort | tr '\n' ' ')
expect_eq "$needed" "libc.so.6 libdl.so.2 " "its binary needs only glibc's libraries, which the image holds"
expect_eq "$(inimage "$ctr" -- /usr/bin/abiscope --version 2>&1)" "abiscope $version" "abiscope --version in the image"
expect_eq "$(inimage "$ctr" -- sh -c 'echo "$0" | cat' shell 2>&1)" "shell" "busybox's sh and cat in the image"

# an environment mounted into it: the same answers as this build's
sh "$TOP/demo/build.sh" "$FX/demo" >"$FX/demo.log" 2>&1
for args in "check --root /host $FX/demo/venv" "check --json --root /host $FX/demo/venv" \
	"why --root /host $FX/demo/venv/lib/python3.11/site-packages/gds_io/_C.abi3.so"; do
	# shellcheck disable=SC2086 # the arguments are words
	"$ABISCOPE" $(echo "$args" | sed 's#--root /host#--root /#') >"$FX/native.out" 2>"$FX/native.err"
	want=$?
	# shellcheck disable=SC2086
	inimage -v /:/host:ro "$ctr" -- /usr/bin/abiscope $args >"$FX/image.out" 2>"$FX/image.err"
	got=$?
	# buildah's own lines about a command that exits non-zero
	grep -v -e '^subprocess exited with status' -e '^Error: exit status' "$FX/image.err" >>"$FX/image.out"
	cat "$FX/native.err" >>"$FX/native.out"
	sed -i 's#--root /host#--root /#' "$FX/image.out"
	if [ "$got" = "$want" ] && cmp -s "$FX/native.out" "$FX/image.out"; then
		pass "abiscope $(echo "$args" | sed "s#$FX/##g") in the image (/ mounted at /host): what this build prints with --root /, exit $got"
	else
		fail "abiscope $(echo "$args" | sed "s#$FX/##g") in the image: what this build prints with --root /" \
			"exit $got, want $want" "$(diff "$FX/native.out" "$FX/image.out" | head -10)"
	fi
done

# the driver probe: a libcuda.so.1 where the NVIDIA container toolkit puts it
cat >"$FX/cuda.c" <<'EOF'
int cuDriverGetVersion(int *v) { *v = 13000; return 0; }
int cuInit(unsigned f) { (void)f; return 100; /* CUDA_ERROR_NO_DEVICE */ }
int cuDeviceGetCount(int *n) { *n = 0; return 0; }
int cuDeviceGet(int *d, int i) { *d = i; return 0; }
int cuDeviceGetAttribute(int *v, int a, int d) { (void)a; (void)d; *v = 0; return 0; }
int cuDeviceGetName(char *s, int n, int d) { (void)n; (void)d; s[0] = 0; return 0; }
EOF
${CC:-cc} -shared -fPIC -Wl,-soname,libcuda.so.1 -o "$FX/libcuda.so.1" "$FX/cuda.c"
inimage -v "$FX/libcuda.so.1:/usr/lib/$arch-linux-gnu/libcuda.so.1:ro" "$ctr" -- /usr/bin/abiscope gpu --json \
	>"$FX/gpu.json" 2>&1
expect_eq "$(jq_py 'j["libcuda"]["loaded"], j["libcuda"]["path"], j["driver_cuda"]' <"$FX/gpu.json" 2>&1)" \
	"True /usr/lib/$arch-linux-gnu/libcuda.so.1 13.0" \
	"abiscope gpu in the image dlopen()s the libcuda.so.1 put there (a fake: CUDA 13.0)"
inimage "$ctr" -- /usr/bin/abiscope gpu --json >"$FX/gpu-none.json" 2>&1
expect_eq "$(jq_py 'j["libcuda"]["loaded"], j["driver_found"]' <"$FX/gpu-none.json" 2>&1)" "False False" \
	"and without one says there is no driver"

# the Kubernetes manifests' containers: their command, env and volumes
R=$TOP/contrib/fleet
python3 - "$R/k8s-daemonset.yaml" >"$FX/ds.sh" <<'EOF'
import shlex, sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
c = d["spec"]["template"]["spec"]["containers"][0]
print("image=" + shlex.quote(c["image"]))
print("cmd=" + shlex.quote(" ".join(shlex.quote(w) for w in c["command"] + c["args"])))
print("mounts=" + shlex.quote(" ".join("%s:%s" % (m["name"], m["mountPath"]) for m in c["volumeMounts"])))
EOF
. "$FX/ds.sh"
expect_eq "$image" "abiscope:$version" "k8s-daemonset.yaml runs this image (abiscope:$version)"
mkdir -p "$FX/k8s/out"
# the volumes: the node's / at /host, its /proc/driver/nvidia, the snapshot volume
cmd=$(printf '%s' "$cmd" | sed 's/ && sleep infinity//')
# shellcheck disable=SC2086 # cmd is quoted words
eval "inimage -v /:/host:ro -v $FX/k8s/out:/out --env NODE_NAME=kn1 --env ENV=$FX/demo/venv \"\$ctr\" -- $cmd" \
	>"$FX/k8s/ds.log" 2>&1
expect_eq "$?:$(ls "$FX/k8s/out")" "0:kn1.json.gz" "k8s-daemonset.yaml: its command in the image writes the node's snapshot"
"$ABISCOPE" check --host "$FX/k8s/out/kn1.json.gz" >"$FX/k8s/check-host.txt" 2>&1
"$ABISCOPE" check "$FX/demo/venv" >"$FX/k8s/check.txt" 2>&1
expect_eq "$(tail -1 "$FX/k8s/check-host.txt")" "$(tail -1 "$FX/k8s/check.txt")" \
	"check --host of that snapshot gives the verdict check gives on the node"
expect_eq "$(inimage "$ctr" -- sh -c 'sleep infinity & p=$!; sleep 1; kill -0 $p && echo sleeping; kill $p' 2>&1)" \
	sleeping "its sleep infinity (busybox) keeps the pod running"

# k8s-job.yaml: an init container of this image copies the binary into the
# serving image's pod, whose container snapshots its own environment (the
# serving image here: Debian 12, the demo environment at the manifest's ENV)
python3 - "$R/k8s-job.yaml" >"$FX/job.sh" <<'EOF'
import shlex, sys, yaml
s = yaml.safe_load(open(sys.argv[1]))["spec"]["template"]["spec"]
i, c = s["initContainers"][0], s["containers"][0]
q = lambda v: shlex.quote(" ".join(shlex.quote(w) for w in v))
print("init_image=%s init_cmd=%s" % (shlex.quote(i["image"]), q(i["command"] + i.get("args", []))))
print("cmd=%s" % q(c["command"] + c["args"]))
print("env=%s" % q(["--env=%s=%s" % (e["name"], e["value"]) for e in c["env"]]))
print("venv=%s" % shlex.quote(next(e["value"] for e in c["env"] if e["name"] == "ENV")))
EOF
. "$FX/job.sh"
expect_eq "$init_image" "abiscope:$version" "k8s-job.yaml's init container runs this image"
mkdir -p "$FX/k8s/tools" "$FX/k8s/job-out"
# shellcheck disable=SC2086
eval "inimage -v $FX/k8s/tools:/tools \"\$ctr\" -- $init_cmd" >"$FX/k8s/init.log" 2>&1
expect_eq "$?" 0 "k8s-job.yaml: the init container copies abiscope into the shared volume"
serving=$(buildah from --pull=false docker.io/library/debian:bookworm-slim 2>/dev/null)
if [ -n "$serving" ]; then
	# shellcheck disable=SC2086
	eval "inimage -v $FX/k8s/tools:/tools:ro -v $FX/k8s/job-out:/out -v $FX/demo/venv:$venv:ro $env \"\$serving\" -- $cmd" \
		>"$FX/k8s/job.log" 2>&1
	expect_eq "$?:$(ls "$FX/k8s/job-out")" "0:serving-2026-11.json.gz" \
		"k8s-job.yaml: its command in a serving image (Debian 12) snapshots that image's environment"
	buildah rm "$serving" >/dev/null 2>&1
else
	echo "ok - k8s-job.yaml in a serving image # SKIP no docker.io/library/debian:bookworm-slim in podman's storage"
fi
finish
