#!/bin/sh
# The habits of the command-line tools this audience uses every day (uv,
# ruff, pip): a mistyped command or option gets a suggestion, -V, -q and
# -qq, the colour variables, options before the command.
. "$(dirname "$0")/lib.sh"
fixture_dir cli_conventions
A=$ABISCOPE

# did you mean: commands
out=$("$A" chek 2>&1)
expect_eq "$?" 2 "a mistyped command is a usage error"
expect_contains "$out" "abiscope: unknown command 'chek'" "a mistyped command is named"
expect_contains "$out" "a similar command exists: 'check'" "chek: a similar command exists: 'check'"
expect_not_contains "$out" "commands:" "a mistyped command does not dump the command list"
expect_contains "$("$A" torch_compat 2>&1)" "a similar command exists: 'torch-compat'" "torch_compat: torch-compat"
expect_contains "$("$A" snap 2>&1)" "a similar command exists: 'snapshot'" "snap: the one command it begins"
expect_not_contains "$("$A" xyzzy 2>&1)" "similar" "nothing like any command: no suggestion"
# ... and options
out=$("$A" --frobnicate 2>&1)
expect_eq "$?:$(echo "$out" | head -1)" "2:abiscope: unknown option '--frobnicate'" \
	"an unknown option before the command is an unknown option, not an unknown command"
out=$("$A" check --jsn 2>&1)
expect_eq "$?:$(echo "$out" | sed -n 2p)" "2:  a similar option exists: '--json'" "check --jsn: a similar option exists: '--json'"
expect_contains "$("$A" check --verbos 2>&1)" "a similar option exists: '--verbose'" "check --verbos: --verbose"
expect_contains "$("$A" check --process x 2>&1)" "--process is an option of: why" \
	"an option of another command says which commands take it"

# -V, options before the command
expect_eq "$("$A" -V)" "$("$A" --version)" "-V prints the version"
expect_eq "$("$A" --color=never -q gpu --no-driver 2>&1)" "$("$A" gpu --no-driver --color=never -q 2>&1)" \
	"the shared options may come before the command"

# -q: the report only; -qq: nothing on standard output, the exit status answers
printf 'int f(void){return 0;}\n' >"$FX/f.c"
printf 'int g(void);\nint f(void){return g();}\n' >"$FX/m.c"
$CC -shared -fPIC -o "$FX/libg.so" "$FX/f.c" -Wl,-soname,libgone.so.1
$CC -shared -fPIC -o "$FX/m.so" "$FX/m.c" -L"$FX" -lg
mv "$FX/libg.so" "$FX/libg.so.moved"
"$A" why "$FX/m.so" >"$FX/why.txt" 2>&1
st=$?
"$A" why -q "$FX/m.so" >"$FX/why-q.txt" 2>&1
expect_eq "$?:$(cat "$FX/why-q.txt")" "$st:$(cat "$FX/why.txt")" "-q keeps the report (no progress line, no prompt)"
out=$("$A" why -qq "$FX/m.so" 2>&1)
expect_eq "$?:$out" "1:" "-qq: nothing on standard output, exit 1 says it would not load"
out=$("$A" -qq why --json "$FX/m.so")
expect_eq "$?:$out" "1:" "-qq before the command, with --json too"
out=$("$A" check -qq "$FX/no-such-env" 2>&1)
expect_eq "$?" 3 "-qq: an unreadable PATH still exits 3"
expect_contains "$out" "no-such-env: cannot open" "-qq: errors still reach standard error"
out=$("$A" explain -qq "ImportError: libgone.so.1: cannot open shared object file: No such file or directory" 2>&1)
expect_eq "$out" "" "-qq works for explain, whose options end at the text"

