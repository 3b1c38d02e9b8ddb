package testproc

import (
	"net"
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

// FreeTCPPorts returns n loopback TCP ports that were free a moment ago
// (held together, so they differ).
func FreeTCPPorts(tb testing.TB, n int) []int {
	tb.Helper()
	var ls []net.Listener
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			tb.Fatal(err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		l.Close()
	}
	return ports
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
