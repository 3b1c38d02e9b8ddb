package driver

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/goblin-kv/goblin/aeron"
	"github.com/goblin-kv/goblin/aeron/internal/udp"
)

// controlMode is a UDP channel's control-mode (ControlMode).
type controlMode uint8

const (
	controlNone controlMode = iota
	controlManual
	controlDynamic
	controlResponse
)

// Channel parameters of UDP channels besides those package aeron names.
const (
	paramTTL             = "ttl"
	paramNakDelay        = "nak-delay"
	paramGroupTag        = "gtag"
	paramFlowControl     = "fc"
	paramCongestion      = "cc"
	paramMediaRcvTsOff   = "media-rcv-ts-offset"
	paramChannelRcvTsOff = "channel-rcv-ts-offset"
	paramChannelSndTsOff = "channel-snd-ts-offset"
)

// udpChannel is a UDP channel URI resolved to addresses (UdpChannel.parse):
// where a send endpoint binds and sends, where a receive endpoint binds and
// sends its control messages, and the canonical form that decides which
// channels share an endpoint.
type udpChannel struct {
	uri *channelURI

	remoteData, localData       netip.AddrPort
	remoteControl, localControl netip.AddrPort
	hasExplicitEndpoint         bool
	hasExplicitControl          bool
	multicast                   bool
	ifaceAddr                   netip.Addr // multicast: the interface's address
	hasTTL                      bool
	ttl                         int
	mode                        controlMode
	canonical                   string
	hasTag                      bool
	tag                         int64
	sndbuf, rcvbuf, rcvWnd      int
	hasNakDelay                 bool
	nakDelayNs                  int64
	hasGroupTag                 bool
	groupTag                    int64
	rcvTs, sndTs                channelTimestamp // channel-rcv-ts-offset, channel-snd-ts-offset (timestamps.go)
	mediaRcvTs                  channelTimestamp // media-rcv-ts-offset: the kernel's receive time (timestamps.go)
	// resolvedNs: a send channel's endpoint was last re-resolved then; a
	// receive channel's control address then, or a frame came from it
	// (resolution.go).
	resolvedNs int64
}

func (c *udpChannel) String() string { return c.uri.raw }

// isMultiDestination: manual or dynamic control (MDC).
func (c *udpChannel) isMultiDestination() bool {
	return c.mode == controlManual || c.mode == controlDynamic
}

// hasGroupSemantics: multicast or multi-destination.
func (c *udpChannel) hasGroupSemantics() bool { return c.multicast || c.isMultiDestination() }

// matchesTag is UdpChannel.matchesTag: whether ch, a channel being added,
// names the tag of the endpoint whose channel is ep. A channel that names
// the tag and also another control mode, or an endpoint or control address
// other than the endpoint's, is refused rather than given an endpoint of
// its own.
func (ch *udpChannel) matchesTag(ep *udpChannel) (bool, error) {
	if !ch.hasTag || !ep.hasTag || ch.tag != ep.tag {
		return false, nil
	}
	if ch.mode != controlNone && ch.mode != ep.mode {
		return false, genericError(illegalArgument, "matching tag=%d has mismatched control-mode: %s <> %s",
			ch.tag, ch.uri.raw, ep.uri.raw)
	}
	wildcard := func(a netip.AddrPort) bool { return (!a.Addr().IsValid() || a.Addr().IsUnspecified()) && a.Port() == 0 }
	if !(wildcard(ch.remoteData) && wildcard(ch.localData)) && (ch.remoteData != ep.remoteData || ch.localData != ep.localData) {
		return false, genericError(illegalArgument, "matching tag=%d has mismatched endpoint or control: %s <> %s",
			ch.tag, ch.uri.raw, ep.uri.raw)
	}
	return true, nil
}

// udpChannelError is how the Java driver reports a bad UDP channel: an
// InvalidChannelException wrapping the cause.
func udpChannelError(kind, format string, a ...any) error {
	return invalidChannel("%s: %s", kind, fmt.Sprintf(format, a...))
}

