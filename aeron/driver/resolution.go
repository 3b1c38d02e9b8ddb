package driver

import (
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/goblin-kv/goblin/aeron"
	"github.com/goblin-kv/goblin/internal/shm"
)

// Name resolution and re-resolution. The default resolver looks a host up
// in DNS and /etc/hosts. The csv_table resolver (the C driver's test
// resolver, aeron_csv_table_name_resolver) first maps a name through a
// table given as NameResolverInitArgs, rows name,initialHost,reResolutionHost
// separated by '|'; each row has a counter (type 2001, key the name, label
// NameEntry{...}) whose value a test sets to choose: 0 the initial host, 1
// the re-resolution host, −1 "unable to resolve". A name not in the table
// goes to DNS.
//
// Re-resolution (DriverConductor.onReResolveEndpoint, onReResolveControl):
// every ReResolutionCheckInterval the conductor resolves again the
// endpoint of a unicast send channel that has heard no status message for
// destinationTimeoutNs, the endpoint of a manual MDC destination silent
// that long, and the control address of a receive channel (and of an MDS
// destination) with control=; a changed address replaces the old one (a
// unicast send socket is connected again). A name that no longer resolves
// is logged and the old address kept.

// csvEntryCounterTypeID is the csv_table row counter's type
// (AERON_NAME_RESOLVER_CSV_ENTRY_COUNTER_TYPE_ID).
const csvEntryCounterTypeID = 2001

// csv_table row operations, the value of a row's counter.
const (
	csvUseInitialHost = 0
	csvUseReHost      = 1
	csvDisable        = -1
)

type csvNameRow struct {
	name, initialHost, reHost string
	counterID                 int32
}

// initNameResolver sets up the csv_table resolver's rows and counters
// (aeron_csv_table_name_resolver_init: the rows in reverse order).
func (c *conductor) initNameResolver() error {
	if c.opts.NameResolver == "driver" && c.opts.ResolverInterface == "" {
		return fmt.Errorf("aeron driver: %s=driver needs %s", EnvName("aeron.name.resolver.supplier"),
			EnvName("aeron.driver.resolver.interface"))
	}
	if c.opts.NameResolver != "csv_table" {
		if c.opts.NameResolverInitArgs != "" && c.opts.NameResolver != "" && c.opts.NameResolver != "default" && c.opts.NameResolver != "driver" {
			return fmt.Errorf("aeron driver: unknown name resolver %q", c.opts.NameResolver)
		}
		return nil
	}
	if c.opts.NameResolverInitArgs == "" {
		return fmt.Errorf("aeron driver: No CSV configuration, please specify: %s", EnvName("aeron.name.resolver.init.args"))
	}
	rows := strings.Split(c.opts.NameResolverInitArgs, "|")
	for i := len(rows) - 1; i >= 0; i-- {
		cols := strings.Split(rows[i], ",")
		if len(cols) != 3 {
			continue // as C: a row without three columns is skipped
		}
		r := csvNameRow{name: cols[0], initialHost: cols[1], reHost: cols[2]}
		key := binary.LittleEndian.AppendUint32(nil, uint32(len(r.name)))
		key = append(key, r.name...)
		label := fmt.Sprintf("NameEntry{name='%s', initialResolutionHost='%s', reResolutionHost='%s'}",
			r.name, r.initialHost, r.reHost)
		id, err := c.counters.Allocate(csvEntryCounterTypeID, key, []byte(label), epochMillis())
		if err != nil {
			return fmt.Errorf("aeron driver: Failed to allocate csv resolver counter: %w", err)
		}
		r.counterID = id
		c.csvRows = append(c.csvRows, r)
	}
	return nil
}

// resolverNameLabel is the driver's resolver name as counter 25's label
// shows it ("null" when unset, as Java).
func (c *conductor) resolverNameLabel() string {
	if c.opts.ResolverName == "" {
		return "null"
	}
	return c.opts.ResolverName
}

