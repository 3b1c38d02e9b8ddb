#!/usr/bin/env bash
# Runs goblin's network-latency cases across two network namespaces joined
# by a veth pair, standing in for two hosts: the servers (goblin-server,
# redis-server, Aeron's Pong and the server-side media driver) run in one
# namespace, the measuring client and its own media driver in the other.
# Only the addresses this script assigns to its own veth pair are used
# (10.200.N.1 for the server, 10.200.N.2 for the client). Everything it
# creates is removed on exit.
#
# Needs root (ip netns); without it, it says so and exits 0 having done
# nothing.
#
# Knobs (environment): RUNS=2 WARMUP=10000 SAMPLES=100000 PROFILE=fit2|spin|backoff
#   TRANSPORTS=tcp,aeron-udp PROTOCOLS=RESP,SBE OPS=PING,SET,GET SYSTEMS=goblin,redis,aeron-raw
#   OUT_DIR=bench-results/network-<UTC time>  SKIP_SETUP=1  NET=200 (the 10.200.x.y subnet's second octet)
# Extra arguments are passed to goblin-bench.
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ $(id -u) != 0 ]]; then
	echo "aeron_network_latency: skipped: creating network namespaces needs root (run as root or under sudo)" >&2
	exit 0
fi
if ! command -v ip >/dev/null; then
	echo "aeron_network_latency: skipped: ip (iproute2) is not installed; scripts/setup.sh installs it" >&2
	exit 0
fi

RUNS=${RUNS:-2}
WARMUP=${WARMUP:-10000}
SAMPLES=${SAMPLES:-100000}
OUT_DIR=${OUT_DIR:-bench-results/network-$(date -u +%Y%m%dT%H%M%SZ)}
NET=${NET:-200}
sub=$(( $$ % 250 + 1 ))
srv_ns="gbsrv$$"
cli_ns="gbcli$$"
srv_if="gbs$$"
cli_if="gbc$$"
srv_ip="10.$NET.$sub.1"
cli_ip="10.$NET.$sub.2"

if [[ ${SKIP_SETUP:-0} != 1 ]]; then
	./scripts/setup.sh
fi

bin=$(mktemp -d)
cleanup() {
	ip netns del "$srv_ns" 2>/dev/null || true
	ip netns del "$cli_ns" 2>/dev/null || true
	rm -rf "$bin"
}
trap cleanup EXIT INT TERM

echo "aeron_network_latency: building goblin-server and goblin-bench" >&2
go build -o "$bin/goblin-bench" ./benchmarks/cmd/goblin-bench
go build -o "$bin/goblin-server" ./cmd/goblin-server ||
	echo "aeron_network_latency: cmd/goblin-server does not build; goblin cases will be reported unavailable" >&2

echo "aeron_network_latency: namespaces $srv_ns ($srv_ip) and $cli_ns ($cli_ip) joined by veth $srv_if/$cli_if" >&2
ip netns add "$srv_ns"
ip netns add "$cli_ns"
ip link add "$srv_if" type veth peer name "$cli_if"
ip link set "$srv_if" netns "$srv_ns"
ip link set "$cli_if" netns "$cli_ns"
ip -n "$srv_ns" addr add "$srv_ip/24" dev "$srv_if"
ip -n "$cli_ns" addr add "$cli_ip/24" dev "$cli_if"
for ns in "$srv_ns" "$cli_ns"; do
	ip -n "$ns" link set lo up
done
ip -n "$srv_ns" link set "$srv_if" up
ip -n "$cli_ns" link set "$cli_if" up

args=(-out "$OUT_DIR" -runs "$RUNS" -warmup "$WARMUP" -samples "$SAMPLES"
	-server-netns "$srv_ns" -server-host "$srv_ip" -client-host "$cli_ip"
	-transports "${TRANSPORTS:-tcp,aeron-udp}" -systems "${SYSTEMS:-goblin,redis,aeron-raw}"
	-goblin-server "$bin/goblin-server")
[[ -n ${PROFILE:-} ]] && args+=(-profile "$PROFILE")
[[ -n ${PROTOCOLS:-} ]] && args+=(-protocols "$PROTOCOLS")
[[ -n ${OPS:-} ]] && args+=(-ops "$OPS")

echo "aeron_network_latency: ip netns exec $cli_ns goblin-bench ${args[*]} $*" >&2
ip netns exec "$cli_ns" "$bin/goblin-bench" "${args[@]}" "$@"
echo "aeron_network_latency: archive in $OUT_DIR" >&2
