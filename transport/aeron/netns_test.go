package aeron_test

import (
	"fmt"
	"math/rand/v2"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/internal/testkit/netns"
	"github.com/goblin-kv/goblin/internal/testkit/testproc"
)

// TestTwoHosts runs goblin-server and goblin-client in two network
// namespaces joined by a veth pair the test creates (server 10.R.S.1,
// client 10.R.S.2, addresses that exist only inside these namespaces), so
// UDP with response channels crosses two real distinct addresses and two
// media drivers. It proves the control-address rule: control= names the
// server's address and works; naming the client's address makes the
// server's driver try to bind an address its host does not own, and no
// client gets a reply path. It needs root (CAP_NET_ADMIN) and ip(8).
func TestTwoHosts(t *testing.T) {
	testkit.NeedRoot(t, "the two-host test's network namespaces and veth pair")
	ipBin := testkit.Need(t, "ip", "the two-host test's network namespaces (iproute2)")
	needDriver(t)
	id := rand.IntN(1 << 16)
	nsS, nsC := fmt.Sprintf("gba-s-%04x", id), fmt.Sprintf("gba-c-%04x", id)
	vethS, vethC := fmt.Sprintf("gbas%04x", id), fmt.Sprintf("gbac%04x", id)
	subnet := fmt.Sprintf("10.%d.%d", 200+rand.IntN(50), rand.IntN(250))
	serverIP, clientIP := subnet+".1", subnet+".2"
	run := func(args ...string) {
		t.Helper()
		if out, err := exec.Command(ipBin, args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	for _, ns := range []string{nsS, nsC} {
		run("netns", "add", ns)
		t.Cleanup(func() { exec.Command(ipBin, "netns", "del", ns).Run() }) // takes its end of the veth pair with it
		// Port-0 binds stay clear of the fixed ports below (see netns.EphemeralPorts).
		run("netns", "exec", ns, "sh", "-c", "echo "+netns.EphemeralPorts+" > /proc/sys/net/ipv4/ip_local_port_range")
	}
	run("link", "add", vethS, "type", "veth", "peer", "name", vethC)
	t.Cleanup(func() { exec.Command(ipBin, "link", "del", vethS).Run() }) // gone already once moved; harmless
	run("link", "set", vethS, "netns", nsS)
	run("link", "set", vethC, "netns", nsC)
	run("-n", nsS, "addr", "add", serverIP+"/24", "dev", vethS)
	run("-n", nsC, "addr", "add", clientIP+"/24", "dev", vethC)
	for _, x := range [][2]string{{nsS, vethS}, {nsC, vethC}} {
		run("-n", x[0], "link", "set", "lo", "up")
		run("-n", x[0], "link", "set", x[1], "up")
	}

	srvBin := testproc.Build(t, "./cmd/goblin-server")
	cliBin := testproc.Build(t, "./cmd/goblin-client")
	good := fmt.Sprintf("aeron:udp?endpoint=%s:40123|control=%s:40124", serverIP, serverIP)
	wrong := fmt.Sprintf("aeron:udp?endpoint=%s:40125|control=%s:40126", serverIP, clientIP)
	dir := shmDir(t)
	srv := testproc.Start(t, ipBin, "netns", "exec", nsS, srvBin, "--metrics", "off", "--log-level", "debug",
		"--listen", good+"|proto=resp|dir="+dir,
		"--listen", good+"|proto=sbe|stream=2001|reply-stream=2002|driver=external|dir="+dir,
		"--listen", wrong+"|proto=resp|stream=3001|reply-stream=3002|driver=external|dir="+dir)
	srv.WaitLog(t, `msg=ready`, 120*time.Second)

	cli := func(timeout, tgt string, args ...string) (string, error) {
		// The client has no dir: it starts its own media driver, in its
		// own namespace (the second host).
		a := append([]string{"netns", "exec", nsC, cliBin, "--timeout", timeout, "--target", tgt}, args...)
		out, err := exec.Command(ipBin, a...).CombinedOutput()
		return string(out), err
	}
	for _, tc := range []struct{ name, tgt string }{
		{"resp", good + "|proto=resp"},
		{"sbe", good + "|proto=sbe|stream=2001|reply-stream=2002"},
	} {
		out, err := cli("90s", tc.tgt, "ping")
		if err != nil || strings.TrimSpace(out) != "PONG" {
			t.Fatalf("%s across the veth pair: %q (%v)", tc.name, out, err)
		}
		out, err = cli("90s", tc.tgt, "set", "host", "two")
		if err != nil || strings.TrimSpace(out) != "OK" {
			t.Fatalf("%s SET: %q (%v)", tc.name, out, err)
		}
		out, err = cli("90s", tc.tgt, "get", "host")
		if err != nil || strings.TrimSpace(out) != `"two"` {
			t.Fatalf("%s GET: %q (%v)", tc.name, out, err)
		}
	}

	// The known mistake: control = the client's address.
	out, err := cli("20s", wrong+"|proto=resp|stream=3001|reply-stream=3002", "ping")
	if err == nil {
		t.Fatalf("a client reached a server whose control address is the client's own: %q", out)
	}
	t.Logf("client with control=%s (its own address) fails as it must: %s", clientIP, strings.TrimSpace(out))
	why := srv.WaitLog(t, `cannot add a client's response publication.*err=(.*)`, 30*time.Second)
	t.Logf("the server's driver refused the response publication: %s", why)
	// make twohost greps for this line: CI shows that the test ran, not
	// just that the package passed.
	t.Logf("TestTwoHosts ran: Aeron UDP between network namespaces %s (%s) and %s (%s), RESP and SBE", nsS, serverIP, nsC, clientIP)
}
