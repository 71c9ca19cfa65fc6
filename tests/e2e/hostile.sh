#!/bin/sh
# Hostile and unlucky input (issue 13): nothing inspected runs, nothing
# outside the inspected tree leaks into a snapshot, names reach the
# terminal escaped, and bad files give a clear error instead of a crash,
# a hang or unbounded memory.  Every fixture is built here.
. "$(dirname "$0")/lib.sh"
fixture_dir hostile
pybin=$(command -v python3)

# A minimal environment: a venv with one distribution and one module.
# env DIR
make_env() {
	E=$1
	SP=$E/lib/python3.11/site-packages
	mkdir -p "$E/bin" "$SP/pkg" "$SP/pkg-1.0.dist-info"
	ln -sf "$pybin" "$E/bin/python3"
	printf 'home = %s\ninclude-system-site-packages = false\nversion = 3.11.2\n' "$(dirname "$pybin")" >"$E/pyvenv.cfg"
	printf 'int PyInit__m(void) { return 0; }\n' >"$FX/m.c"
	$CC -shared -fPIC -o "$SP/pkg/_m.cpython-311-x86_64-linux-gnu.so" "$FX/m.c"
	printf 'Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\n' >"$SP/pkg-1.0.dist-info/METADATA"
	printf 'pkg/_m.cpython-311-x86_64-linux-gnu.so,,\npkg-1.0.dist-info/RECORD,,\n' >"$SP/pkg-1.0.dist-info/RECORD"
}

# ---- 1. the driver probe loads no libcuda.so.1 that LD_LIBRARY_PATH points at
mkdir -p "$FX/evil"
cat >"$FX/evil/cuda.c" <<'C'
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
__attribute__((constructor)) static void pwned(void)
{
	const char *m = getenv("ABISCOPE_TEST_MARK");
	if (m) { int fd = open(m, O_WRONLY | O_CREAT | O_APPEND, 0644); if (fd >= 0) { write(fd, "ran\n", 4); close(fd); } }
}
int cuDriverGetVersion(int *v) { *v = 99000; return 0; }
C
$CC -shared -fPIC -o "$FX/evil/libcuda.so.1" "$FX/evil/cuda.c" -Wl,-soname,libcuda.so.1
make_env "$FX/env1"
MARK=$FX/mark
export ABISCOPE_TEST_MARK=$MARK
for cmd in "cuda $FX/evil/libcuda.so.1" "cuda --gpu sm_90 $FX/evil/libcuda.so.1" \
	"snapshot -o $FX/s1.json $FX/env1" "gpu"; do
	rm -f "$MARK"
	LD_LIBRARY_PATH=$FX/evil $ABISCOPE $cmd >"$FX/out1.txt" 2>&1
	if [ -e "$MARK" ]; then fail "$cmd: a libcuda.so.1 on LD_LIBRARY_PATH is not loaded" "its constructor ran"
	else pass "$cmd: a libcuda.so.1 on LD_LIBRARY_PATH is not loaded"; fi
done
# the control: the fake does run when something loads it by that name
rm -f "$MARK"
LD_LIBRARY_PATH=$FX/evil python3 -c 'import ctypes; ctypes.CDLL("libcuda.so.1")'
[ -e "$MARK" ]
ok=$?
expect_eq "$ok" 0 "control: the fake libcuda.so.1 runs its constructor when loaded"
unset ABISCOPE_TEST_MARK
$ABISCOPE gpu --json >"$FX/gpu.json" 2>&1
expect_not_contains "$(cat "$FX/gpu.json")" "$FX/evil" "gpu: the driver it reports is not the one on LD_LIBRARY_PATH"

# ---- 2. a snapshot carries nothing from outside the environment
make_env "$FX/env2"
DI=$FX/env2/lib/python3.11/site-packages/pkg-1.0.dist-info
rm "$DI/METADATA" "$DI/RECORD"
ln -s /proc/self/environ "$DI/METADATA"
ln -s /proc/self/environ "$DI/RECORD"
printf 'SECRET=%s\n' s3cr3t-outside-value >"$FX/outside.txt"
ln -s "$FX/outside.txt" "$FX/env2/lib/python3.11/site-packages/pkg/__init__.py"
ABISCOPE_TEST_SECRET=s3cr3t-environ-value $ABISCOPE snapshot --no-driver -o "$FX/s2.json" "$FX/env2" >"$FX/out2.txt" 2>&1
expect_eq "$?" 0 "snapshot of an env whose METADATA/RECORD link to /proc/self/environ: exit 0"
expect_not_contains "$(cat "$FX/s2.json")" "s3cr3t-environ-value" "snapshot: /proc/self/environ is not recorded"
expect_not_contains "$(cat "$FX/s2.json")" "s3cr3t-outside-value" "snapshot: a link out of the env is kept as a link, not its content"
expect_eq "$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(sorted(f["path"] for f in j["files"] if f["path"].startswith(("/proc","/sys"))))' "$FX/s2.json")" "[]" \
	"snapshot: no file of /proc or /sys is described"

finish