# --fail-on warning: a CI job fails on warnings too (a venv with two
# metadata folders for one package: a warning, nothing fails)
W=$FX/warn
mkdir -p "$W/bin" "$W/lib/python3.11/site-packages/pkg"
ln -sf "$(command -v python3)" "$W/bin/python3"
printf 'home = /usr/bin\nversion = 3.11.2\n' >"$W/pyvenv.cfg"
: >"$W/lib/python3.11/site-packages/pkg/__init__.py"
for v in 1.0 2.0; do
	d=$W/lib/python3.11/site-packages/pkg-$v.dist-info
	mkdir -p "$d"
	printf 'Metadata-Version: 2.1\nName: pkg\nVersion: %s\n' $v >"$d/METADATA"
	printf 'pkg/__init__.py,,\n' >"$d/RECORD"
done
out=$("$A" check "$W" 2>&1)
expect_eq "$?:$(echo "$out" | tail -1)" "0:OK: 0 of 0 extension modules would fail to import; 1 warning" \
	"check: a warning alone exits 0"
"$A" check --fail-on warning --json "$W" >"$FX/warn.json" 2>"$FX/warn.err"
expect_eq "$?:$(cat "$FX/warn.err")" "1:abiscope check: exit 1: 1 warning and --fail-on warning" \
	"check --fail-on warning: exit 1, said on stderr"
expect_eq "$(jq_py 'j["summary"]["warnings"]' <"$FX/warn.json")" 1 "check --fail-on warning --json: standard output is still one document"
expect_eq "$("$A" check --fail-on=error "$W" >/dev/null 2>&1; echo $?)" 0 "check --fail-on=error: the default"
expect_eq "$("$A" check --fail-on warning "$FX/no-such" >/dev/null 2>&1; echo $?)" 3 "check --fail-on warning: exit 3 stays 3"
out=$("$A" check --fail-on sometimes "$W" 2>&1)
expect_eq "$?:$(echo "$out" | head -1)" "2:abiscope check: --fail-on takes error or warning" "--fail-on takes error or warning"

# EXAMPLES: in --help and the man page of every command, and each one parses
for c in $("$A" --help | sed -n '/^commands:/,/^$/s/^  \([a-z-]*\) .*/\1/p'); do
	expect_contains "$("$A" "$c" --help)" "
examples:
  " "$c --help has examples"
	expect_contains "$("$A" help --man "$c")" ".SH EXAMPLES" "abiscope-$c(1) has EXAMPLES"
	bad=
	for line in $("$A" "$c" --help | sed -n '/^examples:/,/^$/s/^  \(abiscope .*\)/\1/p' | sed 's/[<|].*//' | tr ' ' '\001'); do
		line=$(echo "$line" | tr '\001' ' ')
		# an example's glob (dist/*.whl) is the user's files, not this checkout's
		set -f
		eval "set -- $line"
		shift
		# explain's options end at its TEXT: check them without it
		[ "$c" = explain ] && [ $# -gt 1 ] && eval "set -- $(echo "$line" | sed 's/^abiscope //; s/ "[^"]*"$//')"
		set +f
		out=$("$A" "$@" --help 2>&1)
		case "$?:$out" in "0:usage: abiscope $c "*) ;; *) bad="$bad [$line: $(echo "$out" | head -1)]" ;; esac
	done
	expect_eq "$bad" "" "$c: every example's options are ones it takes"
done
expect_contains "$("$A" --help)" "examples:" "abiscope --help has examples"
expect_contains "$("$A" help --man)" ".SH EXAMPLES" "abiscope(1) has EXAMPLES"

# bash completes option values given with '=': as one word, or split at '='
# (bash's COMP_WORDBREAKS has '=')
"$A" completion bash | sed '/^complete /d' >"$FX/completion.bash"
comp() {	# comp WORD...: what bash offers for the last word
	bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _abiscope; echo "${COMPREPLY[*]}"' \
		sh "$FX/completion.bash" "$@"
}
expect_eq "$(comp abiscope why --color = "")" "auto always never" "bash: --color= offers auto always never"
expect_eq "$(comp abiscope why --color =)" "auto always never" "bash: --color= (the cursor after '=')"
expect_eq "$(comp abiscope why --color = al)" "always" "bash: --color=al completes to always"
expect_eq "$(comp abiscope why --color=al)" "--color=always" "bash: --color=al as one word"
expect_eq "$(comp abiscope check --fail-on "")" "error warning" "bash: --fail-on's values"

