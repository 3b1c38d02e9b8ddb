package netns

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// LAN is several hosts in miniature on one Ethernet segment: a namespace
// per host, each joined to a bridge in a namespace of its own (the
// switch), so multicast reaches every host as on a real LAN. A host's
// port is a veth pair, or, when impaired, a pair of TAP devices whose
// frames a goroutine of this process carries across applying the
// impairment (loss, duplication, reordering, delay), as Link's TUN link
// does for packets; the kernel needs no netem.
type LAN struct {
	Switch string       // the namespace holding the bridge
	Hosts  []string     // one namespace per host
	Addr   []netip.Addr // host i's address (one /24)
	Dev    []string     // host i's device in its namespace
	ip     string
	taps   []*os.File
	imp    []*atomic.Pointer[Impairment] // per host; nil: a veth port
	counts []*Counts                     // per host; nil: a veth port
	wg     sync.WaitGroup
}

// Counts are what an impaired port did to the frames it carried, both
// ways.
type Counts struct {
	Carried, Dropped, Duplicated, Delayed atomic.Int64
}

// LANOptions describe a LAN.
type LANOptions struct {
	// Prefix starts the namespace and device names (a few letters; the
	// namespaces are <Prefix>-<id>-s and <Prefix>-<id>-<i>).
	Prefix string
	// Hosts is how many hosts; Impaired[i] makes host i's port a TAP pair
	// Set can impair.
	Hosts    int
	Impaired []bool
}

// NewLAN builds a LAN; Close removes it.
func NewLAN(o LANOptions) (*LAN, error) {
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("%w: network namespaces need root", ErrPrerequisite)
	}
	ip, err := exec.LookPath("ip")
	if err != nil {
		return nil, fmt.Errorf("%w: no ip(8) (iproute2)", ErrPrerequisite)
	}
	id := fmt.Sprintf("%x%03x", os.Getpid()&0xfff, rand.IntN(1<<12))
	n := &LAN{ip: ip, Switch: o.Prefix + "-" + id + "-s"}
	subnet := fmt.Sprintf("10.%d.%d.", 150+rand.IntN(50), rand.IntN(250))
	if err := n.netns(n.Switch); err != nil {
		n.Close()
		return nil, err
	}
	for _, args := range [][]string{{"link", "add", "br0", "type", "bridge"}, {"link", "set", "br0", "up"}} {
		if err := n.run(append([]string{"-n", n.Switch}, args...)...); err != nil {
			n.Close()
			return nil, err
		}
	}
	// Flood multicast to every port whatever IGMP says (no querier here).
	_ = n.run("-n", n.Switch, "link", "set", "br0", "type", "bridge", "mcast_snooping", "0")
	for i := range o.Hosts {
		ns := fmt.Sprintf("%s-%s-%d", o.Prefix, id, i)
		n.Hosts = append(n.Hosts, ns)
		n.Addr = append(n.Addr, netip.MustParseAddr(subnet+fmt.Sprint(i+1)))
		n.imp = append(n.imp, nil)
		n.counts = append(n.counts, nil)
		if err := n.netns(ns); err != nil {
			n.Close()
			return nil, err
		}
		sw, host := clip(fmt.Sprintf("g%s%ds", id, i)), clip(fmt.Sprintf("g%s%dh", id, i))
		if i < len(o.Impaired) && o.Impaired[i] {
			err = n.tapPort(i, sw, host)
		} else {
			err = n.run("link", "add", sw, "type", "veth", "peer", "name", host)
		}
		if err == nil {
			err = n.attach(i, sw, host)
		}
		if err != nil {
			n.Close()
			return nil, err
		}
		n.Dev = append(n.Dev, host)
	}
	return n, nil
}

func (n *LAN) netns(ns string) error {
	return addNamespace(n.ip, ns)
}

// tapPort makes the TAP pair of an impaired host and starts carrying
// frames between its two devices.
func (n *LAN) tapPort(i int, sw, host string) error {
	var f [2]*os.File
	for k, name := range []string{sw, host} {
		t, err := openTAP(name)
		if err != nil {
			if k == 1 {
				f[0].Close()
			}
			return err
		}
		f[k] = t
	}
	n.taps = append(n.taps, f[0], f[1])
	imp := &atomic.Pointer[Impairment]{}
	imp.Store(&Impairment{})
	n.imp[i] = imp
	c := &Counts{}
	n.counts[i] = c
	for k := range 2 {
		n.wg.Add(1)
		go func() {
			defer n.wg.Done()
			carry(f[k], f[1-k], imp, c)
		}()
	}
	return nil
}