// resolverName is the resolver's name in unresolved-host errors.
func (c *conductor) resolverName() string {
	if c.nameResolver != nil {
		return "DriverNameResolver"
	}
	if c.opts.NameResolver == "csv_table" {
		return "CsvTableNameResolver"
	}
	return "DefaultNameResolver"
}

// mapName is the host the resolver asks DNS for in place of name, or
// false when a csv_table row forces the name not to resolve.
func (c *conductor) mapName(name string) (string, bool) {
	for _, r := range c.csvRows {
		if r.name != name {
			continue
		}
		// The row's counter: written by a test (a client), read here
		// with acquire.
		switch shm.LoadInt64Acquire(c.values, c.positionOf(r.counterID).off) {
		case csvDisable:
			return "", false
		case csvUseInitialHost:
			return r.initialHost, true
		case csvUseReHost:
			return r.reHost, true
		}
	}
	return name, true
}

// resolveAddrParam parses and resolves an endpoint or control value:
// host:port or [ipv6]:port (SocketAddressParser). Host names are looked up
// synchronously (a deliberate difference: the Java driver resolves them on
// an executor).
func (c *conductor) resolveAddrParam(u *channelURI, name string) (netip.AddrPort, bool, error) {
	v, ok := u.Get(name)
	if !ok {
		return netip.AddrPort{}, false, nil
	}
	a, err := c.resolveHostPort(name, v)
	if err != nil {
		return netip.AddrPort{}, true, err
	}
	return a, true, nil
}

