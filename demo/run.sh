#!/bin/sh
# make demo: builds the demo environments from source and shows what
# abiscope finds in them.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
A=${ABISCOPE:-$top/abiscope}
sh "$here/build.sh" "$here/build" || exit 1
SP=$here/build/venv/lib/python3.11/site-packages
C=$here/build/conda
say() { printf '\n\033[1m=== %s\033[0m\n$ %s\n' "$1" "$2"; }

say "the whole environment: every extension module, in the state it would meet" \
	"abiscope check $here/build/venv"
"$A" check "$here/build/venv"

say "one extension, with the dependency tree" \
	"abiscope why --preload-global .../torch/lib/libc10.so $SP/gds_io/_C.abi3.so"
"$A" why "$SP/gds_io/_C.abi3.so"

say "conda's old libstdc++ shadows the one the extension was built for" \
	"abiscope why --process $C/bin/python3 $C/lib/python3.11/site-packages/fastops/_fastops.cpython-311-x86_64-linux-gnu.so"
"$A" why --process "$C/bin/python3" "$C/lib/python3.11/site-packages/fastops/_fastops.cpython-311-x86_64-linux-gnu.so"
exit 0
