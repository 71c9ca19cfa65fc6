#!/bin/sh
# The manylinux wheel of this machine (make wheel): auditwheel accepts it as
# manylinux_2_17, pip installs it into a fresh venv with its man pages and
# completion where man and bash-completion find them, pipx and uvx run it,
# its metadata says its licenses, and the installed abiscope gives the same
# answers as the one built here (its C++ demangler too).  Building the wheel
# takes minutes (zig, Debian's sources), so this runs on a wheel already in
# dist/ (or WHEEL=1 builds it first); without one, or with one older than
# src/, it says SKIP.  The aarch64 wheel: pywheel_aarch64.sh.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_pywheel.sh"
fixture_dir pywheel
[ "${WHEEL:-0}" = 1 ] && make -s -C "$TOP" wheel >"$FX/make-wheel.log" 2>&1
arch=$(uname -m)
whl=$(ls "$TOP"/dist/abiscope-*-py3-none-manylinux_2_17_"$arch".whl 2>/dev/null | tail -1)
if [ -z "$whl" ]; then
	echo "ok - the manylinux wheel # SKIP no dist/abiscope-*.whl: run make wheel (or WHEEL=1 make test)"
	exit 0
fi
if [ -n "$(find "$TOP/src" "$TOP/data" -newer "$whl" -type f | head -1)" ]; then
	echo "ok - the manylinux wheel # SKIP $(basename "$whl") is older than src/: run make wheel again"
	exit 0
fi
version=$("$ABISCOPE" --version | sed 's/^abiscope //')
expect_eq "$(basename "$whl")" "abiscope-$version-py3-none-manylinux_2_17_$arch.whl" \
	"the wheel is named for this version and manylinux_2_17"

# auditwheel (PyPI), when make wheel installed it
aw=${WHEEL_BUILD:-$TOP/build-wheel}/venv/bin/auditwheel
if [ -x "$aw" ]; then
	"$aw" show "$whl" >"$FX/auditwheel.txt" 2>&1
	expect_contains "$(tr '\n' ' ' <"$FX/auditwheel.txt")" "consistent with the following platform tag: \"manylinux_2_17_$arch\"" \
		"auditwheel show: consistent with manylinux_2_17_$arch"
	aw_newest=$(grep -o "GLIBC_[0-9.]*" "$FX/auditwheel.txt" | sort -uV | tail -1)
else
	echo "ok - auditwheel show # SKIP build-wheel/venv has no auditwheel"
	aw_newest=
fi

# a fresh venv, the wheel installed by pip, nothing else
python3 -m venv "$FX/venv" >"$FX/venv.log" 2>&1
"$FX/venv/bin/pip" install -q --no-index "$whl" >"$FX/pip.log" 2>&1
expect_eq "$?" 0 "pip installs the wheel into a fresh venv (no compiler, no index)"
W=$FX/venv/bin/abiscope
expect_eq "$("$W" --version 2>&1)" "abiscope $version" "the console entry point runs: abiscope --version"
expect_eq "$("$FX/venv/bin/python" -m abiscope --version 2>&1)" "abiscope $version" "python -m abiscope --version"
bin=$("$FX/venv/bin/python" -c 'import abiscope, os; print(os.path.join(os.path.dirname(abiscope.__file__), "_bin", "abiscope"))')
needed=$(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort | tr '\n' ' ')
expect_eq "$needed" "libc.so.6 libdl.so.2 " \
	"the binary needs only glibc's libraries (zlib, jansson, libzip, libstdc++'s demangler are linked in)"
out=$("$W" check "$FX/venv" 2>&1)
expect_eq "$?" 0 "abiscope check of the venv it is installed in: exit 0"
expect_contains "$out" "OK: 0 of 0 extension modules would fail" "abiscope check of that venv: everything imports"

