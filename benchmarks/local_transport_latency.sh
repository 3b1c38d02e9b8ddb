#!/usr/bin/env bash
# Runs goblin's local transport-latency matrix on this host, end to end:
# builds goblin-server and goblin-bench, runs every protocol × transport × operation case against a
# fresh server beside the Redis, raw Aeron and shared-memory peers, and
# writes the archive (latency.csv, aggregate.csv, metadata.txt, summary.md,
# charts/, SHA256SUMS) into OUT_DIR. See docs/benchmarks.md.
#
# --setup runs scripts/setup.sh first, which installs what is missing (as
# root: Debian packages, the system user goblin-test, and it stops the
# system redis-server). Without it nothing is installed; the launcher says
# what is missing and which cases that leaves out.
#
# Knobs (environment):
#   RUNS=2 WARMUP=10000 SAMPLES=100000   the published method
#   PROFILE=fit2|spin|backoff            idle/CPU profile (default: fit2 below 4 CPUs, else spin)
#   TRANSPORTS=ring,aeron-ipc,uds,tcp,aeron-udp   PROTOCOLS=RESP,SBE   OPS=PING,SET,GET
#   SYSTEMS=goblin,redis,aeron-raw,shm-floor
#   VALUE_SIZE=16 KEYS=1 DEPTH=1 CLIENT=library|raw
#   SERVER_CPU= CLIENT_CPU= DRIVER_CPU=  SERVER_IDLE= CLIENT_WAIT= DRIVER_IDLE=   (override the profile)
#   SERVER_AGENTS= CLIENT_AGENTS=   (pin the drivers' agents one by one: conductor=2,sender=3,receiver=4)
#   DRIVER=java|aeronmd|goblin AERONMD=/path/to/aeronmd DRIVER_ENV='K=V …'   (the media driver of the Aeron cases)
#   OUT_DIR=bench-results/local-<UTC time>
# Extra arguments (other than --setup) are passed to goblin-bench matrix.
set -euo pipefail
cd "$(dirname "$0")/.."
source benchmarks/knobs.sh # RUNS, WARMUP, SAMPLES default there
OUT_DIR=${OUT_DIR:-bench-results/local-$(date -u +%Y%m%dT%H%M%SZ)}

launcher_args "$@"
set -- ${bench_args[@]+"${bench_args[@]}"}
prepare local_transport_latency

bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
echo "local_transport_latency: building goblin-server and goblin-bench" >&2
go build -o "$bin/goblin-bench" ./cmd/goblin-bench
server_flag=()
if go build -o "$bin/goblin-server" ./cmd/goblin-server; then
	server_flag=(-goblin-server "$bin/goblin-server")
else
	echo "local_transport_latency: cmd/goblin-server does not build; goblin cases will be reported unavailable" >&2
	server_flag=(-goblin-server "$bin/goblin-server")
fi

args=(-out "$OUT_DIR" -runs "$RUNS" -warmup "$WARMUP" -samples "$SAMPLES")
[[ -n ${TRANSPORTS:-} ]] && args+=(-transports "$TRANSPORTS")
[[ -n ${SYSTEMS:-} ]] && args+=(-systems "$SYSTEMS")
knob_args args
driver_args args "$bin" || exit 2

echo "local_transport_latency: goblin-bench matrix ${args[*]} $*" >&2
"$bin/goblin-bench" matrix "${server_flag[@]}" "${args[@]}" "$@"
echo "local_transport_latency: archive in $OUT_DIR (check with: cd $OUT_DIR && sha256sum -c SHA256SUMS)" >&2
