package driver

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"

	"github.com/goblin-kv/goblin/aeron/internal/udp"
	"github.com/goblin-kv/goblin/aeron/internal/wire"
)

// The driver name resolver (aeron.driver.resolver.name, .interface,
// .bootstrap.neighbor; the Java driver's DriverNameResolver): drivers that
// know each other by name over UDP. Each sends, every self-resolution
// interval, a RES frame naming itself (its name, the address and port of
// its resolver socket, flag SELF) to its neighbors and to every bootstrap
// neighbor (Aeron 1.51: all of the list, at most 20); every
// neighbor-resolution interval it
// sends its whole cache to its neighbors. A driver that hears an entry
// caches name → address (forgotten after ResolverNeighborTimeout without
// news) and adds the sender to its neighbors (forgotten likewise). Channels
// whose endpoint or control names a cached name resolve to its address;
// the driver's own name resolves to its resolver address; other names go
// to the delegate resolver (DNS, or the csv_table).
//
// Counters as the Java driver's: "Resolver neighbors: bound <addr:port>"
// (type 15), "Resolver cache entries: name=<name>" (type 16) and one per
// bootstrap neighbor, "Bootstrap neighbor: name=<host:port>
// resolved=<addr:port>" (type 21, key the neighbor's int32 index in the
// list, value 1 while it is a neighbor, re-resolved every bootstrap
// interval while it is not). Only IPv4 entries are sent (Java's preferIPv6 is
// fixed false); IPv6 entries heard are cached but never chosen, as Java.

// RES frame entry layout (ResolutionEntryFlyweight), from the entry start;
// entries follow the 8-byte frame header, each padded to 8 bytes.
const (
	resTypeIPv4       = 0x01
	resTypeIPv6       = 0x02
	resFlagSelf       = 0x80
	resTypeOffset     = 0
	resFlagsOffset    = 1
	resPortOffset     = 2
	resAgeOffset      = 4
	resAddressOffset  = 8
	resMaxNameLength  = 512
	resWorkIntervalMs = 10 // DriverNameResolver.WORK_INTERVAL_MS

	resolverNeighborsCounterTypeID    = 15 // AeronCounters.NAME_RESOLVER_NEIGHBORS_COUNTER_TYPE_ID
	resolverCacheEntriesCounterTypeID = 16 // AeronCounters.NAME_RESOLVER_CACHE_ENTRIES_COUNTER_TYPE_ID
	resolverBootstrapCounterTypeID    = 21 // AeronCounters.NAME_RESOLVER_BOOTSTRAP_NEIGHBOR_COUNTER_TYPE_ID
	resolverNeighborsLabel            = "Resolver neighbors"
	resMaxBootstrapNeighbors          = 20 // DriverNameResolver.MAX_BOOTSTRAP_NEIGHBORS
)

// resEntry is one resolution entry of a RES frame.
type resEntry struct {
	resType byte
	flags   byte
	port    uint16
	ageMs   int32
	addr    netip.Addr
	name    []byte // aliases the frame when decoded
}

func resAddressLength(resType byte) (int, bool) {
	switch resType {
	case resTypeIPv4:
		return 4, true
	case resTypeIPv6:
		return 16, true
	}
	return 0, false
}

// resEntryLength is the length of an entry, padded to 8 bytes
// (ResolutionEntryFlyweight.entryLengthRequired).
func resEntryLength(resType byte, nameLength int) int {
	n, _ := resAddressLength(resType)
	return (resAddressOffset + n + 2 + nameLength + 7) &^ 7
}

// appendResHeader starts a RES frame in p[:0]; finishResFrame sets its length.
func appendResHeader(p []byte) []byte {
	p = append(p[:0], 0, 0, 0, 0, wire.CurrentVersion, 0, 0, 0)
	binary.LittleEndian.PutUint16(p[6:], wire.TypeRes)
	return p
}

func finishResFrame(p []byte) { binary.LittleEndian.PutUint32(p, uint32(len(p))) }

// appendResEntry appends e to a frame begun with appendResHeader.
func appendResEntry(p []byte, e resEntry) []byte {
	start := len(p)
	n := resEntryLength(e.resType, len(e.name))
	for range n {
		p = append(p, 0)
	}
	q := p[start:]
	q[resTypeOffset] = e.resType
	q[resFlagsOffset] = e.flags
	binary.LittleEndian.PutUint16(q[resPortOffset:], e.port)
	binary.LittleEndian.PutUint32(q[resAgeOffset:], uint32(e.ageMs))
	var at int
	if e.resType == resTypeIPv4 {
		a := e.addr.As4()
		at = resAddressOffset + copy(q[resAddressOffset:], a[:])
	} else {
		a := e.addr.As16()
		at = resAddressOffset + copy(q[resAddressOffset:], a[:])
	}
	binary.LittleEndian.PutUint16(q[at:], uint16(len(e.name)))
	copy(q[at+2:], e.name)
	return p
}

