#!/bin/bash
# What a server at rest costs, and what its first request after a long idle spell pays: goblin-server
# with --idle backoff (the loop's default before doze) and --idle doze (the default), and redis-server
# 7.0, side by side in one run: CPU over IDLE_WINDOW (default 30s) with no client, the first depth-one
# PING after IDLE_GAP (default 2s) of silence (IDLE_PROBES rounds, default 20), then back-to-back PINGs.
# Run from the repository root: bash benchmarks/idlecost/run.sh   (about 2 minutes)
set -e
go test -count=1 -run '^$' -bench 'IdleCost' -benchtime 1x -timeout 30m ./cmd/goblin-server 2>&1 |
	grep -v -e '^        ' -e 'pool.go'
