#!/bin/sh
# The command table (src/cli/commands.c) holds --help, the parser, the man
# pages, the completion and the README's synopses together: this test
# compares them, so none can drift from what the parser accepts.
. "$(dirname "$0")/lib.sh"
fixture_dir cli_table
A=$ABISCOPE

commands=$("$A" --help | sed -n '/^commands:/,/^$/s/^  \([a-z-]*\) .*/\1/p')
for c in why check wheel snapshot help completion; do
	expect_contains " $(echo $commands) " " $c " "abiscope --help lists $c"
done

# options COMMAND: the long options its --help lists, one a line
options() {
	"$A" "$1" --help | sed -n 's/^  \(-[a-z], \)\{0,1\}\(--[a-z-]*\).*/\2/p'
}
# a value each option's metavariable accepts
sample() {
	case "$1" in
	SPEC) echo sm_90 ;;
	VERSION) echo 580.65.06 ;;
	WHEN) echo never ;;
	BYTES) echo 65536 ;;
	LEVEL) echo warning ;;
	*) echo x ;;
	esac
}

sh "$TOP/mk/docs.sh" "$A" "$FX/share" || fail "mk/docs.sh writes the man pages and completion"
sed -e '/^complete /d' "$FX/share/bash-completion/abiscope" >"$FX/bash-functions"

for c in $commands; do
	opts=$(options "$c")
	[ -n "$opts" ] || fail "$c: --help lists options"
	bad=
	for o in $opts; do
		[ "$o" = --help ] && continue
		# its value, if --help shows one
		meta=$("$A" "$c" --help | sed -n "s/^  \(-[a-z], \)\{0,1\}$o \([A-Z][A-Z.|]*\).*/\2/p" | head -1)
		if [ -n "$meta" ]; then
			out=$("$A" "$c" "$o" "$(sample "$meta")" --help 2>&1)
		else
			out=$("$A" "$c" "$o" --help 2>&1)
		fi
		st=$?
		case "$st:$out" in
		"0:usage: abiscope $c "*) ;;
		*) bad="$bad $o($st: $(printf '%s' "$out" | head -1))" ;;
		esac
	done
	expect_eq "$bad" "" "$c: the parser takes and handles every option --help lists"

	# man page: the same options, and it renders without a warning
	man=$FX/share/man1/abiscope-$c.1
	mopts=$(sed -n '/^\.SH OPTIONS/,/^\.SH/p' "$man" | grep -o '\\fB\\-\\-[a-z]*\(\\-[a-z]*\)*' | sed 's/\\fB//; s/\\-/-/g')
	expect_eq "$(echo $mopts)" "$(echo $opts)" "$c: the man page lists the options --help lists"
	expect_eq "$(groff -man -ww -z "$man" 2>&1)" "" "$c: the man page renders without a warning"

	# bash: completing "-" after the command offers the options
	got=$(bash -c '. "$1"; COMP_WORDS=(abiscope "$2" -); COMP_CWORD=2; _abiscope; printf "%s\n" "${COMPREPLY[@]}"' \
		sh "$FX/bash-functions" "$c" | grep '^--' | sort)
	expect_eq "$(echo $got)" "$(echo "$opts" | sort | tr '\n' ' ' | sed 's/ $//')" \
		"$c: bash completes the options --help lists"

	# zsh: the spec names every option
	zopts=$(sed -n "/^	$c)\$/,/;;/p" "$FX/share/zsh/_abiscope" | grep -o -- "--[a-z-]*" | sort -u)
	expect_eq "$(echo $zopts)" "$(echo "$opts" | sort | tr '\n' ' ' | sed 's/ $//')" \
		"$c: the zsh completion names the options --help lists"
done

# The README's synopses are what `abiscope help --synopsis` prints.
cp "$TOP/README.md" "$FX/README.md"
ABISCOPE=$A sh "$TOP/mk/readme.sh" "$FX/README.md"
if diff -u "$TOP/README.md" "$FX/README.md" >"$FX/readme.diff"; then
	pass "README's synopses and package list are generated (make readme)"
else
	fail "README's synopses and package list are generated (make readme)" "$(head -30 "$FX/readme.diff")"
