#!/bin/bash
# PING p50/p99: a standalone goblin-server beside a node of a 3-node cluster-bus cluster at rest.
# Run from the repository root after: go build -o bin/goblin-server ./cmd/goblin-server
B=${GOBLIN_SERVER:-bin/goblin-server}
D=$(mktemp -d)
$B --listen tcp://127.0.0.1:17101 --metrics off --dir $D >/dev/null 2>&1 &
P0=$!
for i in 1 2 3; do mkdir -p $D/$i; $B --listen tcp://127.0.0.1:1711$i --metrics off --dir $D/$i --cluster-enabled yes --cluster-port 1721$i --cluster-node-timeout 2000 >/dev/null 2>&1 & eval P$i=$!; done
sleep 2
redis-cli -p 17111 cluster addslotsrange 0 5460
redis-cli -p 17112 cluster addslotsrange 5461 10922
redis-cli -p 17113 cluster addslotsrange 10923 16383
redis-cli -p 17111 cluster meet 127.0.0.1 17112 17212
redis-cli -p 17111 cluster meet 127.0.0.1 17113 17213
sleep 5
redis-cli -p 17111 cluster info | head -3
go run ./benchmarks/busping 127.0.0.1:17101 127.0.0.1:17111
kill $P0 $P1 $P2 $P3
rm -rf $D