// decodeResEntry reads the entry at the start of p and its padded length;
// false when p is shorter than the entry says or its type is unknown.
func decodeResEntry(p []byte) (resEntry, int, bool) {
	if len(p) < resAddressOffset {
		return resEntry{}, 0, false
	}
	e := resEntry{resType: p[resTypeOffset], flags: p[resFlagsOffset],
		port: binary.LittleEndian.Uint16(p[resPortOffset:]), ageMs: int32(binary.LittleEndian.Uint32(p[resAgeOffset:]))}
	alen, ok := resAddressLength(e.resType)
	if !ok || len(p) < resAddressOffset+alen+2 {
		return resEntry{}, 0, false
	}
	e.addr, _ = netip.AddrFromSlice(p[resAddressOffset : resAddressOffset+alen])
	at := resAddressOffset + alen
	nameLength := int(int16(binary.LittleEndian.Uint16(p[at:])))
	n := resEntryLength(e.resType, nameLength)
	if nameLength < 0 || nameLength > resMaxNameLength || len(p) < n {
		return resEntry{}, 0, false
	}
	e.name = p[at+2 : at+2+nameLength]
	return e, n, true
}

type resolverNeighbor struct {
	addr           netip.AddrPort
	lastActivityMs int64
}

type resolverCacheEntry struct {
	name           string
	nameBytes      []byte // name, as sent (no conversion per send)
	resType        byte
	addr           netip.Addr
	port           uint16
	lastActivityMs int64
	deadlineMs     int64
}

// driverNameResolver is the resolver's state; the conductor owns it.
type driverNameResolver struct {
	c            *conductor
	name         string
	nameBytes    []byte
	sock         *udp.Socket
	batch        *udp.RecvBatch
	local        netip.AddrPort // the bound resolver address (the interface's, port as bound)
	bootstrap    []string
	bootAddrs    []netip.AddrPort // per bootstrap neighbor; invalid while unresolved
	bootCounters []int32          // per bootstrap neighbor (type 21)
	neighbors    []resolverNeighbor
	cache        []resolverCacheEntry
	frame        []byte

	neighborsCounter, cacheCounter int32

	workDeadlineMs, selfDeadlineMs, neighborDeadlineMs, bootDeadlineMs int64
}

// parseResolverInterface reads aeron.driver.resolver.interface:
// host:port[/prefix] (InterfaceSearchAddress; the address is used as
// given).
func parseResolverInterface(v string) (netip.AddrPort, error) {
	if i := strings.LastIndexByte(v, '/'); i >= 0 {
		v = v[:i]
	}
	a, err := dnsAddrPort(v)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("%s: %w", EnvName("aeron.driver.resolver.interface"), err)
	}
	return a, nil
}

// dnsAddrPort resolves host:port through DNS (or an address as given),
// for the resolver's own interface and its bootstrap neighbors.
func dnsAddrPort(v string) (netip.AddrPort, error) {
	host, port, err := net.SplitHostPort(v)
	if err != nil {
		return netip.AddrPort{}, err
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("invalid port %q", port)
	}
	ip, err := resolveHost(host)
	if err != nil {
		return netip.AddrPort{}, err
	}
	return netip.AddrPortFrom(ip, uint16(p)), nil
}

