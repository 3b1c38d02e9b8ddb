#!/bin/bash
# redis-cli --cluster reshard speed between goblin-server and redis-server 7.0 nodes of one cluster, in the
# four directions (redis→redis, redis→goblin, goblin→goblin, goblin→redis), RESHARD_SLOTS slots each (default
# 100), twice alternated; and the round trip of the commands a slot move sends (SETSLOT IMPORTING/STABLE,
# SETSLOT NODE) on each kind. Needs redis-server and redis-cli.
# Run from the repository root: bash benchmarks/reshard/run.sh   (under a minute)
set -e
go test -count=1 -run '^$' -bench 'BenchmarkReshard' -benchtime 1x -timeout 30m ./cluster/member 2>&1 |
	grep -v -e '^        ' -e 'pool.go'
