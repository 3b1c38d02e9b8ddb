// Package netns builds two hosts in miniature for tests and benchmarks:
// two network namespaces joined by a point-to-point link, with addresses
// that exist only inside them, and, on demand, a link that loses,
// duplicates, reorders and delays packets as Linux's netem does.
//
// A plain link is a veth pair. An impairable one is a veth pair with the
// netem queueing discipline on both ends when the kernel has sch_netem;
// otherwise it is a pair of TUN devices, one in each namespace, whose
// packets a goroutine of this process carries across applying the same
// impairment (loss, duplication, netem's reordering — a share of the
// packets sent at once, the rest after the delay — and delay), so the
// tests run on kernels built without netem too. Link.Mode says which.
//
// Everything needs root (CAP_NET_ADMIN) and ip(8); netem needs tc(8).
// Names are unique to the process and a random draw, so runs beside each
// other do not collide; Close removes the namespaces and the devices.
package netns

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// ErrPrerequisite is wrapped when the machine cannot build a link: not
// root, or no ip(8).
var ErrPrerequisite = errors.New("netns: a prerequisite is missing")

// Impairment is what the link does to packets, in each direction.
type Impairment struct {
	Loss      float64       // share of packets dropped, 0..1
	Duplicate float64       // share of packets sent twice
	Reorder   float64       // with Delay: share of packets sent at once, the rest after Delay
	Delay     time.Duration // delay of the packets not reordered
}

// netemArgs is the impairment in tc's words.
func (i Impairment) netemArgs() []string {
	a := []string{"loss", pct(i.Loss)}
	if i.Duplicate > 0 {
		a = append(a, "duplicate", pct(i.Duplicate))
	}
	if i.Delay > 0 {
		a = append(a, "delay", fmt.Sprintf("%dus", i.Delay.Microseconds()))
		if i.Reorder > 0 {
			a = append(a, "reorder", pct(i.Reorder))
		}
	}
	return a
}

func pct(f float64) string { return fmt.Sprintf("%g%%", f*100) }

// Options describe a link.
type Options struct {
	// Prefix starts the namespace and device names (a few letters).
	Prefix string
	// Impairable asks for a link Set can impair (netem or TUN); a plain
	// veth pair otherwise.
	Impairable bool
	// NoNetem uses the TUN link even where the kernel has netem.
	NoNetem bool
}

// Link is two namespaces, NS[0] and NS[1], whose addresses Addr[0] and
// Addr[1] reach each other.
type Link struct {
	NS   [2]string
	Addr [2]netip.Addr
	mode string // "veth", "netem" or "tun"
	dev  [2]string
	tun  [2]*os.File
	imp  atomic.Pointer[Impairment]
	wg   sync.WaitGroup
	ip   string
}

// Mode is "veth", "netem" (veth with netem) or "tun" (the user-space
// link).
func (l *Link) Mode() string { return l.mode }

// New builds a link.
func New(o Options) (*Link, error) {
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("%w: network namespaces need root", ErrPrerequisite)
	}
	ip, err := exec.LookPath("ip")
	if err != nil {
		return nil, fmt.Errorf("%w: no ip(8) (iproute2)", ErrPrerequisite)
	}
	id := fmt.Sprintf("%x%04x", os.Getpid()&0xffff, rand.IntN(1<<16))
	l := &Link{ip: ip, NS: [2]string{o.Prefix + "a" + id, o.Prefix + "b" + id}}
	subnet := fmt.Sprintf("10.%d.%d", 200+rand.IntN(50), rand.IntN(250))
	l.Addr = [2]netip.Addr{netip.MustParseAddr(subnet + ".1"), netip.MustParseAddr(subnet + ".2")}
	l.imp.Store(&Impairment{})
	for _, ns := range l.NS {
		if err := addNamespace(l.ip, ns); err != nil {
			l.Close()
			return nil, err
		}
	}
	if err := l.veth(o.Prefix + id); err != nil {
		l.Close()
		return nil, err
	}
	if !o.Impairable {
		return l, nil
	}
	if !o.NoNetem && l.tryNetem() {
		return l, nil
	}
	// No netem: replace the veth pair by the user-space TUN link.
	for i := range 2 {
		l.run("-n", l.NS[i], "link", "del", l.dev[i])
	}
	if err := l.tunLink(o.Prefix + id); err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

