#!/usr/bin/env bash
# Instructions per iteration of Go benchmarks, counted by callgrind: a
# figure that does not depend on the machine's load, for hot-path work.
#
#   benchmarks/instructions.sh ./engine '^BenchmarkServe$/^GET$/^SBE-message$' ...
#
# Each pattern is run at 200000 and 400000 iterations; the difference,
# divided by 200000, is the count of one iteration (the setup cancels).
# Anchor every level of the pattern: BenchmarkServe/GET also matches
# BenchmarkServeCluster/GET. Needs valgrind (apt-get install valgrind).
# The test binary is built without cgo and run without asynchronous
# preemption, whose signals callgrind does not survive, with the
# collector off, and on one P: with two, the testing package's
# runtime.GC() before each run waits for the sweeper in a Gosched loop
# that spins for as long as valgrind's thread serialisation lets it,
# billions of instructions that made the difference noise (even
# negative). Go's own background work (sysmon wakes by the wall
# clock, which valgrind slows) still lands in the count: small counts vary
# by some tens of instructions from run to run, more on a loaded machine.
set -euo pipefail
if [[ $# -lt 2 ]]; then
	echo "usage: $0 PACKAGE BENCH-PATTERN..." >&2
	exit 2
fi
command -v valgrind >/dev/null || { echo "$0: valgrind is not installed" >&2; exit 1; }
pkg=$1
shift
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
CGO_ENABLED=0 go test -c -o "$dir/b.test" "$pkg"
for re in "$@"; do
	for n in 200000 400000; do
		GOMAXPROCS=1 GOGC=off GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind --callgrind-out-file=/dev/null \
			"$dir/b.test" -test.run '^$' -test.bench "$re" -test.benchtime "${n}x" -test.count 1 >/dev/null 2>"$dir/log" || {
			cat "$dir/log" >&2
			exit 1
		}
		ir=$(grep -o 'Collected : [0-9]*' "$dir/log" | awk '{print $3}')
		[[ -n $ir ]] || { echo "$0: no instruction count for $re at ${n}x:" >&2; tail -20 "$dir/log" >&2; exit 1; }
		eval "ir_$n=$ir"
	done
	echo "$re $(((ir_400000 - ir_200000) / 200000)) instructions"
done
