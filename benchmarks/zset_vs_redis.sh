#!/usr/bin/env bash
# ZADD and ZRANGE 0 9 WITHSCORES on goblin-server and redis-server 7.0 in the
# same run, over the Unix socket, with redis-benchmark: -c 1 and -c 50 -P 16,
# ZADD of random members into one growing set (a skiplist past 128), ZRANGE
# on a 100-member listpack and on that skiplist. Two rounds, interleaved.
#
#   benchmarks/zset_vs_redis.sh
#
# Then a large set: BIG members (default 1000000, the same ones on every
# server: member m and I in 12 digits, as redis-benchmark's __rand_int__
# writes them, scored I*7919 mod 1000003), loaded 1000 per ZADD, and
# on it, with -c 1: ZADD of new members into it, ZRANK of members deep in
# it, ZRANGE by rank in its middle (ZRANGE big BIG/2 BIG/2+9) and
# ZREVRANGE near its end, ZSCORE, and ZADD -c 50 -P 16.
#
#   BIG=300000 benchmarks/zset_vs_redis.sh
#   BEFORE=/path/to/old/goblin-server benchmarks/zset_vs_redis.sh
#
# BEFORE names a second goblin-server binary (an older build) to run
# beside the new one in the same run, for a before/after comparison.
#
# Builds goblin-server, starts the servers in a temporary directory and
# stops them (by their pids) at the end. Needs redis-server, redis-cli and
# redis-benchmark on PATH.
set -euo pipefail
dir=$(mktemp -d)
BIG=${BIG:-1000000}
go build -o "$dir/goblin-server" ./cmd/goblin-server
"$dir/goblin-server" --listen "uds://$dir/g.sock" --metrics off --dir "$dir" --protected-mode no >"$dir/goblin.log" 2>&1 &
gpid=$!
redis-server --port 0 --unixsocket "$dir/r.sock" --save '' --appendonly no --dir "$dir" >"$dir/redis.log" 2>&1 &
rpid=$!
bpid=
servers="g r"
if [[ -n ${BEFORE:-} ]]; then
	"$BEFORE" --listen "uds://$dir/b.sock" --metrics off --dir "$dir/b" --protected-mode no >"$dir/before.log" 2>&1 &
	bpid=$!
	mkdir -p "$dir/b"
	servers="g b r"
fi
trap 'kill $gpid $rpid $bpid 2>/dev/null; rm -rf "$dir"' EXIT
for s in $servers; do
	for i in $(seq 50); do redis-cli -s "$dir/$s.sock" ping >/dev/null 2>&1 && break; sleep 0.1; done
	args="ZADD zs"
	for i in $(seq 1 100); do args="$args $i m$i"; done
	redis-cli -s "$dir/$s.sock" $args >/dev/null
done
last() { tr '\r' '\n' | grep -v '^$' | tail -1; }
for round in 1 2; do
	for s in g r; do
		[[ $s == g ]] && name=goblin || name=redis
		echo "== $name, round $round"
		redis-benchmark -s "$dir/$s.sock" -n 100000 -c 1 -r 100000 -t zadd -q | last
		redis-benchmark -s "$dir/$s.sock" -n 100000 -c 50 -P 16 -r 100000 -t zadd -q | last
		redis-benchmark -s "$dir/$s.sock" -n 50000 -c 1 -q ZRANGE zs 0 9 WITHSCORES | last
		redis-benchmark -s "$dir/$s.sock" -n 50000 -c 1 -q ZRANGE myzset 0 9 WITHSCORES | last
		redis-benchmark -s "$dir/$s.sock" -n 200000 -c 50 -P 16 -q ZRANGE zs 0 9 WITHSCORES | last
	done
done

# The large set.
awk -v n="$BIG" 'BEGIN {
	for (i = 0; i < n; i += 1000) {
		k = (n - i < 1000) ? n - i : 1000
		printf "*%d\r\n$4\r\nZADD\r\n$3\r\nbig\r\n", 2 + 2 * k
		for (j = i; j < i + k; j++) {
			sc = (j * 7919) % 1000003; m = sprintf("m%012d", j)
			printf "$%d\r\n%d\r\n$%d\r\n%s\r\n", length(sc ""), sc, length(m), m
		}
	}
}' >"$dir/big.resp"
name() { case $1 in g) echo goblin ;; b) echo goblin-before ;; r) echo redis ;; esac; }
for s in $servers; do
	start=$(date +%s.%N)
	redis-cli -s "$dir/$s.sock" --pipe <"$dir/big.resp" >/dev/null
	echo "== $(name $s): loaded $(redis-cli -s "$dir/$s.sock" ZCARD big) members in $(echo "$(date +%s.%N) - $start" | bc) s"
done
mid=$((BIG / 2))
for round in 1 2; do
	for s in $servers; do
		echo "== $(name $s), large set, round $round"
		redis-benchmark -s "$dir/$s.sock" -n 50000 -c 1 -r 100000000 -q ZADD big __rand_int__ n__rand_int__ | last
		redis-benchmark -s "$dir/$s.sock" -n 50000 -c 1 -r "$BIG" -q ZRANK big m__rand_int__ | last
		redis-benchmark -s "$dir/$s.sock" -n 50000 -c 1 -q ZRANGE big $mid $((mid + 9)) | last
		redis-benchmark -s "$dir/$s.sock" -n 50000 -c 1 -q ZREVRANGE big $((BIG / 10)) $((BIG / 10 + 9)) | last
		redis-benchmark -s "$dir/$s.sock" -n 50000 -c 1 -r "$BIG" -q ZSCORE big m__rand_int__ | last
		redis-benchmark -s "$dir/$s.sock" -n 200000 -c 50 -P 16 -r 100000000 -q ZADD big __rand_int__ n__rand_int__ | last
	done
done
