#!/bin/bash
# Failover time distribution: FAILOVER_KILLS (default 20) SIGKILLs of a master in a six-node cluster
# (3 masters + 3 replicas, cluster-node-timeout 2000) under a go-redis ClusterClient load, goblin-server
# and then redis-server 7.0 in the same run. Prints each kill and min/p50/max of the time from the kill to
# the replica's election and to the first acknowledged write to the dead master's slots.
# Run from the repository root: bash benchmarks/failover/run.sh   (about 3-4 minutes for 20 kills each)
set -e
export FAILOVER_KILLS=${FAILOVER_KILLS:-20}
go test -count=1 -run '^$' -bench 'FailoverKills' -benchtime 1x -timeout 30m ./cluster/member 2>&1 |
	grep -v -e 'pool.go' -e 'osscluster.go'
