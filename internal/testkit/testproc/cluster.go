package testproc

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// GoblinCluster is three goblin-server processes on loopback forming one
// cluster (slots 0-5460, 5461-10922 and 10923-16383), each listening on a
// TCP port (RESP) and a Unix socket (SBE), which its entry in the shared
// cluster file advertises first.
type GoblinCluster struct {
	Procs []*Proc
	// Addrs are the nodes' TCP host:port, in slot order.
	Addrs []string
	// Socks are the nodes' uds targets (SBE), in slot order.
	Socks []string
}

// StartGoblinCluster builds goblin-server, starts the three nodes and
// waits until each is ready. They are stopped in tb.Cleanup.
func StartGoblinCluster(tb testing.TB) *GoblinCluster {
	tb.Helper()
	bin := Build(tb, "./cmd/goblin-server")
	dir := tb.TempDir()
	conf := filepath.Join(dir, "cluster.conf")
	// Ports free a moment ago: the file must name them before the nodes
	// start.
	var ls []net.Listener
	c := &GoblinCluster{}
	for range 3 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			tb.Fatal(err)
		}
		ls = append(ls, l)
		c.Addrs = append(c.Addrs, l.Addr().String())
	}
	for _, l := range ls {
		l.Close()
	}
	ranges := []string{"0-5460", "5461-10922", "10923-16383"}
	var b strings.Builder
	b.WriteString("epoch 1\n")
	var listen [][]string
	for i := range 3 {
		tcp := "tcp://" + c.Addrs[i]
		sock := "uds://" + filepath.Join(dir, "n"+strconv.Itoa(i+1)+".sock") + "?proto=sbe"
		c.Socks = append(c.Socks, sock)
		listen = append(listen, []string{"--listen", tcp, "--listen", sock})
		fmt.Fprintf(&b, "node %s %s %s slots %s\n", strings.Repeat(strconv.Itoa(i+1), 40), sock, tcp, ranges[i])
	}
	if err := os.WriteFile(conf, []byte(b.String()), 0o600); err != nil {
		tb.Fatal(err)
	}
	for i := range 3 {
		args := append([]string{"--metrics", "off", "--cluster-config", conf, "--cluster-node", strings.Repeat(strconv.Itoa(i+1), 40),
			"--dir", tb.TempDir()}, listen[i]...) // never the default state directory's snapshot
		c.Procs = append(c.Procs, Start(tb, bin, args...))
	}
	for _, p := range c.Procs {
		p.WaitLog(tb, `msg=ready`, 60*time.Second)
	}
	return c
}
