#!/bin/sh
# make readme: rewrites the generated blocks of README.md in place.
# A block is the text between "<!-- NAME: begin ... -->" and "<!-- NAME: end -->";
# block NAME's text is the output of the command given for it below.
#   sh mk/readme.sh [README]      (ABISCOPE: the binary, default ./abiscope)
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
readme=${1:-$top/README.md}
abiscope=${ABISCOPE:-$top/abiscope}

# generate NAME: the text of block NAME
generate() {
	case "$1" in
	deps.txt) sh "$top/mk/deps.sh" readme ;;
	"synopsis "*)
		# shellcheck disable=SC2086 # the command names are words
		echo '```' && "$abiscope" help --synopsis ${1#synopsis } && echo '```' ;;
	*) echo "mk/readme.sh: no generator for block '$1'" >&2; return 1 ;;
	esac
}

tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
skipping=
while IFS= read -r line || [ -n "$line" ]; do
	case "$line" in
	"<!-- "*": begin"*" -->")
		printf '%s\n' "$line"
		name=${line#<!-- }
		name=${name%%: begin*}
		generate "$name" || exit 1
		skipping=$name
		continue ;;
	"<!-- "*": end -->")
		skipping= ;;
	esac
	[ -z "$skipping" ] && printf '%s\n' "$line"
done <"$readme" >"$tmp"
[ -z "$skipping" ] || { echo "mk/readme.sh: block '$skipping' has no end marker" >&2; exit 1; }
cmp -s "$tmp" "$readme" || cat "$tmp" >"$readme"