// initDriverNameResolver opens the resolver when ResolverInterface is set
// (DriverConductor: a DriverNameResolver in place of the delegate).
func (c *conductor) initDriverNameResolver(nowMs int64) error {
	if c.opts.ResolverInterface == "" {
		return nil
	}
	if c.opts.ResolverName == "" {
		return errors.New("aeron driver: `resolverName` is required when `resolverInterface` is set (" +
			EnvName("aeron.driver.resolver.name") + ")")
	}
	if len(c.opts.ResolverName) > resMaxNameLength {
		return fmt.Errorf("aeron driver: %s longer than %d bytes", EnvName("aeron.driver.resolver.name"), resMaxNameLength)
	}
	bind, err := parseResolverInterface(c.opts.ResolverInterface)
	if err != nil {
		return fmt.Errorf("aeron driver: %w", err)
	}
	r := &driverNameResolver{c: c, name: c.opts.ResolverName, nameBytes: []byte(c.opts.ResolverName),
		frame: make([]byte, 0, c.opts.MTU)}
	if c.opts.ResolverBootstrapNeighbor != "" {
		r.bootstrap = strings.Split(c.opts.ResolverBootstrapNeighbor, ",")
		if len(r.bootstrap) > resMaxBootstrapNeighbors {
			return fmt.Errorf("aeron driver: %s: Resolver Bootstrap Neighbor list too large, can have a maximum of %d",
				EnvName("aeron.driver.resolver.bootstrap.neighbor"), resMaxBootstrapNeighbors)
		}
		r.bootAddrs = make([]netip.AddrPort, len(r.bootstrap))
		r.bootCounters = make([]int32, len(r.bootstrap))
	}
	r.sock, err = c.receiverPorts.open(udp.Options{Bind: bind})
	if err != nil {
		return fmt.Errorf("aeron driver: resolver interface %s: %w", bind, err)
	}
	r.local = r.sock.LocalAddr()
	r.batch = udp.NewRecvBatch(1, maxUDPPayloadLength)
	r.bootDeadlineMs = nowMs + int64(c.opts.ResolverBootstrapInterval/1e6)
	r.neighborDeadlineMs = nowMs + int64(c.opts.ResolverNeighborResolutionInterval/1e6)
	if r.neighborsCounter, err = c.counters.Allocate(resolverNeighborsCounterTypeID, nil,
		[]byte(resolverNeighborsLabel+r.boundLabel()), nowMs); err != nil {
		r.sock.Close()
		return fmt.Errorf("aeron driver: resolver counters: %w", err)
	}
	if r.cacheCounter, err = c.counters.Allocate(resolverCacheEntriesCounterTypeID, nil,
		[]byte("Resolver cache entries: name="+r.name), nowMs); err != nil {
		r.sock.Close()
		return fmt.Errorf("aeron driver: resolver counters: %w", err)
	}
	for i, b := range r.bootstrap {
		key := binary.LittleEndian.AppendUint32(nil, uint32(i))
		if r.bootCounters[i], err = c.counters.Allocate(resolverBootstrapCounterTypeID, key,
			[]byte(bootstrapLabel(b, netip.AddrPort{})), nowMs); err != nil {
			r.sock.Close()
			return fmt.Errorf("aeron driver: resolver counters: %w", err)
		}
	}
	// DriverNameResolver.onStart: each is resolved on the first duty
	// cycle (the error log is open by then); one that does not resolve is
	// an error in the log and tried again every bootstrap interval.
	r.bootDeadlineMs = nowMs
	c.nameResolver = r
	return nil
}

// boundLabel is the neighbors counter label's tail (buildNeighborsCounterLabel).
func (r *driverNameResolver) boundLabel() string { return ": bound " + r.local.String() }

// bootstrapLabel is a bootstrap neighbor counter's label
// (buildBootstrapNeighborCounterLabel): resolved= is empty until it is.
func bootstrapLabel(name string, a netip.AddrPort) string {
	s := "Bootstrap neighbor: name=" + name + " resolved="
	if a.IsValid() {
		s += a.String()
	}
	return s
}

// resolveBootstrap resolves bootstrap neighbor i through DNS (or takes an
// address as given), records a failure in the error log, and writes the
// outcome into its counter's label (resolveBootstrapNeighbor).
func (r *driverNameResolver) resolveBootstrap(i int) {
	b := r.bootstrap[i]
	a, err := dnsAddrPort(strings.TrimSpace(b))
	if err != nil {
		if _, _, serr := net.SplitHostPort(strings.TrimSpace(b)); serr != nil {
			r.c.recordError(fmt.Errorf("aeron driver: name resolver bootstrap neighbor: invalid format: %s", b))
		} else {
			r.c.recordError(fmt.Errorf("aeron driver: name resolver bootstrap neighbor: unresolved - endpoint=%s: unknown host: %w", b, err))
		}
		a = netip.AddrPort{}
	}
	r.bootAddrs[i] = a
	r.c.counters.SetLabel(r.bootCounters[i], []byte(bootstrapLabel(b, a)))
}

func (r *driverNameResolver) close() {
	if r.sock != nil {
		r.sock.Close()
		r.sock = nil
	}
}

// lookup is the cached address of name (IPv4 entries only, as Java), the
// resolver's own address for its own name, or false: ask the delegate.
func (r *driverNameResolver) lookup(name string) (netip.Addr, bool) {
	for i := range r.cache {
		if e := &r.cache[i]; e.resType == resTypeIPv4 && e.name == name {
			return e.addr, true
		}
	}
	if name == r.name {
		return r.local.Addr(), true
	}
	return netip.Addr{}, false
}

