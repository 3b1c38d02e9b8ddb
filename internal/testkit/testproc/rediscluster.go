package testproc

import (
	"strconv"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/internal/testkit"
)

// RedisNode is a redis-server started in cluster mode by
// StartRedisClusterNode.
type RedisNode struct {
	*Proc
	Port    int    // client port
	BusPort int    // cluster bus port (cluster-port)
	Addr    string // "127.0.0.1:port"
	Dir     string // its directory: nodes.conf, log
}

// FreeTCPPorts returns n distinct loopback TCP ports that bound a moment
// ago, picked below the kernel's ephemeral range (freePorts): a port the
// kernel handed out for port 0 could be handed out again at once as
// another process's outgoing connection's source port or port-0 listener,
// and a CI run lost a server start to that (TestTLSCluster: "address in
// use" on a port picked this way a moment before).
func FreeTCPPorts(tb testing.TB, n int) []int {
	tb.Helper()
	return freePorts(tb, "tcp", n)
}

// StartRedisClusterNode starts a redis-server 7.0 with cluster-enabled yes
// on loopback, its client and bus ports picked free, its nodes.conf in a
// temporary directory, and waits until it accepts clients. extra are more
// redis-server arguments ("--cluster-node-timeout", "2000", ...). It is
// stopped in tb.Cleanup.
func StartRedisClusterNode(tb testing.TB, extra ...string) *RedisNode {
	tb.Helper()
	bin := testkit.Need(tb, "redis-server", "a Redis Cluster 7.0 peer")
	ports := FreeTCPPorts(tb, 2)
	dir := tb.TempDir()
	args := []string{"--port", strconv.Itoa(ports[0]), "--bind", "127.0.0.1", "--cluster-enabled", "yes",
		"--cluster-port", strconv.Itoa(ports[1]), "--cluster-config-file", "nodes.conf", "--dir", dir,
		"--save", "", "--appendonly", "no"}
	p := Start(tb, bin, append(args, extra...)...)
	n := &RedisNode{Proc: p, Port: ports[0], BusPort: ports[1], Addr: "127.0.0.1:" + strconv.Itoa(ports[0]), Dir: dir}
	WaitDial(tb, "tcp", n.Addr, 20*time.Second)
	return n
}