// parseUDPChannel resolves a UDP channel (isDestination: a destination of a
// multi-destination channel, which needs no unique suffix).
func (c *conductor) parseUDPChannel(u *channelURI, isDestination bool) (*udpChannel, error) {
	cl := &udpChannel{uri: u}
	if err := validateUDPParams(u); err != nil {
		return nil, err
	}
	endpoint, hasEndpoint, err := c.resolveAddrParam(u, aeron.ParamEndpoint)
	if err != nil {
		return nil, err
	}
	control, hasControl, err := c.resolveAddrParam(u, aeron.ParamControl)
	if err != nil {
		return nil, err
	}
	tagStr, hasTagStr := channelTag(u)
	if hasTagStr {
		t, err := strconv.ParseInt(tagStr, 10, 64)
		if err != nil {
			return nil, udpChannelError(illegalArgument, "invalid channel tag %q: %s", tagStr, u.raw)
		}
		cl.hasTag, cl.tag = true, t
	}
	mode, _ := u.Get(aeron.ParamControlMode)
	switch mode {
	case aeron.ControlModeManual:
		cl.mode = controlManual
	case aeron.ControlModeDynamic:
		cl.mode = controlDynamic
	case aeron.ControlModeResponse:
		cl.mode = controlResponse
	}
	if cl.sndbuf, err = bufferLengthParam(u, aeron.ParamSocketSndBuf); err != nil {
		return nil, err
	}
	if cl.rcvbuf, err = bufferLengthParam(u, aeron.ParamSocketRcvBuf); err != nil {
		return nil, err
	}
	if cl.rcvWnd, err = bufferLengthParam(u, aeron.ParamReceiverWindow); err != nil {
		return nil, err
	}
	if v, ok := u.Get(paramNakDelay); ok {
		if cl.nakDelayNs, err = parseDuration(paramNakDelay, v); err != nil {
			return nil, err
		}
		cl.hasNakDelay = true
	}
	if v, ok := u.Get(paramGroupTag); ok {
		if cl.groupTag, err = strconv.ParseInt(v, 10, 64); err != nil {
			return nil, udpChannelError(illegalArgument, "'%s' does not contain a valid long value", paramGroupTag)
		}
		cl.hasGroupTag = true
	}
	if cl.rcvTs, err = parseChannelTimestamp(u, paramChannelRcvTsOff); err != nil {
		return nil, err
	}
	if cl.sndTs, err = parseChannelTimestamp(u, paramChannelSndTsOff); err != nil {
		return nil, err
	}
	if cl.mediaRcvTs, err = parseChannelTimestamp(u, paramMediaRcvTsOff); err != nil {
		return nil, err
	}
	if err := checkTimestampsDoNotOverlap(cl); err != nil {
		return nil, err
	}
	requiresSuffix := !isDestination && (!hasEndpoint && !hasControl ||
		hasEndpoint && endpoint.Port() == 0 || hasControl && control.Port() == 0)
	noDistinguishing := !hasEndpoint && !hasControl && !hasTagStr
	if cl.mode == controlDynamic && !hasControl {
		return nil, udpChannelError(illegalArgument, "explicit control expected with dynamic control mode: %s", u.raw)
	}
	if noDistinguishing && cl.mode != controlManual && cl.mode != controlResponse {
		return nil, udpChannelError(illegalArgument,
			"URIs for UDP must specify an endpoint, control, tags, or control-mode=manual/response: %s", u.raw)
	}
	cl.hasExplicitEndpoint = hasEndpoint
	if !hasEndpoint {
		endpoint = netip.AddrPortFrom(netip.IPv4Unspecified(), 0)
		if hasControl && control.Addr().Is6() {
			endpoint = netip.AddrPortFrom(netip.IPv6Unspecified(), 0)
		}
	}
	suffix := func() string {
		if !requiresSuffix {
			return ""
		}
		if hasTagStr {
			return "#" + tagStr
		}
		c.uniqueCanonical++
		return "-" + strconv.FormatInt(c.uniqueCanonical-1, 10)
	}
	endpointVal, _ := u.Get(aeron.ParamEndpoint)
	switch {
	case endpoint.Addr().IsMulticast():
		ifaceAddr, err := resolveInterface(u, true, endpoint.Addr().Is6())
		if err != nil {
			return nil, err
		}
		cl.multicast = true
		ctl := endpoint.Addr().As16()
		if endpoint.Addr().Is4() {
			b := endpoint.Addr().As4()
			if b[3]&1 == 0 {
				return nil, udpChannelError(illegalArgument, "multicast data address must be odd: %s", endpoint.Addr())
			}
			b[3]++
			cl.remoteControl = netip.AddrPortFrom(netip.AddrFrom4(b), endpoint.Port())
		} else {
			ctl[15]++
			cl.remoteControl = netip.AddrPortFrom(netip.AddrFrom16(ctl), endpoint.Port())
		}
		cl.remoteData = endpoint
		cl.ifaceAddr = ifaceAddr.Addr()
		cl.localControl, cl.localData = ifaceAddr, ifaceAddr
		cl.canonical = canonicalise("", ifaceAddr, "", endpoint)
		if v, ok := u.Get(paramTTL); ok {
			n, err := strconv.Atoi(v)
			if err != nil {
				return nil, udpChannelError(numberFormat, "For input string: \"%s\"", v)
			}
			cl.hasTTL, cl.ttl = true, n
		}
	case hasControl:
		controlVal, _ := u.Get(aeron.ParamControl)
		cl.hasExplicitControl = true
		cl.remoteControl, cl.remoteData = endpoint, endpoint
		cl.localControl, cl.localData = control, control
		cl.canonical = canonicalise(controlVal, control, endpointVal, endpoint) + suffix()
	default:
		local, err := resolveInterface(u, false, endpoint.Addr().Is6())
		if err != nil {
			return nil, err
		}
		cl.remoteControl, cl.remoteData = endpoint, endpoint
		cl.localControl, cl.localData = local, local
		cl.canonical = canonicalise("", local, endpointVal, endpoint) + suffix()
	}
	return cl, nil
}

