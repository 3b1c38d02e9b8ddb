#!/usr/bin/env bash
# slowfirst.sh FIRST... -- PATTERN...
#
# Prints the import paths PATTERN names (as `go list` does), those also named
# by FIRST first, in FIRST's order, then the others in go list's order.
# `make race` gives go test its packages this way: go test starts packages in
# the order it is given them, -p at a time (the number of CPUs), so the long
# ones (FIRST, longest first) start at once and the many short ones fill the
# other slots around them, instead of a long one starting late and running
# alone at the end of an alphabetical run. A FIRST entry PATTERN does not
# name is left out, so `make race PKGS=./store` runs ./store only.
# GO names the go command (default go).
set -euo pipefail
go=${GO:-go}
first=()
while (($#)) && [[ $1 != -- ]]; do
	first+=("$1")
	shift
done
if (($# == 0)); then
	echo "usage: $0 FIRST... -- PATTERN..." >&2
	exit 2
fi
shift
all=$("$go" list "$@")
if ((${#first[@]} == 0)); then
	printf '%s\n' "$all"
	exit 0
fi
firsts=$("$go" list "${first[@]}")
while read -r p; do
	if grep -qxF -- "$p" <<<"$all"; then
		echo "$p"
	fi
done <<<"$firsts"
grep -vxF -f <(printf '%s\n' "$firsts") <<<"$all" || true