# its man pages and completion, where man and bash-completion look
sh "$TOP/mk/docs.sh" "$ABISCOPE" "$FX/share" >/dev/null 2>&1
same=1
for f in "$FX"/share/man1/*.1; do
	cmp -s "$f" "$FX/venv/share/man/man1/$(basename "$f")" || same="$same $(basename "$f")"
done
cmp -s "$FX/share/bash-completion/abiscope" "$FX/venv/share/bash-completion/completions/abiscope" || same="$same bash"
cmp -s "$FX/share/zsh/_abiscope" "$FX/venv/share/zsh/site-functions/_abiscope" || same="$same zsh"
expect_eq "$same" 1 "pip puts $(ls "$FX"/share/man1 | wc -l) man pages in VENV/share/man/man1, the completion in share/bash-completion, share/zsh: those this build prints"
if command -v man >/dev/null 2>&1; then
	expect_eq "$(PATH="$FX/venv/bin:/usr/bin:/bin" MANPATH='' man -w abiscope-check 2>&1)" \
		"$FX/venv/share/man/man1/abiscope-check.1" "man finds the venv's page from its bin/ on PATH (man -w abiscope-check)"
else
	echo "ok - man finds the venv's page # SKIP no man (man-db)"
fi
if [ -f /usr/share/bash-completion/bash_completion ]; then
	got=$(PATH="$FX/venv/bin:$PATH" bash -c '. /usr/share/bash-completion/bash_completion; __load_completion abiscope && complete -p abiscope' 2>&1)
	expect_contains "$got" "abiscope" "bash-completion loads the venv's completion from its bin/ on PATH: $got"
else
	echo "ok - bash-completion loads the venv's completion # SKIP no /usr/share/bash-completion"
fi
expect_eq "$("$FX/venv/bin/python" -c 'import importlib.metadata as m; d = m.metadata("abiscope")
print(d["License-Expression"].split(" AND ")[0], len(d.get_all("License-File")), len(d.get_all("Classifier")) > 5)')" \
	"Apache-2.0 6 True" "its metadata: License-Expression Apache-2.0 AND ..., 6 license files, classifiers"
# pipx (from PyPI; 1.5 and later link the man pages) and uvx, when at hand
if python3 -m pip install -q --disable-pip-version-check --target "$FX/pipx-pkg" pipx >"$FX/pipx-pip.log" 2>&1; then
	PYTHONPATH=$FX/pipx-pkg PIPX_HOME=$FX/pipx PIPX_BIN_DIR=$FX/pipx-bin PIPX_MAN_DIR=$FX/pipx-man \
		python3 -m pipx install "$whl" >"$FX/pipx.log" 2>&1
	expect_eq "$?:$("$FX/pipx-bin/abiscope" --version 2>&1)" "0:abiscope $version" "pipx install: abiscope on its PATH"
	expect_eq "$(cmp "$FX/share/man1/abiscope.1" "$FX/pipx-man/man1/abiscope.1" 2>&1 && echo same)" same \
		"pipx links the man pages ($(PYTHONPATH=$FX/pipx-pkg python3 -m pipx --version))"
else
	echo "ok - pipx install # SKIP pipx could not be installed from PyPI: $(tail -1 "$FX/pipx-pip.log")"
fi
if command -v uvx >/dev/null 2>&1; then
	expect_eq "$(UV_CACHE_DIR=$FX/uv UV_TOOL_DIR=$FX/uv-tools uvx --offline --from "$whl" abiscope --version 2>/dev/null)" \
		"abiscope $version" "uvx --from the wheel runs abiscope ($(uvx --version 2>&1))"
else
	echo "ok - uvx --from the wheel # SKIP no uvx"
fi

# abiscope on itself: the glibc its binary needs, against the tag
"$W" wheel --json --env "$FX/venv" "$whl" >"$FX/self.json"
floor=$(jq_py 'j["glibc_floor"]["version"]' <"$FX/self.json")
expect_eq "$(jq_py 'j["glibc_floor"]["member"], j["glibc_floor"]["tag_promises"], j["glibc_floor"]["exceeds_tag"]' \
	<"$FX/self.json")" "abiscope/_bin/abiscope 2.17 False" "abiscope wheel on itself: the binary is within manylinux_2_17"
expect_eq "$(printf '%s\n2.17\n' "$floor" | sort -V | tail -1)" "2.17" "abiscope reports a glibc floor of $floor, not above 2.17"
if [ -n "$aw_newest" ]; then
	expect_eq "GLIBC_$floor" "$aw_newest" "abiscope's glibc floor is the newest GLIBC_ version auditwheel lists"
fi
newest=$(objdump -T "$bin" | grep -o 'GLIBC_[0-9][0-9.]*' | sort -uV | tail -1)
expect_eq "GLIBC_$floor" "$newest" "abiscope's glibc floor is the newest GLIBC_ version objdump -T lists"

# the demo environment and C++ names: the wheel's binary answers exactly as
# this build's
sh "$TOP/demo/build.sh" "$FX/demo" >"$FX/demo.log" 2>&1
cxx_fixture "$FX/cxx" >"$FX/cxx.log" 2>&1
for args in "check --json $FX/demo/venv" "check $FX/demo/venv" "check -v $FX/demo/venv" "cuda --json --no-driver $FX/demo/venv" \
	"why --json $FX/demo/venv/lib/python3.11/site-packages/gds_io/_C.abi3.so" "gpu --json --no-driver" \
	"why $FX/cxx/cons.so" "check --libraries -v $FX/cxx" "help --man why" "completion zsh"; do
	# shellcheck disable=SC2086 # the arguments are words
	"$ABISCOPE" $args >"$FX/native.out" 2>&1
	want=$?
	# shellcheck disable=SC2086
	"$W" $args >"$FX/wheel.out" 2>&1
	got=$?
	if [ "$got" = "$want" ] && cmp -s "$FX/native.out" "$FX/wheel.out"; then
		pass "abiscope $(echo "$args" | sed "s#$FX/##g"): the wheel's binary prints the same, exit $got"
	else
		fail "abiscope $(echo "$args" | sed "s#$FX/##g"): the wheel's binary prints the same" \
			"exit $got, want $want" "$(diff "$FX/native.out" "$FX/wheel.out" | head -10)"
	fi
done
"$W" snapshot --no-driver -o "$FX/demo.json.gz" "$FX/demo/venv" >/dev/null 2>&1
expect_eq "$?" 0 "the wheel's abiscope writes a snapshot of the demo environment"
"$W" diff "$FX/demo.json.gz" "$FX/demo/venv" >/dev/null 2>&1
expect_eq "$?" 0 "the wheel's abiscope reads it back: diff against the same environment finds nothing"
[ "$fails" -eq 0 ]