// validateUDPParams refuses what UdpChannel.validateConfiguration and
// the driver refuse before resolving anything.
func validateUDPParams(u *channelURI) error {
	if u.Media != aeron.MediaUDP {
		return udpChannelError(illegalArgument, "UdpChannel only supports UDP media: %s", u.raw)
	}
	if v, ok := u.Get(paramCongestion); ok && v != "static" {
		return invalidChannel("congestion control cc=%s is not supported by this media driver (only static): %s", v, u.raw)
	}
	return nil
}

// channelTag is the channel tag of tags=<channelTag>[,<entityTag>].
func channelTag(u *channelURI) (string, bool) {
	v, ok := u.Get(aeron.ParamTags)
	if !ok {
		return "", false
	}
	t, _, _ := strings.Cut(v, ",")
	return t, t != ""
}

// canonicalise is UdpChannel.canonicalise: UDP-<local>-<remote>, each the
// parameter's text when given, else host:port.
func canonicalise(localParam string, local netip.AddrPort, remoteParam string, remote netip.AddrPort) string {
	var b strings.Builder
	b.WriteString("UDP-")
	if localParam == "" {
		b.WriteString(hostString(local))
	} else {
		b.WriteString(localParam)
	}
	b.WriteByte('-')
	if remoteParam == "" {
		b.WriteString(hostString(remote))
	} else {
		b.WriteString(remoteParam)
	}
	return b.String()
}

// hostString formats an address as Java's InetSocketAddress host string
// and port: 10.0.0.1:40123, and an IPv6 address in full hex groups.
func hostString(a netip.AddrPort) string {
	ip := a.Addr()
	if ip.Is4() || ip.Is4In6() {
		return ip.Unmap().String() + ":" + strconv.Itoa(int(a.Port()))
	}
	b := ip.As16()
	var s strings.Builder
	for i := 0; i < 16; i += 2 {
		if i > 0 {
			s.WriteByte(':')
		}
		s.WriteString(strconv.FormatUint(uint64(b[i])<<8|uint64(b[i+1]), 16))
	}
	return s.String() + ":" + strconv.Itoa(int(a.Port()))
}

// sourceIdentity is an image's source as Configuration.sourceIdentity
// writes it: the sender's host string and port.
func sourceIdentity(a netip.AddrPort) string { return hostString(a) }