func (l *Link) run(args ...string) error {
	if out, err := exec.Command(l.ip, args...).CombinedOutput(); err != nil {
		return fmt.Errorf("netns: ip %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

func (l *Link) addresses() error {
	for i := range 2 {
		peer := l.Addr[1-i].String()
		if err := l.run("-n", l.NS[i], "addr", "add", l.Addr[i].String()+"/32", "peer", peer+"/32", "dev", l.dev[i]); err != nil {
			return err
		}
		if err := l.run("-n", l.NS[i], "link", "set", l.dev[i], "up"); err != nil {
			return err
		}
	}
	return nil
}

func (l *Link) veth(id string) error {
	l.dev = [2]string{"gv" + id + "a", "gv" + id + "b"}
	for i := range l.dev {
		l.dev[i] = clip(l.dev[i])
	}
	if err := l.run("link", "add", l.dev[0], "type", "veth", "peer", "name", l.dev[1]); err != nil {
		return err
	}
	for i := range 2 {
		if err := l.run("link", "set", l.dev[i], "netns", l.NS[i]); err != nil {
			l.run("link", "del", l.dev[0])
			return err
		}
	}
	l.mode = "veth"
	return l.addresses()
}

// clip keeps a device name within IFNAMSIZ−1 characters.
func clip(s string) string {
	if len(s) > unix.IFNAMSIZ-1 {
		return s[len(s)-(unix.IFNAMSIZ-1):]
	}
	return s
}

// tryNetem adds an empty netem qdisc on both ends; false if the kernel
// (or tc) cannot.
func (l *Link) tryNetem() bool {
	tc, err := exec.LookPath("tc")
	if err != nil {
		return false
	}
	for i := range 2 {
		if exec.Command(tc, "-n", l.NS[i], "qdisc", "add", "dev", l.dev[i], "root", "netem", "loss", "0%").Run() != nil {
			return false
		}
	}
	l.mode = "netem"
	return true
}

// tunLink makes a TUN device for each namespace and carries packets
// between them.
func (l *Link) tunLink(id string) error {
	l.dev = [2]string{clip("gt" + id + "a"), clip("gt" + id + "b")}
	for i := range 2 {
		f, err := openTUN(l.dev[i])
		if err != nil {
			return err
		}
		l.tun[i] = f
		if err := l.run("link", "set", l.dev[i], "netns", l.NS[i]); err != nil {
			return err
		}
	}
	l.mode = "tun"
	if err := l.addresses(); err != nil {
		return err
	}
	for i := range 2 {
		l.wg.Add(1)
		go l.forward(l.tun[i], l.tun[1-i])
	}
	return nil
}

func openTUN(name string) (*os.File, error) { return openDevice(name, unix.IFF_TUN, "tun") }

// openDevice opens a TUN or TAP device (kind IFF_TUN or IFF_TAP, named
// kind in errors) without packet information.
func openDevice(name string, kind uint16, what string) (*os.File, error) {
	fd, err := unix.Open("/dev/net/tun", unix.O_RDWR|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("%w: /dev/net/tun: %w", ErrPrerequisite, err)
	}
	ifr, err := unix.NewIfreq(name)
	if err != nil {
		unix.Close(fd)
		return nil, err
	}
	ifr.SetUint16(kind | unix.IFF_NO_PI)
	if err := unix.IoctlIfreq(fd, unix.TUNSETIFF, ifr); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("netns: TUNSETIFF (%s) %s: %w", what, name, err)
	}
	// Non-blocking: the Go runtime polls it, so Close ends a pending Read.
	return os.NewFile(uintptr(fd), what+":"+name), nil
}

// forward carries packets read from one TUN device to the other, applying
// the impairment in force.
func (l *Link) forward(from, to *os.File) {
	defer l.wg.Done()
	buf := make([]byte, 1<<16)
	for {
		n, err := from.Read(buf)
		if err != nil {
			return
		}
		imp := l.imp.Load()
		if imp.Loss > 0 && rand.Float64() < imp.Loss {
			continue
		}
		copies := 1
		if imp.Duplicate > 0 && rand.Float64() < imp.Duplicate {
			copies = 2
		}
		for range copies {
			if imp.Delay > 0 && !(imp.Reorder > 0 && rand.Float64() < imp.Reorder) {
				p := append([]byte(nil), buf[:n]...)
				time.AfterFunc(imp.Delay, func() { to.Write(p) })
				continue
			}
			to.Write(buf[:n])
		}
	}
}

// Set impairs the link in both directions (the zero Impairment restores
// it). A veth link without netem cannot be impaired.
func (l *Link) Set(i Impairment) error {
	switch l.mode {
	case "tun":
		l.imp.Store(&i)
		return nil
	case "netem":
		tc, err := exec.LookPath("tc")
		if err != nil {
			return err
		}
		for k := range 2 {
			args := append([]string{"-n", l.NS[k], "qdisc", "change", "dev", l.dev[k], "root", "netem"}, i.netemArgs()...)
			if out, err := exec.Command(tc, args...).CombinedOutput(); err != nil {
				return fmt.Errorf("netns: tc %s: %v: %s", strings.Join(args, " "), err, out)
			}
		}
		return nil
	}
	return errors.New("netns: a plain veth link cannot be impaired (Options.Impairable)")
}

// Command runs name with args inside namespace k (0 or 1).
func (l *Link) Command(k int, name string, args ...string) *exec.Cmd {
	return exec.Command(l.ip, append([]string{"netns", "exec", l.NS[k], name}, args...)...)
}

// Wrap is the command prefix that runs a program inside namespace k.
func (l *Link) Wrap(k int) []string { return []string{l.ip, "netns", "exec", l.NS[k]} }

// Close stops the TUN link's goroutines and removes the namespaces (and
// with them the devices).
func (l *Link) Close() error {
	for _, f := range l.tun {
		if f != nil {
			f.Close()
		}
	}
	l.wg.Wait()
	var errs []error
	for _, ns := range l.NS {
		if err := exec.Command(l.ip, "netns", "del", ns).Run(); err != nil {
			errs = append(errs, fmt.Errorf("netns: del %s: %w", ns, err))
		}
	}
	return errors.Join(errs...)
}

// Do runs fn on an OS thread inside namespace k: sockets fn opens belong to
// that namespace for their whole life, wherever they are used later.
func (l *Link) Do(k int, fn func() error) error {
	runtime.LockOSThread()
	orig, err := os.Open("/proc/thread-self/ns/net")
	if err != nil {
		runtime.UnlockOSThread()
		return err
	}
	defer orig.Close()
	target, err := os.Open("/var/run/netns/" + l.NS[k])
	if err != nil {
		runtime.UnlockOSThread()
		return err
	}
	defer target.Close()
	if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("netns: setns %s: %w", l.NS[k], err)
	}
	ferr := fn()
	if err := unix.Setns(int(orig.Fd()), unix.CLONE_NEWNET); err != nil {
		// The thread stays in the namespace: it must not run anything
		// else, so it ends with this goroutine (left locked).
		return errors.Join(ferr, fmt.Errorf("netns: back from %s: %w", l.NS[k], err))
	}
	runtime.UnlockOSThread()
	return ferr
}
