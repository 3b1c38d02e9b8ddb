package testproc

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestMain(m *testing.M) { Main(m) }

func TestBuildStartWaitLogStop(t *testing.T) {
	bin := Build(t, "./internal/testkit/testproc/testdata/hello")
	if again := Build(t, "./internal/testkit/testproc/testdata/hello"); again != bin {
		t.Fatalf("second Build gave %q, want the cached %q", again, bin)
	}
	p := Start(t, bin)
	pid := p.WaitLog(t, `hello ready pid (\d+)`, 30*time.Second)
	if pid != strconv.Itoa(p.PID) {
		t.Fatalf("logged pid %s, started pid %d", pid, p.PID)
	}
	if n, err := p.FDs(); err != nil || n < 3 {
		t.Fatalf("FDs = %d, %v; want at least stdin, stdout, stderr", n, err)
	}
	if rss, err := p.RSS(); err != nil || rss <= 0 {
		t.Fatalf("RSS = %d, %v", rss, err)
	}
	if code := p.Stop(10 * time.Second); code != 3 {
		t.Fatalf("exit code %d, want 3 (the graceful path)", code)
	}
	if !p.Exited() {
		t.Fatal("Exited() false after Stop")
	}
	p.WaitLog(t, "bye", time.Second)
}

func TestListeningTargets(t *testing.T) {
	log := `time=x level=INFO msg=listening target="uds:///tmp/a b/resp.sock?proto=resp"
time=x level=INFO msg=listening target="tcp://127.0.0.1:40123?proto=sbe"
time=x level=INFO msg=listening target=tcp://127.0.0.1:40124
time=x level=INFO msg=ready
`
	got := ListeningTargets(log)
	want := []string{"uds:///tmp/a b/resp.sock?proto=resp", "tcp://127.0.0.1:40123?proto=sbe", "tcp://127.0.0.1:40124"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("ListeningTargets = %q, want %q", got, want)
	}
	if k := targetKey(got[1]); k != "tcp/sbe" {
		t.Fatalf("targetKey(%q) = %q, want tcp/sbe", got[1], k)
	}
	if k := targetKey(got[2]); k != "" {
		t.Fatalf("targetKey(%q) = %q, want \"\" (no proto)", got[2], k)
	}
}

// TestStartGoblinServer starts the real server and checks every target it
// returns accepts connections.
func TestStartGoblinServer(t *testing.T) {
	targets := StartGoblinServer(t)
	for _, k := range GoblinServerKeys {
		u, err := url.Parse(targets[k])
		if err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		network, addr := "tcp", u.Host
		if u.Scheme == "uds" {
			network, addr = "unix", u.Path
		}
		WaitDial(t, network, addr, 30*time.Second)
	}
}

// TestFreeUDPPortsDistinct: the ports of one call differ and are free
// (each can be bound once the call returns).
func TestFreeUDPPortsDistinct(t *testing.T) {
	for range 50 {
		ports := FreeUDPPorts(t, 4)
		seen := map[int]bool{}
		for _, p := range ports {
			if p <= 0 || seen[p] {
				t.Fatalf("FreeUDPPorts = %v: not distinct positive ports", ports)
			}
			seen[p] = true
		}
		var conns []net.PacketConn
		for _, p := range ports {
			pc, err := net.ListenPacket("udp4", "127.0.0.1:"+strconv.Itoa(p))
			if err != nil {
				t.Fatalf("port %d not free after FreeUDPPorts: %v", p, err)
			}
			conns = append(conns, pc)
		}
		for _, pc := range conns {
			pc.Close()
		}
	}
}

// TestFreePortsBelowEphemeralRange: the ports handed out are distinct,
// below the kernel's ephemeral range, and bind.
func TestFreePortsBelowEphemeralRange(t *testing.T) {
	low := 32768
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		fmt.Sscan(string(b), &low)
	}
	seen := map[int]bool{}
	for _, p := range append(FreeTCPPorts(t, 8), FreeUDPPorts(t, 8)...) {
		if p >= low || p < 1024 {
			t.Errorf("port %d: want one in 1024-%d, below the ephemeral range", p, low-1)
		}
		seen[p] = true
	}
	if len(seen) != 16 {
		t.Errorf("%d distinct ports of 16", len(seen))
	}
	for _, p := range FreeTCPPorts(t, 2) {
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			t.Fatalf("port %d does not bind: %v", p, err)
		}
		l.Close()
	}
}