func resolveHost(host string) (netip.Addr, error) {
	if ip, err := netip.ParseAddr(host); err == nil {
		return ip.Unmap(), nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil || len(ips) == 0 {
		return netip.Addr{}, fmt.Errorf("unresolved %s", host)
	}
	for _, ip := range ips {
		if ip.Unmap().Is4() {
			return ip.Unmap(), nil
		}
	}
	return ips[0], nil
}

// resolveInterface resolves interface=ip[:port][/prefix]: for unicast
// without one, the wildcard address; otherwise the address of the local
// interface it names (InterfaceSearchAddress).
func resolveInterface(u *channelURI, multicast, v6 bool) (netip.AddrPort, error) {
	v, ok := u.Get(aeron.ParamInterface)
	wildcard := netip.IPv4Unspecified()
	if v6 {
		wildcard = netip.IPv6Unspecified()
	}
	if !ok {
		if !multicast {
			return netip.AddrPortFrom(wildcard, 0), nil
		}
		a, _, err := udp.FindInterface(netip.PrefixFrom(wildcard, 0))
		if err != nil {
			return netip.AddrPort{}, udpChannelError(illegalArgument, "%v", err)
		}
		return netip.AddrPortFrom(a, 0), nil
	}
	if strings.HasPrefix(v, "{") {
		return namedInterface(v, v6)
	}
	addrPart, prefixPart, hasPrefix := strings.Cut(v, "/")
	host, port := addrPart, uint64(0)
	if h, p, err := net.SplitHostPort(addrPart); err == nil {
		host = h
		if port, err = strconv.ParseUint(p, 10, 16); err != nil {
			return netip.AddrPort{}, udpChannelError(illegalArgument, "invalid port: %s", v)
		}
	}
	ip, err := resolveHost(strings.Trim(host, "[]"))
	if err != nil {
		return netip.AddrPort{}, protocolError(aeron.ErrorCodeUnknownHost, "unresolved interface: %s", v)
	}
	bits := ip.BitLen()
	if hasPrefix {
		if bits, err = strconv.Atoi(prefixPart); err != nil || bits < 0 || bits > ip.BitLen() {
			return netip.AddrPort{}, udpChannelError(illegalArgument, "invalid subnet: %s", v)
		}
	}
	if !multicast && ip.IsUnspecified() {
		return netip.AddrPortFrom(ip, uint16(port)), nil
	}
	a, _, err := udp.FindInterface(netip.PrefixFrom(ip, bits))
	if err != nil {
		return netip.AddrPort{}, udpChannelError(illegalArgument, "%v", err)
	}
	return netip.AddrPortFrom(a, uint16(port)), nil
}

// namedInterface resolves interface={name} or {name}:port to the named
// interface's first address of the channel's family (NamedInterface).
func namedInterface(v string, v6 bool) (netip.AddrPort, error) {
	end := strings.LastIndexByte(v, '}')
	if end <= 1 {
		return netip.AddrPort{}, udpChannelError(illegalArgument, "%s", v)
	}
	name, rest := v[1:end], v[end+1:]
	port := uint64(0)
	if rest != "" {
		var err error
		if len(rest) == 1 || rest[0] != ':' {
			return netip.AddrPort{}, udpChannelError(illegalArgument, "%s", v)
		}
		if port, err = strconv.ParseUint(rest[1:], 10, 16); err != nil {
			return netip.AddrPort{}, udpChannelError(illegalArgument, "port out of range: %s", rest[1:])
		}
	}
	ifc, err := net.InterfaceByName(name)
	if err != nil {
		return netip.AddrPort{}, udpChannelError(illegalArgument, "unknown interface %s", name)
	}
	addrs, err := ifc.Addrs()
	if err != nil {
		return netip.AddrPort{}, udpChannelError(illegalArgument, "interface %s: %v", name, err)
	}
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok {
			ip, ok := netip.AddrFromSlice(ipn.IP)
			if ok && ip.Unmap().Is4() != v6 {
				return netip.AddrPortFrom(ip.Unmap(), uint16(port)), nil
			}
		}
	}
	family := "INET"
	if v6 {
		family = "INET6"
	}
	return netip.AddrPort{}, genericError(illegalState, "no %s addresses found on interface %s", family, name)
}

// bufferLengthParam reads so-sndbuf, so-rcvbuf or rcv-wnd (0: not given).
func bufferLengthParam(u *channelURI, name string) (int, error) {
	v, ok := u.Get(name)
	if !ok {
		return 0, nil
	}
	n, err := parseSize(name, v)
	if err != nil {
		return 0, err
	}
	if n > 1<<31-1 {
		return 0, udpChannelError(illegalArgument, "Invalid %s length: %d", name, n)
	}
	return int(n), nil
}

func (c *conductor) multicastTTL(ch *udpChannel) int {
	if ch.hasTTL {
		return ch.ttl
	}
	return c.opts.MulticastTTL
}
