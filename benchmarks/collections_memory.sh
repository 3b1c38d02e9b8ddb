#!/usr/bin/env bash
# Memory per element of the four collection types, goblin-server beside
# redis-server 7.0 holding the same data: each data set is loaded into a
# fresh pair of servers (redis-cli --pipe, 1000 elements per command), then
# MEMORY PURGE, and used_memory after less used_memory before (each after
# MEMORY PURGE; before, after three of them: see the note in the loop), over the
# element count, is the figure, with used_memory_dataset's growth beside
# it (INFO memory's used_memory on both: the allocators' live bytes,
# Redis's jemalloc's; goblin's Go runtime memory in use plus its arena's
# live blocks, docs/commands.md). For goblin the script also prints
# what the garbage collector would scan (goblin_gc_scan_heap_bytes and
# goblin_gc_scan_globals_bytes) with the data loaded, and RSS for both.
#
#   benchmarks/collections_memory.sh            # SCALE=10: a tenth of the sizes
#   SCALE=1 benchmarks/collections_memory.sh    # the sizes (10 M elements)
#
# The data sets at SCALE=1 (the issue's): 1 M hashes of 10 fields
# (h:N, fields f0..f9, 8-byte values: listpacks), one hash of 10 M fields,
# one list of 10 M elements, one sorted set of 10 M members (elements are
# 9 to 12 bytes). SCALE=N divides every count by N. SETS=small,hash,list,zset
# picks some. Builds goblin-server, runs everything in a temporary
# directory and stops the servers (by their pids) at the end.
set -euo pipefail
SCALE=${SCALE:-10}
SETS=${SETS:-small,hash,list,zset}
for t in redis-server redis-cli; do
	command -v $t >/dev/null || { echo "$t is not on PATH" >&2; exit 1; }
