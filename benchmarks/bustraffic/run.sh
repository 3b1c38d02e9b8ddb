#!/bin/bash
# Cluster bus traffic per node per second at rest, goblin-server beside redis-server 7.0 in the same run, at
# BUS_NODES nodes (default "6,30"; half masters, a replica each, cluster-node-timeout 2000), counted from the
# kernel's per-socket bytes_sent (ss -tinp) on sockets to or from a bus port over BUS_WINDOW (default 10s), and
# the messages each node counted; then PING p50/p99 on a cluster node at rest and on a standalone server, both
# servers, alternated over 8 rounds, with the median of the rounds' ratios (the loop cost of the bus). Needs ss (iproute2), redis-server, redis-cli.
# Run from the repository root: bash benchmarks/bustraffic/run.sh   (about 2 minutes)
set -e
go test -count=1 -run '^$' -bench 'BusTraffic' -benchtime 1x -timeout 30m ./cluster/member 2>&1 |
	grep -v -e '^        ' -e 'pool.go'