// doWork is the resolver's part of the conductor's duty cycle, every
// resWorkIntervalMs (DriverNameResolver.doWork).
func (r *driverNameResolver) doWork(nowMs int64) int {
	if r.workDeadlineMs-nowMs >= 0 {
		return 0
	}
	r.workDeadlineMs = nowMs + resWorkIntervalMs
	work := r.poll(nowMs)
	work += r.timeoutCache(nowMs)
	work += r.timeoutNeighbors(nowMs)
	if nowMs > r.selfDeadlineMs {
		r.sendSelfResolutions(nowMs)
	}
	if nowMs > r.neighborDeadlineMs {
		r.sendNeighborResolutions(nowMs)
	}
	if len(r.bootstrap) > 0 && r.bootDeadlineMs <= nowMs {
		r.reresolveBootstraps()
		r.bootDeadlineMs = nowMs + int64(r.c.opts.ResolverBootstrapInterval/1e6)
	}
	return work
}

func (r *driverNameResolver) poll(nowMs int64) int {
	n, err := r.batch.Recv(r.sock)
	if err != nil {
		r.c.recordError(fmt.Errorf("aeron driver: name resolver receive: %w", err))
		return 0
	}
	if n == 0 {
		return 0
	}
	p := r.batch.Datagram(0)
	if r.batch.Truncated(0) || len(p) < wire.MinHeaderLength || p[4] != wire.CurrentVersion {
		r.c.counters.AddValue(sysInvalidPackets, 1)
		return 0
	}
	return r.onFrame(p, r.batch.From(0), nowMs)
}

// onFrame reads a RES frame's entries (DriverNameResolver.onFrame).
func (r *driverNameResolver) onFrame(p []byte, from netip.AddrPort, nowMs int64) int {
	if binary.LittleEndian.Uint16(p[6:]) != wire.TypeRes {
		return 0
	}
	for off := wire.MinHeaderLength; off < len(p); {
		e, n, ok := decodeResEntry(p[off:])
		if !ok {
			r.c.counters.AddValue(sysInvalidPackets, 1)
			return 0
		}
		r.onEntry(e, from, nowMs)
		off += n
	}
	return len(p)
}

func (r *driverNameResolver) onEntry(e resEntry, from netip.AddrPort, nowMs int64) {
	isSelf := e.flags == resFlagSelf
	addr := e.addr
	if isSelf && addr.IsUnspecified() {
		addr = from.Addr().Unmap()
	}
	lastActivity := nowMs - int64(e.ageMs)
	if e.port == r.local.Port() && string(e.name) == r.name {
		return // our own entry, back from a neighbor
	}
	r.addOrUpdate(e.name, e.resType, addr, e.port, lastActivity)
	at := netip.AddrPortFrom(addr, e.port)
	for i := range r.neighbors {
		if r.neighbors[i].addr == at {
			if isSelf {
				r.neighbors[i].lastActivityMs = lastActivity
			}
			return
		}
	}
	r.neighbors = append(r.neighbors, resolverNeighbor{addr: at, lastActivityMs: lastActivity})
	r.c.counters.SetValue(r.neighborsCounter, int64(len(r.neighbors)))
}

// addOrUpdate is DriverNameResolverCache.addOrUpdateEntry.
func (r *driverNameResolver) addOrUpdate(name []byte, resType byte, addr netip.Addr, port uint16, nowMs int64) {
	timeout := int64(r.c.opts.ResolverNeighborTimeout / 1e6)
	for i := range r.cache {
		if e := &r.cache[i]; e.resType == resType && e.name == string(name) {
			e.lastActivityMs, e.deadlineMs = nowMs, nowMs+timeout
			e.addr, e.port = addr, port
			return
		}
	}
	r.cache = append(r.cache, resolverCacheEntry{name: string(name), nameBytes: bytes.Clone(name), resType: resType,
		addr: addr, port: port, lastActivityMs: nowMs, deadlineMs: nowMs + timeout})
	r.c.counters.SetValue(r.cacheCounter, int64(len(r.cache)))
}

func (r *driverNameResolver) timeoutCache(nowMs int64) int {
	work := 0
	for i := len(r.cache) - 1; i >= 0; i-- {
		if r.cache[i].deadlineMs-nowMs < 0 {
			last := len(r.cache) - 1
			r.cache[i] = r.cache[last]
			r.cache = r.cache[:last]
			r.c.counters.SetValue(r.cacheCounter, int64(len(r.cache)))
			work++
		}
	}
	return work
}

