#!/bin/sh
# A report that does not reach stdout is no answer (issue 26 item 4): every
# command writing to a full disk (/dev/full) or to a closed pipe (with
# SIGPIPE ignored, as CI runners and Python's subprocess often leave it)
# exits 3 and says so, as -o and --junit already do.  And check --host
# SNAPSHOT PATH with a PATH that is missing, a FIFO or a device is an error,
# as check PATH is, never "OK: 0 of 0".
. "$(dirname "$0")/lib.sh"
fixture_dir lost_output
# the binary itself: run.sh's --json recorder in front of it writes through cat
BIN=${ABISCOPE_BINARY:-$ABISCOPE}
pybin=$(command -v python3)
minimal_env "$FX/env"
LIB=$SP/pkg/_m.cpython-311-x86_64-linux-gnu.so
$ABISCOPE snapshot --no-driver -o "$FX/s.json" "$E" >/dev/null 2>&1
expect_eq "$?" 0 "snapshot for the fixtures: exit 0"
python3 - "$FX/whl/pkg-2.0-cp311-cp311-manylinux_2_17_x86_64.whl" "$LIB" <<'PY'
import os, sys, zipfile
w, lib = sys.argv[1:]
os.makedirs(os.path.dirname(w), exist_ok=True)
with zipfile.ZipFile(w, "w") as z:
    z.write(lib, "pkg/" + os.path.basename(lib))
    z.writestr("pkg-2.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: pkg\nVersion: 2.0\n")
    z.writestr("pkg-2.0.dist-info/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: cp311-cp311-manylinux_2_17_x86_64\n")
    z.writestr("pkg-2.0.dist-info/RECORD", "")
PY
WHL=$FX/whl/pkg-2.0-cp311-cp311-manylinux_2_17_x86_64.whl
printf 'ImportError: libgone.so.1: cannot open shared object file: No such file or directory\n' >"$FX/err.txt"

# one command per line: what it writes to stdout
cat >"$FX/cmds" <<EOF2
check $E
check --json $E
check --color always -v $E
cuda $LIB
cuda --json $LIB
torch-compat $E
why $LIB
why --json $LIB
snapshot --no-driver -o - $E
diff $FX/s.json $FX/s.json
fleet $FX/s.json $FX/s.json
gpu
gpu --json
explain --python $E/bin/python3
wheel --env $E $WHL
help check
check --help
completion bash
--version
EOF2
while read -r cmd; do
	# shellcheck disable=SC2086
	$BIN $cmd <"$FX/err.txt" >/dev/full 2>"$FX/full.err"
	rc=$?
	expect_eq "$rc" 3 "abiscope $cmd >/dev/full: exit 3"
	expect_contains "$(cat "$FX/full.err")" "cannot write the report to standard output: No space left on device" \
		"abiscope $cmd >/dev/full: says the report was lost"
	# the control: the same command to a file that takes it writes something and does not exit 3
	# shellcheck disable=SC2086
	$BIN $cmd <"$FX/err.txt" >"$FX/ok.out" 2>/dev/null
	rc=$?
	[ "$rc" -ne 3 ] && [ -s "$FX/ok.out" ]
	expect_eq "$?" 0 "abiscope $cmd to a file: a report, exit $rc"
done <"$FX/cmds"

# a closed pipe, SIGPIPE ignored: the reader is gone before the first write
python3 - "$BIN" "$E" "$FX/pipe.err" <<'PY'
import os, signal, subprocess, sys
abiscope, env, err = sys.argv[1:]
for cmd in (["check", env], ["check", "--json", env], ["--version"]):
    r, w = os.pipe()
    os.close(r)
    with open(err, "w") as e:
        rc = subprocess.call([abiscope] + cmd, stdout=w, stderr=e,
                             preexec_fn=lambda: signal.signal(signal.SIGPIPE, signal.SIG_IGN))
    os.close(w)
    msg = open(err).read()
    ok = rc == 3 and "Broken pipe" in msg
    print(("ok - " if ok else "not ok - ") + "abiscope %s to a closed pipe (SIGPIPE ignored): exit 3, 'Broken pipe' (got %d)"
          % (" ".join(cmd[:2] if cmd[0] == "check" and cmd[1] == "--json" else cmd[:1]), rc))
    if not ok:
        print("#   " + msg.strip().replace("\n", "\n#   "))
PY

# check --host SNAPSHOT PATH: PATH is this machine's, read as check reads it
mkfifo "$FX/fifo"
for p in "$FX/nonexistent" "$FX/fifo" /dev/zero; do
	timeout 60 $ABISCOPE check --host "$FX/s.json" "$p" >"$FX/host.out" 2>&1
	rc=$?
	timeout 60 $ABISCOPE check "$p" >"$FX/plain.out" 2>&1
	expect_eq "$rc $?" "3 3" "check --host SNAP $(basename "$p"): exit 3, as check $(basename "$p")"
	expect_eq "$(cat "$FX/host.out")" "$(cat "$FX/plain.out")" "check --host SNAP $(basename "$p"): the error check gives"
	expect_not_contains "$(cat "$FX/host.out")" "0 of 0" "check --host SNAP $(basename "$p"): no 'OK: 0 of 0'"
done
finish