# colour: --color=auto is on a terminal only; TERM=dumb and NO_COLOR turn it
# off, FORCE_COLOR and CLICOLOR_FORCE (not 0) turn it on in a log
esc=$(printf '\033')
colours() {	# colours ENV...: 1 when `why` prints an escape sequence, run on a terminal
	script -qec "env $* $A why $FX/m.so" /dev/null 2>/dev/null | grep -c "$esc" | sed 's/^[1-9][0-9]*$/1/'
}
plain() {	# plain ENV...: the same into a pipe
	env "$@" "$A" why "$FX/m.so" 2>&1 | grep -c "$esc" | sed 's/^[1-9][0-9]*$/1/'
}
if command -v script >/dev/null 2>&1; then
	expect_eq "$(colours TERM=xterm)" 1 "colour on a terminal"
	expect_eq "$(colours TERM=dumb)" 0 "TERM=dumb: no colour"
	expect_eq "$(colours TERM=xterm NO_COLOR=1)" 0 "NO_COLOR: no colour"
	expect_eq "$(colours TERM=xterm NO_COLOR=1 FORCE_COLOR=1)" 0 "NO_COLOR wins over FORCE_COLOR"
else
	echo "ok - colour on a terminal # SKIP no script(1) (util-linux)"
fi
expect_eq "$(plain TERM=xterm)" 0 "no colour into a pipe"
expect_eq "$(plain FORCE_COLOR=1)" 1 "FORCE_COLOR: colour into a pipe (a CI log)"
expect_eq "$(plain CLICOLOR_FORCE=1)" 1 "CLICOLOR_FORCE=1: colour into a pipe"
expect_eq "$(plain CLICOLOR_FORCE=0)" 0 "CLICOLOR_FORCE=0 forces nothing"
expect_eq "$(FORCE_COLOR=1 "$A" why --color=never "$FX/m.so" 2>&1 | grep -c "$esc")" 0 "--color=never wins over FORCE_COLOR"

# make demo's script prints exactly the command it runs, and a log of it
# holds no escape codes
(cd "$TOP" && ABISCOPE=$A sh demo/run.sh) >"$FX/demo.log" 2>&1
expect_eq "$?:$(grep -c "$esc" "$FX/demo.log")" "0:0" "demo/run.sh: exit 0, no escape codes in a log"
grep '^\$ ' "$FX/demo.log" | sed 's/^\$ //' >"$FX/demo.commands"
expect_eq "$(wc -l <"$FX/demo.commands")" 3 "demo/run.sh: three commands shown"
i=0
while read -r cmd; do
	i=$((i + 1))
	# what the log shows under the command, up to the next heading
	awk -v c="\$ $cmd" 'f && /^=== / { exit } f { print } $0 == c { f = 1 }' "$FX/demo.log" |
		sed -e :a -e '/^\n*$/{$d;N;ba' -e '}' >"$FX/demo.$i.shown"
	(cd "$TOP" && sh -c "$cmd") 2>&1 | sed -e :a -e '/^\n*$/{$d;N;ba' -e '}' >"$FX/demo.$i.ran"
	if cmp -s "$FX/demo.$i.shown" "$FX/demo.$i.ran"; then
		pass "demo/run.sh: command $i, run as shown, prints what the demo showed"
	else
		fail "demo/run.sh: command $i, run as shown, prints what the demo showed" "$cmd" \
			"$(diff "$FX/demo.$i.shown" "$FX/demo.$i.ran" | head -5)"
	fi
done <"$FX/demo.commands"

[ "$fails" -eq 0 ]
