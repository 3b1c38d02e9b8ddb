#!/usr/bin/env bash
# ZADD and ZRANGE 0 9 WITHSCORES on goblin-server and redis-server 7.0 in the
# same run, over the Unix socket, with redis-benchmark: -c 1 and -c 50 -P 16,
# ZADD of random members into one growing set (a skiplist past 128), ZRANGE
# on a 100-member listpack and on that skiplist. Two rounds, interleaved.
#
#   benchmarks/zset_vs_redis.sh
#
# Builds goblin-server, starts both servers in a temporary directory and
# stops them (by their pids) at the end. Needs redis-server, redis-cli and
# redis-benchmark on PATH.
set -euo pipefail
dir=$(mktemp -d)
go build -o "$dir/goblin-server" ./cmd/goblin-server
"$dir/goblin-server" --listen "uds://$dir/g.sock" --metrics off --dir "$dir" --protected-mode no >"$dir/goblin.log" 2>&1 &
gpid=$!
redis-server --port 0 --unixsocket "$dir/r.sock" --save '' --appendonly no --dir "$dir" >"$dir/redis.log" 2>&1 &
rpid=$!
trap 'kill $gpid $rpid 2>/dev/null; rm -rf "$dir"' EXIT
for s in g r; do
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
