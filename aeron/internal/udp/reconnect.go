package udp

import (
	"fmt"
	"net/netip"

	"golang.org/x/sys/unix"
)

// Reconnect connects a connected socket to another address (a re-resolved
// endpoint): sends go there from now on, and only datagrams from it are
// read.
func (s *Socket) Reconnect(to netip.AddrPort) error {
	if err := unix.Connect(s.fd, s.sockaddr(to)); err != nil {
		return fmt.Errorf("udp: connect %s: %w", to, cErr(err))
	}
	return nil
}