// resolveHostPort resolves host:port through the driver's name resolver.
func (c *conductor) resolveHostPort(name, v string) (netip.AddrPort, error) {
	host, portStr, err := net.SplitHostPort(v)
	if err != nil {
		return netip.AddrPort{}, udpChannelError(illegalArgument, "invalid %s: %s", name, v)
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil {
		return netip.AddrPort{}, udpChannelError(illegalArgument, "invalid port in %s: %s", name, v)
	}
	start := time.Now()
	var ip netip.Addr
	ok := false
	if c.nameResolver != nil {
		ip, ok = c.nameResolver.lookup(host)
	}
	if !ok {
		var mapped string
		mapped, ok = c.mapName(host)
		if ok {
			ip, err = resolveHost(mapped)
		}
	}
	c.trackNameResolution(time.Since(start))
	if !ok || err != nil {
		return netip.AddrPort{}, protocolError(aeron.ErrorCodeUnknownHost, "unresolved - %s=%s, name-resolver=%s",
			name, v, c.resolverName())
	}
	return netip.AddrPortFrom(ip, uint16(port)), nil
}

// trackNameResolution records one resolution's time as the C driver's
// aeron_name_resolver_resolve_host_and_port does: the longest in counter 32,
// and counter 33 counts those over NameResolverThreshold.
func (c *conductor) trackNameResolution(d time.Duration) {
	ns := int64(d)
	if ns > c.counters.Value(sysNameResolverMaxTime) {
		c.counters.SetValue(sysNameResolverMaxTime, ns)
	}
	if d > c.opts.NameResolverThreshold {
		c.counters.AddValue(sysNameResolverThresholdExceeded, 1)
	}
}

// checkReResolution re-resolves what has gone silent, at most every
// ReResolutionCheckInterval (Sender/Receiver.checkForReResolution).
func (c *conductor) checkReResolution(nowNs int64) {
	if c.reResolutionDeadlineNs-nowNs > 0 {
		return
	}
	c.reResolutionDeadlineNs = nowNs + int64(c.opts.ReResolutionCheckInterval)
	for _, e := range c.sendEndpoints {
		c.reResolveSendEndpoint(e, nowNs)
	}
	for _, e := range c.receiveEndpoints {
		c.reResolveReceiveControl(e, nowNs)
	}
}

// reResolveSendEndpoint: a unicast channel's endpoint when none of its
// publications heard a status message for destinationTimeoutNs (and it
// was not resolved again within that time); a manual MDC channel's
// destinations silent that long.
func (c *conductor) reResolveSendEndpoint(e *sendEndpoint, nowNs int64) {
	ch := e.ch
	if ch.mode == controlManual {
		for i := range e.destinations {
			d := &e.destinations[i]
			if d.lastActivityNs+destinationTimeoutNs-nowNs >= 0 {
				continue
			}
			d.lastActivityNs = nowNs
			u, err := parseURI(d.channel)
			if err != nil {
				continue
			}
			if v, ok := u.Get(aeron.ParamEndpoint); ok {
				if a, err := c.resolveHostPort(aeron.ParamEndpoint, v); err != nil {
					c.recordError(reResolveFailed(aeron.ParamEndpoint, v, err))
				} else if a != d.addr {
					d.addr = a
					c.counters.AddValue(sysResolutionChanges, 1) // Sender.onResolutionChange
				}
			}
		}
		return
	}
	if ch.multicast || !ch.hasExplicitEndpoint || ch.mode == controlResponse || ch.isMultiDestination() {
		return
	}
	for _, p := range e.pubs {
		if p.timeOfLastSMNs+destinationTimeoutNs-nowNs >= 0 {
			return
		}
	}
	if ch.resolvedNs+destinationTimeoutNs-nowNs >= 0 {
		return
	}
	ch.resolvedNs = nowNs
	v, _ := ch.uri.Get(aeron.ParamEndpoint)
	a, err := c.resolveHostPort(aeron.ParamEndpoint, v)
	if err != nil {
		c.recordError(reResolveFailed(aeron.ParamEndpoint, v, err))
		return
	}
	if a == ch.remoteData {
		return
	}
	if err := e.sock.Reconnect(a); err != nil {
		c.recordError(fmt.Errorf("aeron driver: re-resolved endpoint=%s to %s: %w", v, a, err))
		return
	}
	ch.remoteData, ch.remoteControl = a, a
	c.counters.AddValue(sysResolutionChanges, 1) // Sender.onResolutionChange
}

// reResolveFailed is the error a failed re-resolution logs: what the C
// driver's resolver says ("Unable to resolve host=(…)", which Aeron's
// NameReResolutionTest expects and ignores) and what Java's says ("could
// not re-resolve: endpoint=…").
func reResolveFailed(name, v string, err error) error {
	host, _, splitErr := net.SplitHostPort(v)
	if splitErr != nil {
		host = v
	}
	return fmt.Errorf("could not re-resolve: %s=%s: Unable to resolve host=(%s): %w", name, v, host, err)
}

// reResolveReceiveControl: a receive channel's (or MDS destination's)
// control address, re-resolved when nothing came through the channel
// for destinationAddressTimeoutNs (and again that long after); the
// periodic setup-eliciting status messages go to the new address.
func (c *conductor) reResolveReceiveControl(e *receiveEndpoint, nowNs int64) {
	if e.mds == nil {
		if e.ch.hasExplicitControl {
			c.reResolveControl(e, e.ch, 0, nowNs)
		}
		return
	}
	for ti, d := range e.mds.dests {
		if d != nil && d.ch.hasExplicitControl {
			c.reResolveControl(e, d.ch, ti, nowNs)
		}
	}
}

func (c *conductor) reResolveControl(e *receiveEndpoint, ch *udpChannel, ti int, nowNs int64) {
	if ch.resolvedNs == 0 {
		ch.resolvedNs = nowNs
	}
	if ch.resolvedNs+destinationAddressTimeoutNs-nowNs >= 0 {
		return
	}
	ch.resolvedNs = nowNs
	v, _ := ch.uri.Get(aeron.ParamControl)
	a, err := c.resolveHostPort(aeron.ParamControl, v)
	if err != nil {
		c.recordError(reResolveFailed(aeron.ParamControl, v, err))
		return
	}
	if a == ch.localControl {
		return
	}
	ch.localControl, ch.localData = a, a
	for i := range c.receiver.pendingSetups {
		if p := &c.receiver.pendingSetups[i]; p.ep == e && p.ti == ti && p.periodic {
			p.control = a
			// Receiver.onResolutionChange counts each periodic setup it redirects.
			c.counters.AddValue(sysResolutionChanges, 1)
		}
	}
}
