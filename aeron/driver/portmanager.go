package driver

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/goblin-kv/goblin/aeron/internal/udp"
	"golang.org/x/sys/unix"
)

// Wildcard port ranges (aeron.sender.wildcard.port.range,
// aeron.receiver.wildcard.port.range; the Java driver's
// WildcardPortManager): a socket the driver would bind to port 0 — a
// subscription's endpoint, an MDS destination's, the driver name
// resolver's, or a publication's explicit control address — binds to a
// port of the range instead, the ports taken round robin from the one
// after the last given out. Without a range the kernel picks an ephemeral
// port. A publication without an explicit control address keeps the
// kernel's port, as in Java.
//
// A port counts as taken when binding to it fails with "Address already
// in use": the driver's own sockets and other processes' alike, so a port
// is free again as soon as the socket that held it is closed. Deliberate
// difference: Java keeps a set of the ports it gave out and, when another
// process holds the port it chose, fails the bind; goblin's driver skips
// that port and tries the next. When every port of the range is taken
// the bind fails with Java's text, "no available ports in range LOW HIGH".

// portRange is one parsed wildcard port range; the zero value is "none".
type portRange struct {
	low, high uint16
	next      uint16
}

func (r *portRange) enabled() bool { return r.high != 0 }

// parsePortRange reads "LOW HIGH" (WildcardPortManager.parsePortRange;
// "" is no range, as is "0 0").
func parsePortRange(name, v string) (portRange, error) {
	if v == "" {
		return portRange{}, nil
	}
	f := strings.Fields(v)
	if len(f) != 2 {
		return portRange{}, fmt.Errorf("%s: port range %q incorrect format, want \"LOW HIGH\"", name, v)
	}
	var p [2]uint64
	for i, s := range f {
		n, err := strconv.ParseUint(s, 10, 32)
		if err != nil || n > 65535 {
			return portRange{}, fmt.Errorf("%s: invalid port value %s: port must be an integer value between 0 and 65535", name, v)
		}
		p[i] = n
	}
	if p[0] > p[1] {
		return portRange{}, fmt.Errorf("%s: invalid port value %s: low port value must be lower than high port value", name, v)
	}
	if p[0] == 0 && p[1] != 0 {
		return portRange{}, fmt.Errorf("%s: invalid port value %s: the low port must not be 0", name, v)
	}
	return portRange{low: uint16(p[0]), high: uint16(p[1]), next: uint16(p[0])}, nil
}

// String is the range as Java prints it in errors: "LOW HIGH".
func (r *portRange) String() string { return fmt.Sprintf("%d %d", r.low, r.high) }

// open opens a socket with o, its bind port chosen from the range when
// o.Bind's port is 0 and the range is set; otherwise it opens o as is.
func (r *portRange) open(o udp.Options) (*udp.Socket, error) {
	if !r.enabled() || o.Bind.Port() != 0 {
		return udp.Open(o)
	}
	n := int(r.high) - int(r.low) + 1
	port := r.next
	for range n {
		o.Bind = netip.AddrPortFrom(o.Bind.Addr(), port)
		s, err := udp.Open(o)
		next := port + 1
		if port == r.high {
			next = r.low
		}
		if err == nil {
			r.next = next
			return s, nil
		}
		if !errors.Is(err, unix.EADDRINUSE) {
			return nil, err
		}
		port = next
	}
	return nil, fmt.Errorf("no available ports in range %s", r)
}
