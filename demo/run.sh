#!/bin/sh
# make demo: builds the demo environments from source and shows what
# abiscope finds in them.  Each step prints the command it runs, exactly
# (from the repository's top, where make runs it), so it can be pasted;
# headings are bold only on a terminal (NO_COLOR, FORCE_COLOR and TERM=dumb
# as abiscope itself honours them), so a log holds no escape codes.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
cd "$top" || exit 1
A=${ABISCOPE:-./abiscope}
sh demo/build.sh "$here/build" || exit 1
V=demo/build/venv
C=demo/build/conda
SP=$V/lib/python3.11/site-packages

bold= plain=
if [ -z "${NO_COLOR:-}" ] && { [ -n "${FORCE_COLOR:-}" ] || { [ -t 1 ] && [ "${TERM:-dumb}" != dumb ]; }; }; then
	bold=$(printf '\033[1m') plain=$(printf '\033[0m')
fi
# step TITLE ARGS...: the heading, the command as typed, then its output
step() {
	printf '\n%s=== %s%s\n$ %s\n' "$bold" "$1" "$plain" "$(shift; printf '%s ' "$A" "$@" | sed 's/ $//')"
	shift
	"$A" "$@"
}

step "the whole environment: every extension module, in the state it would meet" \
	check $V
step "one extension, in the venv's python, with the dependency tree" \
	why --process $V/bin/python3 $SP/gds_io/_C.abi3.so
step "conda's old libstdc++ shadows the one the extension was built for" \
	why --process $C/bin/python3 $C/lib/python3.11/site-packages/fastops/_fastops.cpython-311-x86_64-linux-gnu.so
exit 0