func (r *driverNameResolver) timeoutNeighbors(nowMs int64) int {
	work := 0
	timeout := int64(r.c.opts.ResolverNeighborTimeout / 1e6)
	for i := len(r.neighbors) - 1; i >= 0; i-- {
		if nowMs > r.neighbors[i].lastActivityMs+timeout {
			last := len(r.neighbors) - 1
			r.neighbors[i] = r.neighbors[last]
			r.neighbors = r.neighbors[:last]
			work++
		}
	}
	if r.c.counters.Value(r.neighborsCounter) != int64(len(r.neighbors)) {
		r.c.counters.SetValue(r.neighborsCounter, int64(len(r.neighbors)))
	}
	return work
}

// sendSelfResolutions sends our own entry to every bootstrap neighbor and
// to every other neighbor, and sets each bootstrap neighbor's counter to 1
// while it is a neighbor (DriverNameResolver.sendSelfResolutions).
func (r *driverNameResolver) sendSelfResolutions(nowMs int64) {
	if len(r.bootstrap) == 0 && len(r.neighbors) == 0 {
		return
	}
	p := appendResHeader(r.frame)
	addr := r.local.Addr()
	if !addr.Is4() {
		addr = netip.IPv4Unspecified() // preferIPv6 is false: an IPv4 entry
	}
	p = appendResEntry(p, resEntry{resType: resTypeIPv4, flags: resFlagSelf, port: r.local.Port(), addr: addr,
		name: r.nameBytes})
	finishResFrame(p)
	r.frame = p[:0]
	for _, a := range r.bootAddrs {
		if a.IsValid() {
			r.sendTo(p, a)
		}
	}
	var connected uint32 // bit i: bootstrap neighbor i is a neighbor (at most 20)
	for _, n := range r.neighbors {
		if i := r.bootstrapIndex(n.addr); i >= 0 {
			connected |= 1 << i
		} else {
			r.sendTo(p, n.addr)
		}
	}
	for i, id := range r.bootCounters {
		r.c.counters.SetValue(id, int64(connected>>i&1))
	}
	r.selfDeadlineMs = nowMs + int64(r.c.opts.ResolverSelfResolutionInterval/1e6)
}

// bootstrapIndex is the index of the bootstrap neighbor resolved to a, or -1.
func (r *driverNameResolver) bootstrapIndex(a netip.AddrPort) int {
	for i, b := range r.bootAddrs {
		if b.IsValid() && b == a {
			return i
		}
	}
	return -1
}

// reresolveBootstraps resolves again each bootstrap neighbor that is not
// a neighbor now, every bootstrap interval (reresolveBootstrapNeighbors).
func (r *driverNameResolver) reresolveBootstraps() {
	for i, a := range r.bootAddrs {
		neighbor := false
		for _, n := range r.neighbors {
			if a.IsValid() && n.addr == a {
				neighbor = true
				break
			}
		}
		if !neighbor {
			r.resolveBootstrap(i)
		}
	}
}

// sendNeighborResolutions sends the cache, in frames of at most an MTU,
// to every neighbor (DriverNameResolver.sendNeighborResolutions).
func (r *driverNameResolver) sendNeighborResolutions(nowMs int64) {
	for i := 0; i < len(r.cache); {
		p := appendResHeader(r.frame)
		for ; i < len(r.cache); i++ {
			e := &r.cache[i]
			if len(p)+resEntryLength(e.resType, len(e.name)) > r.c.opts.MTU && len(p) > wire.MinHeaderLength {
				break
			}
			p = appendResEntry(p, resEntry{resType: e.resType, port: e.port, ageMs: int32(nowMs - e.lastActivityMs),
				addr: e.addr, name: e.nameBytes})
		}
		finishResFrame(p)
		r.frame = p[:0]
		for _, n := range r.neighbors {
			r.sendTo(p, n.addr)
		}
	}
	r.neighborDeadlineMs = nowMs + int64(r.c.opts.ResolverNeighborResolutionInterval/1e6)
}

func (r *driverNameResolver) sendTo(p []byte, to netip.AddrPort) {
	n, err := r.sock.SendTo(p, to)
	if err != nil {
		r.c.recordError(fmt.Errorf("aeron driver: name resolver send to %s: %w", to, err))
		return
	}
	if n < len(p) {
		r.c.counters.AddValue(sysShortSends, 1)
	}
}
