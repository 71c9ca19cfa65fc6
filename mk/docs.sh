#!/bin/sh
# Writes what `make install` installs besides the binary, all printed by the
# binary from its command table (src/cli/commands.c):
#   OUT/man1/abiscope.1, OUT/man1/abiscope-COMMAND.1   man pages
#   OUT/bash-completion/abiscope, OUT/zsh/_abiscope    completion
#   sh mk/docs.sh ABISCOPE OUT
set -eu
abiscope=$1
out=$2
mkdir -p "$out/man1" "$out/bash-completion" "$out/zsh"
rm -f "$out"/man1/*.1
"$abiscope" help --man >"$out/man1/abiscope.1"
for c in $("$abiscope" --help | sed -n '/^commands:/,/^$/s/^  \([a-z-]*\) .*/\1/p'); do
	"$abiscope" help --man "$c" >"$out/man1/abiscope-$c.1"
done
"$abiscope" completion bash >"$out/bash-completion/abiscope"
"$abiscope" completion zsh >"$out/zsh/_abiscope"
