#!/usr/bin/env bash
# Installs what goblin's tests and its default server need on a fresh
# machine, and does nothing for what is already there:
#   - redis-server, redis-cli and redis-benchmark (Debian), the peers and
#     clients the end-to-end tests and benchmarks use;
#   - iproute2 (ip netns) for the two-host network-namespace tests;
#   - the Unix user goblin-test (when run as root) for the socket tests;
#   - openssh-server and openssh-client: the two-host benchmark test runs
#     its own sshd in each of two network namespaces (the system's ssh
#     service is left stopped), and ethtool, whose NIC counters the
#     network benchmarks archive;
#   - the Aeron media driver and Java client (io.aeron:aeron-all) and the SBE
#     tool (uk.co.real-logic:sbe-all) from Maven Central, into ~/.m2.
# Go modules come through the Go module proxy when `go` first needs them.
set -euo pipefail
cd "$(dirname "$0")/.."

AERON_VERSION=${AERON_VERSION:-$(cat scripts/aeron.version)}
SBE_VERSION=${SBE_VERSION:-$(cat scripts/sbe.version)}

need_apt=()
command -v redis-server >/dev/null || need_apt+=(redis-server)
command -v redis-benchmark >/dev/null || need_apt+=(redis-tools)
command -v ip >/dev/null || need_apt+=(iproute2)
[[ -x /usr/sbin/sshd ]] || need_apt+=(openssh-server)
command -v ssh >/dev/null || need_apt+=(openssh-client)
command -v ethtool >/dev/null || [[ -x /usr/sbin/ethtool || -x /sbin/ethtool ]] || need_apt+=(ethtool)
if ((${#need_apt[@]})); then
	echo "setup: installing ${need_apt[*]} from Debian"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq "${need_apt[@]}" >/dev/null
	# The Debian packages start a redis-server on :6379 and an sshd on :22;
	# goblin's tests start their own on private sockets and in their own
	# namespaces, so stop the system ones.
	(service redis-server stop || true) >/dev/null 2>&1
	if [[ " ${need_apt[*]} " == *" openssh-server "* ]]; then
		(service ssh stop || true) >/dev/null 2>&1
	fi
fi

# The socket squatting test (reliability) runs processes as a second Unix
# user, goblin-test, and as nobody; it needs root to switch users.
if [[ $(id -u) == 0 ]] && ! id goblin-test >/dev/null 2>&1; then
	echo "setup: creating the Unix user goblin-test for the socket tests"
	useradd --system --no-create-home --shell /usr/sbin/nologin goblin-test
fi

# mvn_quiet runs Maven in batch mode and shows nothing unless it fails. Its
# output is captured, not left to the terminal: Maven 3.8 writes colour
# reset codes to a terminal even with -B, -q and -Dstyle.color=never, and
# those would be all a successful run leaves on the screen. A failure's
# output is shown without them.
mvn_quiet() {
	local out
	if ! out=$(mvn -B -q --no-transfer-progress -Dstyle.color=never "$@" 2>&1); then
		printf '%s\n' "$out" | sed 's/\x1b\[[0-9;]*[A-Za-z]//g' >&2
		return 1
	fi
}

m2=${MAVEN_REPO:-$HOME/.m2/repository}
fetch_jar() { # group artifact version
	local jar="$m2/${1//.//}/$2/$3/$2-$3.jar"
	if [[ ! -s $jar ]]; then
		echo "setup: fetching $1:$2:$3 from Maven Central"
		mvn_quiet dependency:get -Dartifact="$1:$2:$3" -Dtransitive=false
	fi
}
fetch_jar io.aeron aeron-all "$AERON_VERSION"
fetch_jar uk.co.real-logic sbe-all "$SBE_VERSION"

# The Java peers of the Aeron interop tests and benchmarks (aeron/interop);
# the tests also build them when stale, this just does it ahead of time.
# GOBLIN_SETUP_PEERS=tests leaves them to the tests (make test: aeron/interop
# builds them early in the race run, beside the other packages' compiles).
# The build holds the lock aeron/interop's BuildJava takes, so a test
# binary building them at the same time waits, then finds them fresh.
ij=aeron/interop/java
peers_stale() {
	[[ ! -s $ij/target/classpath.txt || -n $(find $ij/pom.xml $ij/src -newer $ij/target/goblin-aeron-interop.jar 2>/dev/null) ]]
}
if [[ ${GOBLIN_SETUP_PEERS:-} != tests ]] && peers_stale; then
	mkdir -p $ij/target
	exec 9>"$ij/target/.build.lock"
	flock 9
	if peers_stale; then
		echo "setup: building $ij (mvn package)"
		mvn_quiet -f $ij/pom.xml package
	fi
	exec 9>&-
fi