fi
# ... and every option of a command is in its README synopsis
for c in why check wheel cuda; do
	syn=$("$A" help --synopsis "$c")
	readme_block=$(sed -n "/<!-- synopsis [a-z ]*$c[a-z ]*: begin/,/: end -->/p" "$TOP/README.md")
	missing=
	for o in $(options "$c"); do
		[ "$o" = --help ] && continue
		case "$syn" in *"[$o"*) ;; *) case "$o" in --verbose|--quiet) ;; *) missing="$missing $o" ;; esac ;; esac
		case "$readme_block" in *"[$o"*) ;; *) case "$o" in --verbose|--quiet) ;; *) missing="$missing README:$o" ;; esac ;; esac
	done
	expect_eq "$missing" "" "$c: the synopsis (and the README's) shows every option"
done

# The parser rejects what the table does not list, and shared options work everywhere.
out=$("$A" check --no-such-option 2>&1)
expect_eq "$?:$(echo "$out" | head -1)" "2:abiscope check: unknown option --no-such-option" "an unknown option is a usage error"
out=$("$A" why --json=yes x 2>&1)
expect_eq "$?:$(echo "$out" | head -1)" "2:abiscope why: --json takes no value" "a flag given a value is a usage error"
out=$("$A" why --process 2>&1)
expect_eq "$?:$(echo "$out" | head -1)" "2:abiscope why: --process needs a value (EXE)" "a missing value is a usage error"
out=$("$A" gpu --color=sometimes 2>&1)
expect_eq "$?:$(echo "$out" | head -1)" "2:abiscope gpu: --color takes auto, always or never" "--color is checked once, for all"
out=$("$A" fleet --root / x 2>&1)
expect_eq "$?:$(echo "$out" | head -1)" "2:abiscope fleet: unknown option --root" "a command takes only the shared options it lists"

# abiscope(1) lists every command, and `help` knows them all.
top_man=$("$A" help --man)
for c in $commands; do
	case "$top_man" in *"abiscope\\-$c\\fR(1)"*) ;; *) fail "abiscope(1) refers to abiscope-$c(1)" ;; esac
done
expect_eq "$(groff -man -ww -z "$FX/share/man1/abiscope.1" 2>&1)" "" "abiscope(1) renders without a warning"
expect_eq "$("$A" help check)" "$("$A" check --help)" "help COMMAND is COMMAND --help"

# Completion scripts parse, and complete command names and values.
bash -n "$FX/share/bash-completion/abiscope"
ok=$?
expect_eq "$ok" 0 "the bash completion parses"
got=$(bash -c '. "$1"; COMP_WORDS=(abiscope ch); COMP_CWORD=1; _abiscope; echo "${COMPREPLY[@]}"' sh "$FX/bash-functions")
expect_eq "$got" "check" "bash completes a command name"
got=$(bash -c '. "$1"; COMP_WORDS=(abiscope why --color ""); COMP_CWORD=3; _abiscope; echo "${COMPREPLY[@]}"' sh "$FX/bash-functions")
expect_eq "$got" "auto always never" "bash completes the values of --color"
if command -v zsh >/dev/null 2>&1; then
	zsh -n "$FX/share/zsh/_abiscope"
	expect_eq "$?" 0 "the zsh completion parses"
	got=$(HOME=$FX zsh -fc 'autoload -Uz compinit && compinit -u -d "$HOME/.zcompdump" && fpath=("$1" $fpath) &&
		autoload -Uz _abiscope && source "$1/_abiscope" && print -r -- ${_comps[abiscope]}' sh "$FX/share/zsh" 2>&1)
	expect_eq "$got" "_abiscope" "zsh registers the completion for abiscope"
else
	echo "ok - zsh completion # SKIP zsh is not installed (apt: zsh)"
fi

# make install with PREFIX and DESTDIR
make -s -C "$TOP" BUILD="$(cd "$BUILD" && pwd)" install PREFIX=/opt/abi DESTDIR="$FX/dest" >"$FX/install.out" 2>&1
expect_eq "$?" 0 "make install PREFIX=/opt/abi DESTDIR=... succeeds"
for f in bin/abiscope share/man/man1/abiscope.1 share/man/man1/abiscope-check.1 \
	share/bash-completion/completions/abiscope share/zsh/site-functions/_abiscope; do
	[ -f "$FX/dest/opt/abi/$f" ] || fail "make install puts $f under DESTDIR/PREFIX"
done
expect_eq "$("$FX/dest/opt/abi/bin/abiscope" --version)" "$("$A" --version)" "the installed binary runs"
expect_contains "$(MANWIDTH=80 man -l "$FX/dest/opt/abi/share/man/man1/abiscope-why.1" 2>/dev/null)" \
	"--preload-global PATH" "man -l renders the installed abiscope-why(1)"
[ "$fails" -eq 0 ]
