#!/usr/bin/env bash
# redis-benchmark's own collection tests on goblin-server and redis-server
# 7.0 in the same run: -t lpush,rpush,lpop,rpop,sadd,hset,spop,zadd,zpopmin,
# lrange_100, at -c 1 and at -c 50 -P 16, over the Unix socket and TCP
# (loopback). For each transport and mode goblin and redis run one after
# the other, ROUNDS times (the order alternating), both flushed first; the
# table gives each server's median requests/s and p50 over the rounds and
# the ratios goblin/redis (rps: higher is better for goblin; p50: lower).
#
#   benchmarks/collections_vs_redis.sh
#   N=50000 NP=500000 ROUNDS=3 benchmarks/collections_vs_redis.sh
#
# N is the request count at -c 1 (default 20000), NP at -c 50 -P 16
# (default 200000). Builds goblin-server, starts both servers in a
# temporary directory on free ports and stops them (by their pids) at the
# end. Needs redis-server, redis-cli and redis-benchmark on PATH.
set -euo pipefail
N=${N:-20000}
NP=${NP:-200000}
ROUNDS=${ROUNDS:-2}
TESTS=lpush,rpush,lpop,rpop,sadd,hset,spop,zadd,zpopmin,lrange_100
for t in redis-server redis-cli redis-benchmark; do
	command -v $t >/dev/null || { echo "$t is not on PATH" >&2; exit 1; }
done
dir=$(mktemp -d)
freeport() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
gport=$(freeport)
rport=$(freeport)
go build -o "$dir/goblin-server" ./cmd/goblin-server
"$dir/goblin-server" --listen "uds://$dir/g.sock,tcp://127.0.0.1:$gport" --metrics off --dir "$dir" \
	--protected-mode no >"$dir/goblin.log" 2>&1 &
gpid=$!
redis-server --port "$rport" --bind 127.0.0.1 --unixsocket "$dir/r.sock" --save '' --appendonly no \
	--dir "$dir" >"$dir/redis.log" 2>&1 &
rpid=$!
trap 'kill $gpid $rpid 2>/dev/null; wait $gpid $rpid 2>/dev/null; rm -rf "$dir"' EXIT
for s in g r; do
	for i in $(seq 100); do redis-cli -s "$dir/$s.sock" ping >/dev/null 2>&1 && break; sleep 0.1; done
	redis-cli -s "$dir/$s.sock" ping >/dev/null || { echo "server $s did not start" >&2; cat "$dir"/*.log >&2; exit 1; }
done
conn() { # server transport
	case $1/$2 in
	g/uds) echo "-s $dir/g.sock" ;;
	r/uds) echo "-s $dir/r.sock" ;;
	g/tcp) echo "-h 127.0.0.1 -p $gport" ;;
	r/tcp) echo "-h 127.0.0.1 -p $rport" ;;
	esac
}
echo "# load at start: $(cut -d' ' -f1-3 /proc/loadavg); redis $(redis-server --version | grep -o 'v=[0-9.]*')"
: >"$dir/results.csv"
for transport in uds tcp; do
	for mode in c1 c50p16; do
		if [[ $mode == c1 ]]; then opts="-c 1 -n $N"; else opts="-c 50 -P 16 -n $NP"; fi
		for round in $(seq "$ROUNDS"); do
			order="g r"
			((round % 2 == 0)) && order="r g"
			for s in $order; do
				# shellcheck disable=SC2046
				redis-cli $(conn $s $transport) flushall >/dev/null
				# shellcheck disable=SC2046,SC2086
				redis-benchmark $(conn $s $transport) $opts -r 100000 -t "$TESTS" --csv |
					tail -n +2 | tr -d '"' | awk -F, -v s=$s -v t=$transport -v m=$mode -v r=$round \
					'{ print s "," t "," m "," r "," $1 "," $2 "," $5 }' >>"$dir/results.csv"
			done
		done
	done
done
echo "# load at end: $(cut -d' ' -f1-3 /proc/loadavg); N=$N NP=$NP ROUNDS=$ROUNDS"
# Medians over the rounds, then the table.
python3 - "$dir/results.csv" <<'PY'
import csv, statistics, sys
rows = {}
for s, t, m, r, test, rps, p50 in csv.reader(open(sys.argv[1])):
    rows.setdefault((t, m, test, s), []).append((float(rps), float(p50)))
keys = sorted({(t, m, test) for (t, m, test, s) in rows}, key=lambda k: (k[0] != "uds", k[1], k[2]))
print("| transport | mode | test | goblin rps | redis rps | rps ratio | goblin p50 ms | redis p50 ms | p50 ratio |")
print("|---|---|---|---|---|---|---|---|---|")
for t, m, test in keys:
    g, r = rows.get((t, m, test, "g")), rows.get((t, m, test, "r"))
    if not g or not r:
        continue
    grps, rrps = statistics.median(x[0] for x in g), statistics.median(x[0] for x in r)
    gp, rp = statistics.median(x[1] for x in g), statistics.median(x[1] for x in r)
    mode = "-c 1" if m == "c1" else "-c 50 -P 16"
    print(f"| {t} | {mode} | {test} | {grps:,.0f} | {rrps:,.0f} | {grps/rrps:.2f} | {gp:.3f} | {rp:.3f} | {gp/rp if rp else float('nan'):.2f} |")
PY
