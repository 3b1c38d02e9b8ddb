package udp

import (
	"fmt"
	"net"
	"net/netip"
)

type ifaceAddrs struct {
	index     int
	name      string
	up        bool
	multicast bool
	loopback  bool
	addrs     []netip.Addr
	prefixes  []netip.Prefix
}

func interfaces() ([]ifaceAddrs, error) {
	ifs, err := net.Interfaces()
	if err != nil {
		return nil, fmt.Errorf("udp: list interfaces: %w", err)
	}
	out := make([]ifaceAddrs, 0, len(ifs))
	for _, i := range ifs {
		x := ifaceAddrs{index: i.Index, name: i.Name, up: i.Flags&net.FlagUp != 0,
			multicast: i.Flags&net.FlagMulticast != 0, loopback: i.Flags&net.FlagLoopback != 0}
		addrs, err := i.Addrs()
		if err != nil {
			continue
		}
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok {
				if ip, ok := netip.AddrFromSlice(n.IP); ok {
					ip = ip.Unmap()
					ones, _ := n.Mask.Size()
					x.addrs = append(x.addrs, ip)
					x.prefixes = append(x.prefixes, netip.PrefixFrom(ip, ones))
				}
			}
		}
		out = append(out, x)
	}
	return out, nil
}

// FindInterface finds the local interface an Aeron interface= search
// address names (InterfaceSearchAddress.resolve): the first interface that
// is up, multicast-capable or the loopback, and has an address within
// search (an address and a prefix length; /32 or /128 means that exact
// address). It returns that address and the interface's index.
func FindInterface(search netip.Prefix) (netip.Addr, int, error) {
	ifs, err := interfaces()
	if err != nil {
		return netip.Addr{}, 0, err
	}
	search = search.Masked()
	for _, i := range ifs {
		if !i.up || !(i.multicast || i.loopback) {
			continue
		}
		for _, a := range i.addrs {
			if search.Contains(a) {
				return a, i.index, nil
			}
		}
	}
	return netip.Addr{}, 0, fmt.Errorf("udp: no up multicast or loopback interface has an address in %s", search)
}
