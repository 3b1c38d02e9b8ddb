# Sourced by the launchers: the defaults of the knobs both share
# (environment variables, see docs/benchmarks.md), and knob_args, which
# turns them into flags of goblin-bench matrix and remote, appended to the array named by $1.
RUNS=${RUNS:-2}
WARMUP=${WARMUP:-10000}
SAMPLES=${SAMPLES:-100000}

knob_args() {
	local -n out=$1
	[[ -n ${PROFILE:-} ]] && out+=(-profile "$PROFILE")
	[[ -n ${PROTOCOLS:-} ]] && out+=(-protocols "$PROTOCOLS")
	[[ -n ${OPS:-} ]] && out+=(-ops "$OPS")
	[[ -n ${VALUE_SIZE:-} ]] && out+=(-value-size "$VALUE_SIZE")
	[[ -n ${KEYS:-} ]] && out+=(-keys "$KEYS")
	[[ -n ${DEPTH:-} ]] && out+=(-depth "$DEPTH")
	[[ -n ${CLIENT:-} ]] && out+=(-client "$CLIENT")
	[[ -n ${SERVER_IDLE:-} ]] && out+=(-server-idle "$SERVER_IDLE")
	[[ -n ${CLIENT_WAIT:-} ]] && out+=(-client-wait "$CLIENT_WAIT")
	[[ -n ${DRIVER_IDLE:-} ]] && out+=(-driver-idle "$DRIVER_IDLE")
	[[ -v SERVER_CPU ]] && out+=(-server-cpu "$SERVER_CPU")
	[[ -v CLIENT_CPU ]] && out+=(-client-cpu "$CLIENT_CPU")
	[[ -v DRIVER_CPU ]] && out+=(-driver-cpu "$DRIVER_CPU")
	[[ -v SERVER_AGENTS ]] && out+=(-server-agents "$SERVER_AGENTS")
	[[ -v CLIENT_AGENTS ]] && out+=(-client-agents "$CLIENT_AGENTS")
	[[ -v HOUSEKEEPING_CPU ]] && out+=(-housekeeping-cpu "$HOUSEKEEPING_CPU")
	[[ -n ${CASE_TIMEOUT:-} ]] && out+=(-case-timeout "$CASE_TIMEOUT")
	[[ -n ${JAVA:-} ]] && out+=(-java "$JAVA")
	[[ -n ${REDIS_SERVER:-} ]] && out+=(-redis-server "$REDIS_SERVER")
	return 0
}

# driver_args appends the media-driver flags to the array named by $1:
# DRIVER=java|aeronmd|goblin, AERONMD=PATH, DRIVER_ENV='K=V …'. For
# DRIVER=goblin without AERONMD it builds goblin's own driver
# (aeron/cmd/aeronmd) into the directory $2.
driver_args() {
	local -n out=$1
	local driver=${DRIVER:-java} aeronmd=${AERONMD:-}
	if [[ $driver == goblin && -z $aeronmd ]]; then
		if [[ ! -d aeron/cmd/aeronmd ]]; then
			echo "DRIVER=goblin: goblin's own media driver (aeron/cmd/aeronmd) is not in this checkout; use DRIVER=java or DRIVER=aeronmd AERONMD=PATH" >&2
			return 2
		fi
		echo "building goblin's media driver (aeron/cmd/aeronmd)" >&2
		go build -o "$2/aeronmd" ./aeron/cmd/aeronmd || return 2
		aeronmd=$2/aeronmd
	fi
	out+=(-driver "$driver")
	[[ -n $aeronmd ]] && out+=(-aeronmd "$aeronmd")
	[[ -n ${DRIVER_ENV:-} ]] && out+=(-driver-env "$DRIVER_ENV")
	return 0
}

# launcher_args sorts the launchers' arguments: --setup sets RUN_SETUP=1
# (run scripts/setup.sh first); everything else is for goblin-bench and
# goes into the array bench_args.
RUN_SETUP=0
bench_args=()
launcher_args() {
	local a
	for a in "$@"; do
		case $a in
		--setup) RUN_SETUP=1 ;;
		*) bench_args+=("$a") ;;
		esac
	done
}

# prepare runs scripts/setup.sh when the launcher was given --setup. It
# is opt-in because, run as root, setup.sh installs Debian packages,
# creates the system user goblin-test and stops the system's redis-server.
# Without --setup nothing is installed: prepare names what this machine
# lacks and what the run will then leave out ($1: the launcher's name).
prepare() {
	local who=$1
	if ((RUN_SETUP)); then
		echo "$who: --setup: running scripts/setup.sh (as root it may install Debian packages, create the system user goblin-test and stop the system redis-server)" >&2
		./scripts/setup.sh
		return
	fi
	local missing=() redis=${REDIS_SERVER:-redis-server} java=${JAVA:-java} version jar
	version=$(cat scripts/aeron.version)
	jar=${MAVEN_REPO:-$HOME/.m2/repository}/io/aeron/aeron-all/$version/aeron-all-$version.jar
	command -v "$redis" >/dev/null ||
		missing+=("redis-server (looked for $redis): the redis cases will be reported unavailable")
	command -v "$java" >/dev/null ||
		missing+=("java (looked for $java): the Aeron cases on the Java media driver and the aeron-raw ping-pong will be reported unavailable")
	[[ -s $jar ]] ||
		missing+=("the Aeron jar io.aeron:aeron-all:$version (looked for $jar): the same Aeron cases will be reported unavailable")
	if ((${#missing[@]})); then
		echo "$who: missing on this machine (nothing is installed without --setup):" >&2
		local m
		for m in "${missing[@]}"; do
			echo "$who:   - $m" >&2
		done
		echo "$who: install them yourself, or run again with --setup to run scripts/setup.sh (as root it installs Debian packages, creates the system user goblin-test and stops the system redis-server)" >&2
	fi
}