// attach moves a port's two ends into the switch (on the bridge) and the
// host (with its address and a multicast route).
func (n *LAN) attach(i int, sw, host string) error {
	ns := n.Hosts[i]
	steps := [][]string{
		{"link", "set", sw, "netns", n.Switch},
		{"link", "set", host, "netns", ns},
		{"-n", n.Switch, "link", "set", sw, "master", "br0"},
		{"-n", n.Switch, "link", "set", sw, "up"},
		{"-n", ns, "addr", "add", n.Addr[i].String() + "/24", "dev", host},
		{"-n", ns, "link", "set", host, "up"},
		{"-n", ns, "route", "add", "224.0.0.0/4", "dev", host},
	}
	for _, s := range steps {
		if err := n.run(s...); err != nil {
			return err
		}
	}
	return nil
}

func openTAP(name string) (*os.File, error) { return openDevice(name, unix.IFF_TAP, "tap") }

// carry copies frames (or packets) from one device to the other, applying
// the impairment in force, until from is closed.
func carry(from, to *os.File, imp *atomic.Pointer[Impairment], c *Counts) {
	buf := make([]byte, 1<<16)
	for {
		n, err := from.Read(buf)
		if err != nil {
			return
		}
		i := imp.Load()
		c.Carried.Add(1)
		if i.Loss > 0 && rand.Float64() < i.Loss {
			c.Dropped.Add(1)
			continue
		}
		copies := 1
		if i.Duplicate > 0 && rand.Float64() < i.Duplicate {
			copies = 2
			c.Duplicated.Add(1)
		}
		for range copies {
			if i.Delay > 0 && !(i.Reorder > 0 && rand.Float64() < i.Reorder) {
				c.Delayed.Add(1)
				p := append([]byte(nil), buf[:n]...)
				time.AfterFunc(i.Delay, func() { to.Write(p) })
				continue
			}
			to.Write(buf[:n])
		}
	}
}

// Set impairs host i's port in both directions (the zero Impairment
// restores it); the host must have been made Impaired.
func (n *LAN) Set(i int, imp Impairment) error {
	if i < 0 || i >= len(n.imp) || n.imp[i] == nil {
		return fmt.Errorf("netns: host %d of the LAN has a plain veth port: it cannot be impaired (LANOptions.Impaired)", i)
	}
	n.imp[i].Store(&imp)
	return nil
}

// Counts returns what host i's impaired port did (nil for a veth port).
func (n *LAN) Counts(i int) *Counts { return n.counts[i] }

// Command runs name with args inside host i's namespace.
func (n *LAN) Command(i int, name string, args ...string) *exec.Cmd {
	return exec.Command(n.ip, append([]string{"netns", "exec", n.Hosts[i], name}, args...)...)
}

// Close stops the frame carriers and removes the namespaces (and with
// them the devices).
func (n *LAN) Close() error {
	for _, f := range n.taps {
		f.Close()
	}
	n.wg.Wait()
	var errs []error
	for _, ns := range append([]string{n.Switch}, n.Hosts...) {
		if err := exec.Command(n.ip, "netns", "del", ns).Run(); err != nil {
			errs = append(errs, fmt.Errorf("netns: del %s: %w", ns, err))
		}
	}
	return errors.Join(errs...)
}

func (n *LAN) run(args ...string) error {
	if out, err := exec.Command(n.ip, args...).CombinedOutput(); err != nil {
		return fmt.Errorf("netns: ip %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// EphemeralPorts is the range a host's kernel picks port-0 binds from in
// every namespace this package makes. Tests give their Aeron channels
// fixed ports below it (40000–48999 today), so a socket bound to port 0 on
// the same host (a multicast publication's send socket, a TCP listener)
// can never take one of them first: with Linux's default range
// (32768–60999) that happened about once in 28,000 binds and failed a
// start with "Address already in use".
const EphemeralPorts = "49152 60999"

// addNamespace creates namespace ns, brings its loopback up and moves its
// ephemeral port range to EphemeralPorts.
func addNamespace(ip, ns string) error {
	steps := [][]string{
		{"netns", "add", ns},
		{"-n", ns, "link", "set", "lo", "up"},
		{"netns", "exec", ns, "sh", "-c", "echo " + EphemeralPorts + " > /proc/sys/net/ipv4/ip_local_port_range"},
	}
	for _, args := range steps {
		if out, err := exec.Command(ip, args...).CombinedOutput(); err != nil {
			return fmt.Errorf("netns: ip %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
		}
	}
	return nil
}
