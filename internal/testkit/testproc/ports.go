package testproc

import (
	"io"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// FreeUDPPorts returns n distinct loopback UDP ports that bound a moment
// ago, picked below the kernel's ephemeral range (freePorts). (Another
// process may still take a port between here and the real bind; that shows
// as a bind error, not as a wrong result.)
func FreeUDPPorts(tb testing.TB, n int) []int {
	tb.Helper()
	return freePorts(tb, "udp", n)
}

// FreeUDPPort returns one free loopback UDP port (FreeUDPPorts). Tests that
// need several take them from one FreeUDPPorts call, never from repeated
// FreeUDPPort calls.
func FreeUDPPort(tb testing.TB) int { return FreeUDPPorts(tb, 1)[0] }

// picked holds the ports freePorts returned in this process, so two tests
// of one binary never get the same one.
var picked = struct {
	sync.Mutex
	m map[int]bool
}{m: map[int]bool{}}

// freePorts picks n ports for network ("tcp" or "udp") at random below the
// kernel's ephemeral range (net.ipv4.ip_local_port_range's low end, 32768
// by default; the 12,000 ports under it), each bound on 127.0.0.1 to check
// it is free, all held until the n are chosen. The kernel never hands out
// a port there by itself, so only another test's pick of the same port in
// the same moment can take it before its server binds: one chance in
// thousands, where a port the kernel had just handed out for port 0 could
// be handed out again at once for any outgoing connection.
func freePorts(tb testing.TB, network string, n int) []int {
	tb.Helper()
	hi := 32768
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if v, err := strconv.Atoi(f[0]); err == nil && v > 2048 {
				hi = v
			}
		}
	}
	lo := max(1024, hi-12000)
	if r, ok := PortRange(tb); ok {
		lo, hi = r[0], r[1]+1
	}
	picked.Lock()
	defer picked.Unlock()
	var held []io.Closer
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	var ports []int
	for tries := 0; len(ports) < n; tries++ {
		if tries > 10000 {
			tb.Fatalf("testproc: no free %s port among %d-%d after %d tries", network, lo, hi-1, tries)
		}
		p := lo + rand.IntN(hi-lo)
		if picked.m[p] {
			continue
		}
		addr := "127.0.0.1:" + strconv.Itoa(p)
		var c io.Closer
		var err error
		if network == "udp" {
			c, err = net.ListenPacket("udp4", addr)
		} else {
			c, err = net.Listen("tcp", addr)
		}
		if err != nil {
			continue // taken
		}
		held = append(held, c)
		picked.m[p] = true
		ports = append(ports, p)
	}
	return ports
}

// PortRangeEnv names the environment variable that confines the ports
// freePorts picks to lo-hi (inclusive, e.g. "22000-23999"), for a machine
// shared with other work that owns the ports outside it; tests that would
// listen on port 0 take a picked port instead while it is set (the
// goblin-server tests' startServer). Unset, the ports are picked below the
// kernel's ephemeral range as before.
const PortRangeEnv = "GOBLIN_TEST_PORTS"

// PortRange returns PortRangeEnv's range and whether it is set; a value
// that is not "lo-hi" with 1024 <= lo <= hi <= 65535 fails tb.
func PortRange(tb testing.TB) ([2]int, bool) {
	tb.Helper()
	v := os.Getenv(PortRangeEnv)
	if v == "" {
		return [2]int{}, false
	}
	a, b, ok := strings.Cut(v, "-")
	lo, err1 := strconv.Atoi(a)
	hi, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || lo < 1024 || hi < lo || hi > 65535 {
		tb.Fatalf("%s=%q: want lo-hi, two ports from 1024 to 65535, lo first", PortRangeEnv, v)
	}
	return [2]int{lo, hi}, true
}
