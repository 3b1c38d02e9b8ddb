package testproc

import (
	"net"
	"testing"
)

// FreeUDPPorts asks the kernel for n distinct free loopback UDP ports. The
// probe sockets stay open until all n are chosen: asked one after another,
// with each socket closed in between, the kernel may hand out the same port
// twice, and two endpoints on one port make a test fail at random. (Another
// process may still take a port between here and the real bind; that shows
// as a bind error, not as a wrong result.)
func FreeUDPPorts(tb testing.TB, n int) []int {
	tb.Helper()
	ports := make([]int, n)
	for i := range ports {
		pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
		if err != nil {
			tb.Fatal(err)
		}
		defer pc.Close()
		ports[i] = pc.LocalAddr().(*net.UDPAddr).Port
	}
	return ports
}

// FreeUDPPort asks the kernel for one free loopback UDP port. Tests that
// need several take them from one FreeUDPPorts call, never from repeated
// FreeUDPPort calls.
func FreeUDPPort(tb testing.TB) int { return FreeUDPPorts(tb, 1)[0] }
