#!/usr/bin/env bash
# Runs goblin's network-latency cases (TCP and two-driver Aeron UDP, goblin
# beside Redis and the raw Aeron ping-pong) between a server and a client
# that are not on one loopback, in one of two modes:
#
# Two hosts (HOSTS=SERVER:CLIENT, two ssh destinations): builds goblin-bench
# and goblin-server once, stages them and the media driver on both hosts
# (sha256sum of every staged file from both sides; a difference refuses the
# run), then per case starts a fresh media driver on each host, a fresh
# goblin-server on the server host and the measuring client on the client
# host, over the address pairs PATHS names. This machine only runs ssh: it
# needs no route to the benchmark path.
#
# Two network namespaces (HOSTS unset): the servers run in one namespace,
# the client in another, joined by a veth pair with addresses this script
# assigns (10.200.N.1 for the server, 10.200.N.2 for the client) and removes
# again. Needs root (ip netns); without it, it says so and exits 0 having
# done nothing.
#
# --setup runs scripts/setup.sh first, which installs what is missing (as
# root: Debian packages, the system user goblin-test, and it stops the
# system redis-server). Without it nothing is installed; the launcher says
# what is missing here (with HOSTS, the hosts' tools are goblin-bench's to
# check).
#
# Knobs (environment), see docs/benchmarks.md:
#   RUNS=2 WARMUP=10000 SAMPLES=100000   PROFILE=fit2|spin|backoff
#   TRANSPORTS=tcp,aeron-udp PROTOCOLS=RESP,SBE OPS=PING,SET,GET SYSTEMS=goblin,redis,aeron-raw
#   SERVER_CPU= CLIENT_CPU= DRIVER_CPU= SERVER_AGENTS= CLIENT_AGENTS=   SERVER_IDLE= CLIENT_WAIT= DRIVER_IDLE=
#   DRIVER=java|aeronmd|goblin AERONMD=/path/to/aeronmd
#   DRIVER_ENV='K=V …'  DRIVER_ENV_<path>='K=V …'   (e.g. LD_PRELOAD of a userspace-UDP library)
#   QUALIFY=1 STATS_CMD='xlio_stats -p {pid}'        (an extra pass, collectors attached, kept apart)
#   OUT_DIR=bench-results/network-<UTC time>
# Two hosts only:
#   HOSTS=server:client SSH='ssh -F FILE'  PATHS='10gbe=SERVER_IP/CLIENT_IP,100gbe=…'
#   (or SERVER_ADDR= CLIENT_ADDR= for one path)  REMOTE_DIR=/tmp  JAVA= REDIS_SERVER= (paths on the hosts)
#   STAGE_DIR=DIR STAGE_SHARED=1 STAGE_NO_COPY=1
# Namespaces only: NET=200 (the 10.200.x.y subnet's second octet)
# Extra arguments (other than --setup) are passed to goblin-bench (its remote command with HOSTS, else matrix).
set -euo pipefail
cd "$(dirname "$0")/.."
source benchmarks/knobs.sh # RUNS, WARMUP, SAMPLES default there
OUT_DIR=${OUT_DIR:-bench-results/network-$(date -u +%Y%m%dT%H%M%SZ)}
HOSTS=${HOSTS:-}
say() { echo "aeron_network_latency: $*" >&2; }
launcher_args "$@"
set -- ${bench_args[@]+"${bench_args[@]}"}

if [[ -z $HOSTS ]]; then
	if [[ -n ${PATHS:-} ]]; then
		say "PATHS names address pairs of two hosts; set HOSTS=SERVER:CLIENT too"
		exit 2
	fi
	if [[ $(id -u) != 0 ]]; then
		say "skipped: creating network namespaces needs root (run as root or under sudo), or give two hosts: HOSTS=server:client"
		exit 0
	fi
	if ! command -v ip >/dev/null; then
		say "skipped: ip (iproute2) is not installed; --setup (scripts/setup.sh) installs it"
		exit 0
	fi
fi

if [[ -z $HOSTS || $RUN_SETUP == 1 ]]; then
	prepare aeron_network_latency
fi

bin=$(mktemp -d)
srv_ns="" cli_ns=""
cleanup() {
	[[ -n $srv_ns ]] && { ip netns del "$srv_ns" 2>/dev/null || true; }
	[[ -n $cli_ns ]] && { ip netns del "$cli_ns" 2>/dev/null || true; }
	rm -rf "$bin"
}
trap cleanup EXIT INT TERM

say "building goblin-server and goblin-bench"
go build -o "$bin/goblin-bench" ./cmd/goblin-bench
go build -o "$bin/goblin-server" ./cmd/goblin-server ||
	say "cmd/goblin-server does not build; goblin cases will be reported unavailable"

args=(-out "$OUT_DIR" -runs "$RUNS" -warmup "$WARMUP" -samples "$SAMPLES"
	-transports "${TRANSPORTS:-tcp,aeron-udp}" -systems "${SYSTEMS:-goblin,redis,aeron-raw}"
	-goblin-server "$bin/goblin-server")
knob_args args

driver_args args "$bin" || exit 2
for entry in ${PATHS:+${PATHS//,/ }}; do
	name=${entry%%=*}
	var=DRIVER_ENV_${name//-/_}
	[[ -n ${!var:-} ]] && args+=(-driver-env "$name:${!var}")
done
[[ ${QUALIFY:-0} == 1 ]] && args+=(-qualify)
[[ -n ${STATS_CMD:-} ]] && args+=(-stats-cmd "$STATS_CMD")
[[ -n ${CONTROL_HOST:-} ]] && args+=(-control-host "$CONTROL_HOST")

if [[ -n $HOSTS ]]; then
	args+=(-hosts "$HOSTS" -ssh "${SSH:-ssh}" -remote-dir "${REMOTE_DIR:-/tmp}")
	if [[ -n ${PATHS:-} ]]; then
		args+=(-paths "$PATHS")
	elif [[ -n ${SERVER_ADDR:-} ]]; then
		args+=(-server-host "$SERVER_ADDR" -client-host "${CLIENT_ADDR:-$SERVER_ADDR}")
	else
		say "HOSTS needs the benchmark path's addresses: PATHS='NAME=SERVER_IP/CLIENT_IP,…' or SERVER_ADDR= CLIENT_ADDR="
		exit 2
	fi
	[[ -n ${STAGE_DIR:-} ]] && args+=(-stage-dir "$STAGE_DIR")
	[[ ${STAGE_SHARED:-0} == 1 ]] && args+=(-stage-shared)
	[[ ${STAGE_NO_COPY:-0} == 1 ]] && args+=(-stage-no-copy)
	say "two hosts: server ${HOSTS%%:*}, client ${HOSTS#*:}"
	say "goblin-bench remote ${args[*]} $*"
	"$bin/goblin-bench" remote "${args[@]}" "$@"
	say "archive in $OUT_DIR"
	exit 0
fi

NET=${NET:-200}
sub=$(($$ % 250 + 1))
srv_ns="gbsrv$$"
cli_ns="gbcli$$"
srv_if="gbs$$"
cli_if="gbc$$"
srv_ip="10.$NET.$sub.1"
cli_ip="10.$NET.$sub.2"

say "namespaces $srv_ns ($srv_ip) and $cli_ns ($cli_ip) joined by veth $srv_if/$cli_if"
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

args+=(-server-netns "$srv_ns" -server-host "$srv_ip" -client-host "$cli_ip")
say "ip netns exec $cli_ns goblin-bench matrix ${args[*]} $*"
ip netns exec "$cli_ns" "$bin/goblin-bench" matrix "${args[@]}" "$@"
say "archive in $OUT_DIR"