done
dir=$(mktemp -d)
go build -o "$dir/goblin-server" ./cmd/goblin-server
gpid= rpid=
stop() {
	[[ -n $gpid ]] && kill "$gpid" 2>/dev/null && wait "$gpid" 2>/dev/null || true
	[[ -n $rpid ]] && kill "$rpid" 2>/dev/null && wait "$rpid" 2>/dev/null || true
	gpid= rpid=
}
trap 'stop; rm -rf "$dir"' EXIT
start() {
	rm -rf "$dir/g" "$dir/r"
	mkdir -p "$dir/g" "$dir/r"
	"$dir/goblin-server" --listen "uds://$dir/g.sock" --metrics off --dir "$dir/g" --protected-mode no \
		>"$dir/goblin.log" 2>&1 &
	gpid=$!
	redis-server --port 0 --unixsocket "$dir/r.sock" --save '' --appendonly no --dir "$dir/r" \
		>"$dir/redis.log" 2>&1 &
	rpid=$!
	for s in g r; do
		for i in $(seq 100); do redis-cli -s "$dir/$s.sock" ping >/dev/null 2>&1 && break; sleep 0.1; done
	done
}
info() { redis-cli -s "$dir/$1.sock" info memory | tr -d '\r' | awk -F: -v f="$2" '$1 == f { print $2 }'; }
rss() { awk '/VmRSS/ { print $2 * 1024 }' "/proc/$1/status"; }
# gen SET writes the data set's RESP commands to stdout.
gen() {
	awk -v set="$1" -v scale="$SCALE" 'function bulk(s) { printf "$%d\r\n%s\r\n", length(s), s }
	BEGIN {
		if (set == "small") {
			n = int(1000000 / scale)
			for (i = 0; i < n; i++) {
				printf "*22\r\n"; bulk("HSET"); bulk("h:" i)
				for (f = 0; f < 10; f++) { bulk("f" f); bulk(sprintf("v%07d", (i * 10 + f) % 10000000)) }
			}
			exit
		}
		n = int(10000000 / scale)
		for (i = 0; i < n; i += 1000) {
			k = (n - i < 1000) ? n - i : 1000
			if (set == "hash") { printf "*%d\r\n", 2 + 2 * k; bulk("HSET"); bulk("bighash") }
			if (set == "list") { printf "*%d\r\n", 2 + k; bulk("RPUSH"); bulk("biglist") }
			if (set == "zset") { printf "*%d\r\n", 2 + 2 * k; bulk("ZADD"); bulk("bigzset") }
			for (j = i; j < i + k; j++) {
				if (set == "hash") { bulk(sprintf("f%010d", j)); bulk(sprintf("v%07d", j % 10000000)) }
				if (set == "list") bulk(sprintf("e%010d", j))
				if (set == "zset") { bulk((j * 7919) % 1000003); bulk(sprintf("m%010d", j)) }
			}
		}
	}'
}
elements() {
	case $1 in
	small) echo $((1000000 / SCALE * 10)) ;;
	*) echo $((10000000 / SCALE)) ;;
	esac
}
echo "# SCALE=$SCALE; load at start: $(cut -d' ' -f1-3 /proc/loadavg); redis $(redis-server --version | grep -o 'v=[0-9.]*')"
printf '| data set | elements | goblin B/elem | redis B/elem | ratio | goblin dataset B/elem | redis dataset B/elem | goblin RSS MB | redis RSS MB | goblin GC-scannable heap MB | globals MB | goblin load s | redis load s |\n'
printf '|---|---|---|---|---|---|---|---|---|---|---|---|---|\n'
for set in ${SETS//,/ }; do
	gen "$set" >"$dir/data.resp"
	n=$(elements "$set")
	start
	declare -A before after dbefore dafter load
	for s in g r; do
		# Three purges before the first figure: goblin's first two garbage
		# collections grow the Go runtime's own metadata (its GC work
		# buffers) by about 1.2 MB, whatever the data, which a single purge
		# left in the difference. Redis's purge is idempotent.
		for _ in 1 2 3; do redis-cli -s "$dir/$s.sock" memory purge >/dev/null; done
		before[$s]=$(info $s used_memory)
		dbefore[$s]=$(info $s used_memory_dataset)
		t0=$(date +%s.%N)
		redis-cli -s "$dir/$s.sock" --pipe <"$dir/data.resp" >"$dir/pipe-$s.log" 2>&1 ||
			{ cat "$dir/pipe-$s.log" >&2; exit 1; }
		load[$s]=$(echo "$(date +%s.%N) - $t0" | bc)
		redis-cli -s "$dir/$s.sock" memory purge >/dev/null
		after[$s]=$(info $s used_memory)
		dafter[$s]=$(info $s used_memory_dataset)
	done
	scan=$(info g goblin_gc_scan_heap_bytes)
	globals=$(info g goblin_gc_scan_globals_bytes)
	grss=$(rss "$gpid")
	rrss=$(rss "$rpid")
	awk -v set="$set" -v n="$n" -v gb="${before[g]}" -v ga="${after[g]}" -v rb="${before[r]}" -v ra="${after[r]}" \
		-v gdb="${dbefore[g]}" -v gda="${dafter[g]}" -v rdb="${dbefore[r]}" -v rda="${dafter[r]}" \
		-v grss="$grss" -v rrss="$rrss" -v scan="$scan" -v glob="$globals" -v gl="${load[g]}" -v rl="${load[r]}" \
		'BEGIN { g = (ga - gb) / n; r = (ra - rb) / n
		printf "| %s | %d | %.2f | %.2f | %.3f | %.2f | %.2f | %.0f | %.0f | %.2f | %.2f | %.1f | %.1f |\n", set, n, g, r, g / r,
			(gda - gdb) / n, (rda - rdb) / n, grss / 1048576, rrss / 1048576, scan / 1048576, glob / 1048576, gl, rl }'
	stop
done
echo "# load at end: $(cut -d' ' -f1-3 /proc/loadavg)"
