package driver

import (
	"net/netip"
	"strings"

	"github.com/goblin-kv/goblin/aeron"
	"github.com/goblin-kv/goblin/aeron/internal/udp"
	"github.com/goblin-kv/goblin/aeron/internal/uri"
)

// Multi-destination subscriptions (MDS): a UDP subscription with
// control-mode=manual has a receive endpoint with no socket of its own;
// ADD_RCV_DESTINATION gives it destinations, each a socket of its own
// (ReceiveDestinationTransport), numbered by a transport index
// (MultiRcvDestination). Every destination feeds the endpoint's one
// dispatcher, so a stream that arrives over two destinations (multipath)
// makes one image: a frame already in the term is not written again. The
// image remembers, per transport index, where that destination's source
// sends from (ImageConnection) and sends its status messages and NAKs to
// every destination heard from in the last destinationAddressTimeoutNs.
// The end of stream needs every connected destination's EOS.
// REMOVE_RCV_DESTINATION closes a destination's socket; the image goes on
// over the others. IPC and spy destinations are subscription links that
// share the MDS subscription's registration id.

// destinationAddressTimeoutNs: a destination not heard from for this long
// gets no more status messages or NAKs (DESTINATION_ADDRESS_TIMEOUT).
const destinationAddressTimeoutNs = int64(5e9)

// multiRcvDestination holds an MDS endpoint's destinations by transport
// index; a removed destination leaves a nil slot a later one reuses.
type multiRcvDestination struct {
	dests []*rcvDestination
}

// rcvDestination is one destination of an MDS subscription
// (ReceiveDestinationTransport): its channel, socket and rcv-local-sockaddr
// counter.
type rcvDestination struct {
	ch     *udpChannel
	sock   *udp.Socket
	addrID int32
}

func (m *multiRcvDestination) add(d *rcvDestination) int {
	for i, x := range m.dests {
		if x == nil {
			m.dests[i] = d
			return i
		}
	}
	m.dests = append(m.dests, d)
	return len(m.dests) - 1
}

func (m *multiRcvDestination) get(ti int) *rcvDestination {
	if ti < 0 || ti >= len(m.dests) {
		return nil
	}
	return m.dests[ti]
}

// find is the transport index of the destination added with a channel
// of the same canonical form, or -1.
func (m *multiRcvDestination) find(ch *udpChannel) int {
	for i, d := range m.dests {
		if d != nil && d.ch.canonical == ch.canonical {
			return i
		}
	}
	return -1
}

// socketOn is the socket of transport ti: the endpoint's own, or an MDS
// destination's (nil once removed).
func (e *receiveEndpoint) socketOn(ti int) *udp.Socket {
	if e.mds == nil {
		return e.sock
	}
	if d := e.mds.get(ti); d != nil {
		return d.sock
	}
	return nil
}

// channelOn is the channel of transport ti.
func (e *receiveEndpoint) channelOn(ti int) *udpChannel {
	if e.mds != nil {
		if d := e.mds.get(ti); d != nil {
			return d.ch
		}
	}
	return e.ch
}

func (e *receiveEndpoint) multicastOn(ti int) bool { return e.channelOn(ti).multicast }

// controlAddressOn is where a source heard on transport ti gets its
// control frames: its address for unicast, the channel's control group
// for multicast.
func (e *receiveEndpoint) controlAddressOn(ti int, from netip.AddrPort) netip.AddrPort {
	if ch := e.channelOn(ti); ch.multicast {
		return ch.remoteControl
	}
	return from
}

// rcvbufLength and sndbufLength are the socket buffer lengths an image's
// log records: the endpoint socket's, or for an MDS endpoint (no socket)
// those its sockets ask for.
func (e *receiveEndpoint) rcvbufLength(c *conductor) int {
	if e.sock != nil {
		return e.sock.RcvBuf()
	}
	n, _ := socketBufferFor(e.ch.rcvbuf, c.opts.SocketRcvbuf, c.osb.defaultRcvbuf)
	return n
}

func (e *receiveEndpoint) sndbufLength(c *conductor) int {
	if e.sock != nil {
		return e.sock.SndBuf()
	}
	n, _ := socketBufferFor(e.ch.sndbuf, c.opts.SocketSndbuf, c.osb.defaultSndbuf)
	return n
}

// closeSockets closes every socket of the endpoint (driver shutdown).
func (e *receiveEndpoint) closeSockets() {
	if e.sock != nil {
		e.sock.Close()
	}
	if e.mds != nil {
		for _, d := range e.mds.dests {
			if d != nil {
				d.sock.Close()
			}
		}
	}
}

// closeReceiveSockets takes a closing endpoint's sockets off the poller
// and closes them, with an MDS endpoint's rcv-local-sockaddr counters.
func (c *conductor) closeReceiveSockets(e *receiveEndpoint) {
	if e.mds == nil {
		c.poller.Remove(e.sock)
		e.sock.Close()
		return
	}
	for i, d := range e.mds.dests {
		if d != nil {
			c.poller.Remove(d.sock)
			d.sock.Close()
			c.freeCounter(d.addrID)
			e.mds.dests[i] = nil
		}
	}
}

// activateManualReceiveEndpoint finishes a new MDS endpoint: no socket, no
// rcv-local-sockaddr counter of its own (each destination has one), and
// rcv-channel ACTIVE with no bound address in its label
// (ReceiveChannelEndpoint.indicateActive).
func (c *conductor) activateManualReceiveEndpoint(e *receiveEndpoint) *receiveEndpoint {
	e.mds = &multiRcvDestination{}
	c.counters.SetValue(e.statusID, endpointActive)
	c.receiveEndpoints[e.ch.canonical] = e
	c.receiver.onAddEndpoint(e)
	return e
}

// findMDSLink is the network subscription link with the registration id
// whose endpoint takes destinations (findMdsSubscriptionLink).
func (c *conductor) findMDSLink(registrationID int64) (*subscriptionLink, error) {
	for _, l := range c.subscriptionLinks {
		if l.registrationID == registrationID && l.kind == subNetwork && l.ep != nil && l.ep.mds != nil {
			return l, nil
		}
	}
	return nil, protocolError(aeron.ErrorCodeUnknownSubscription, "unknown MDS subscription: %d", registrationID)
}

// onAddRcvDestination adds a destination to an MDS subscription
// (DriverConductor.onAddRcvDestination): an IPC or spy destination is one
// more subscription link under the subscription's registration id; a UDP
// destination opens a socket the receiver reads beside the others.
func (c *conductor) onAddRcvDestination(registrationID int64, channel string, corr int64) error {
	switch {
	case strings.HasPrefix(channel, ipcChannel):
		return c.onAddRcvIPCDestination(registrationID, channel, corr)
	case strings.HasPrefix(channel, uri.SpyPrefix):
		return c.onAddRcvSpyDestination(registrationID, channel, corr)
	}
	u, err := parseURI(channel)
	if err != nil {
		return err
	}
	if err := validateRcvDestination(u, channel); err != nil {
		return err
	}
	ch, err := c.parseUDPChannel(u, true)
	if err != nil {
		return err
	}
	l, err := c.findMDSLink(registrationID)
	if err != nil {
		return err
	}
	e := l.ep
	d := &rcvDestination{ch: ch, addrID: -1}
	if d.addrID, err = c.allocateLocalSocketAddress("rcv-local-sockaddr", registrationID, e.statusID); err != nil {
		return err
	}
	rcv, snd := c.socketBuffers(e.ch)
	if d.sock, err = c.openReceiveSocket(ch, rcv, snd, e.ch.mediaRcvTs.enabled); err != nil {
		c.freeCounter(d.addrID)
		return genericError(aeronException, "channel error - %v: %s", err, channel)
	}
	if err := c.poller.Add(d.sock); err != nil {
		d.sock.Close()
		c.freeCounter(d.addrID)
		return err
	}
	c.setLocalSocketAddress(d.addrID, hostString(d.sock.LocalAddr()))
	ti := e.mds.add(d)
	for _, img := range c.images {
		if img.ep == e {
			img.addDestination(ti, d, c.nowNs)
		}
	}
	if ch.hasExplicitControl {
		r := c.receiver
		r.pendingSetups = append(r.pendingSetups, pendingSetup{ep: e, control: ch.localControl, periodic: true,
			timeNs: c.nowNs, ti: ti})
		e.sendSetupElicitingOn(c.driverContext, ti, ch.localControl, 0, 0)
	}
	c.sendOperationSuccess(corr)
	return nil
}

// validateRcvDestination refuses the keys a destination may not set
// (DriverConductor.validateDestinationUri) and a response control mode.
func validateRcvDestination(u *channelURI, channel string) error {
	for _, k := range invalidDestinationKeys {
		if u.has(k) {
			return invalidChannel("destinations must not contain the key: %s channel=%s", k, channel)
		}
	}
	if v, _ := u.Get(aeron.ParamControlMode); v == aeron.ControlModeResponse || v == aeron.ControlModeManual {
		return invalidChannel("destinations may not specify %s=%s", aeron.ParamControlMode, v)
	}
	return nil
}

// onRemoveRcvNetworkDestination closes the UDP destination added with a
// channel of the same canonical form (Receiver.onRemoveDestination); an
// unknown destination is no error, as in the Java driver.
func (c *conductor) onRemoveRcvNetworkDestination(registrationID int64, channel string, corr int64) error {
	u, err := parseURI(channel)
	if err != nil {
		return err
	}
	ch, err := c.parseUDPChannel(u, true)
	if err != nil {
		return err
	}
	l, err := c.findMDSLink(registrationID)
	if err != nil {
		return err
	}
	e := l.ep
	if ti := e.mds.find(ch); ti >= 0 {
		d := e.mds.dests[ti]
		c.poller.Remove(d.sock)
		d.sock.Close()
		c.freeCounter(d.addrID)
		e.mds.dests[ti] = nil
		r := c.receiver
		for i := len(r.pendingSetups) - 1; i >= 0; i-- {
			if p := r.pendingSetups[i]; p.ep == e && p.ti == ti {
				r.removePendingSetup(i)
			}
		}
		for _, img := range c.images {
			if img.ep == e {
				img.removeDestination(ti, c.nowNs)
			}
		}
	}
	c.sendOperationSuccess(corr)
	return nil
}

// onAddRcvIPCDestination links the MDS subscription to the IPC
// publications of its stream (DriverConductor.onAddRcvIpcDestination).
func (c *conductor) onAddRcvIPCDestination(registrationID int64, channel string, corr int64) error {
	u, err := parseURI(channel)
	if err != nil {
		return err
	}
	params, err := c.subscriptionParams(u)
	if err != nil {
		return err
	}
	mds, err := c.findMDSLink(registrationID)
	if err != nil {
		return err
	}
	l := &subscriptionLink{registrationID: registrationID, streamID: mds.streamID, channel: channel, client: mds.client,
		sessionID: params.sessionID, hasSessionID: params.hasSessionID, isResponse: params.isResponse,
		tether: params.tether, rejoin: params.rejoin, sparse: params.sparse}
	c.subscriptionLinks = append(c.subscriptionLinks, l)
	c.sendOperationSuccess(corr)
	for _, p := range c.ipcPublications {
		if l.matches(p) && p.isAcceptingSubscriptions(c) {
			pos, err := c.linkIPCSubscription(p, l)
			if err != nil {
				return err
			}
			c.sendAvailableImage(p, registrationID, pos.id)
		}
	}
	return nil
}

// onAddRcvSpyDestination links the MDS subscription to this driver's
// network publications of the spied channel
// (DriverConductor.onAddRcvSpyDestination).
func (c *conductor) onAddRcvSpyDestination(registrationID int64, channel string, corr int64) error {
	u, ch, err := c.udpSubscriptionChannel(channel)
	if err != nil {
		return err
	}
	params, err := c.subscriptionParams(u)
	if err != nil {
		return err
	}
	mds, err := c.findMDSLink(registrationID)
	if err != nil {
		return err
	}
	l := &subscriptionLink{kind: subSpy, registrationID: registrationID, streamID: mds.streamID, channel: channel,
		client: mds.client, sessionID: params.sessionID, hasSessionID: params.hasSessionID,
		isResponse: params.isResponse, tether: params.tether, rejoin: params.rejoin, sparse: params.sparse,
		reliable: params.reliable, spy: ch, params: params}
	c.subscriptionLinks = append(c.subscriptionLinks, l)
	c.sendOperationSuccess(corr)
	for _, p := range c.netPublications {
		if c.spyMatches(l, p) && p.isAcceptingSubscriptions(c) {
			p.linkSpy(c, l)
		}
	}
	return nil
}

// imageConnection is what an MDS image knows of one destination
// (ImageConnection): where its source's control frames go, when it was
// last heard from, and its end of stream.
type imageConnection struct {
	known          bool
	control        netip.AddrPort
	lastActivityNs int64
	lastFrameNs    int64
	eos            bool
	eosPosition    int64
}

// initConnections starts an MDS image's connections with the destination
// its SETUP came on.
func (img *publicationImage) initConnections(e *receiveEndpoint, ti int, control netip.AddrPort, nowNs int64) {
	img.conns = make([]imageConnection, max(len(e.mds.dests), ti+1))
	img.conns[ti] = imageConnection{known: true, control: control, lastActivityNs: nowNs, lastFrameNs: nowNs}
}

func (img *publicationImage) growConnections(ti int) {
	for len(img.conns) <= ti {
		img.conns = append(img.conns, imageConnection{})
	}
}

// trackConnection records a frame from destination ti
// (PublicationImage.trackConnection).
func (img *publicationImage) trackConnection(ti int, from netip.AddrPort, nowNs int64) {
	img.growConnections(ti)
	cn := &img.conns[ti]
	if !cn.known {
		*cn = imageConnection{known: true, control: img.ep.controlAddressOn(ti, from)}
	}
	cn.lastActivityNs, cn.lastFrameNs = nowNs, nowNs
}

// addConnectionIfUnknown: a SETUP of an active image on destination ti.
func (img *publicationImage) addConnectionIfUnknown(ti int, control netip.AddrPort, nowNs int64) {
	img.growConnections(ti)
	if cn := &img.conns[ti]; !cn.known {
		*cn = imageConnection{known: true, control: control, lastActivityNs: nowNs, lastFrameNs: nowNs}
	}
}

// addDestination: a destination added while the image exists; a
// multicast one or one with an explicit control address is a known
// connection at once (PublicationImage.addDestination).
func (img *publicationImage) addDestination(ti int, d *rcvDestination, nowNs int64) {
	img.growConnections(ti)
	switch {
	case d.ch.multicast:
		img.conns[ti] = imageConnection{known: true, control: d.ch.remoteControl, lastActivityNs: nowNs}
	case d.ch.hasExplicitControl:
		img.conns[ti] = imageConnection{known: true, control: d.ch.localControl, lastActivityNs: nowNs}
	default:
		img.conns[ti] = imageConnection{}
	}
}

// removeDestination forgets destination ti (PublicationImage.removeDestination).
func (img *publicationImage) removeDestination(ti int, nowNs int64) {
	if ti < len(img.conns) {
		img.conns[ti] = imageConnection{}
	}
	img.updateActiveTransportCount(nowNs)
}

// activeConnections counts the destinations that delivered a frame within
// the image liveness timeout.
func (img *publicationImage) activeConnections(nowNs int64) int32 {
	n := int32(0)
	for i := range img.conns {
		if cn := &img.conns[i]; cn.known && cn.lastFrameNs+img.livenessNs-nowNs > 0 {
			n++
		}
	}
	return n
}

// allConnectedEOS: every known connection, and every destination not yet
// heard from, has sent end of stream (PublicationImage.isAllConnectedEos).
func (img *publicationImage) allConnectedEOS() bool {
	for i := range img.conns {
		cn := &img.conns[i]
		if cn.known && !cn.eos || !cn.known && img.ep.mds.get(i) != nil {
			return false
		}
	}
	return true
}

// eosPosition is the furthest end of stream a connection reported.
func (img *publicationImage) eosPosition() int64 {
	if img.conns == nil {
		return img.connEOSPosition
	}
	p := int64(0)
	for i := range img.conns {
		if cn := &img.conns[i]; cn.known && cn.eosPosition > p {
			p = cn.eosPosition
		}
	}
	return p
}

// sendToSources sends a control frame (status message, NAK, ERR,
// RSP_SETUP) to the image's source; an MDS image's to every destination
// heard from within destinationAddressTimeoutNs, each from that
// destination's socket (MultiRcvDestination.sendToAll).
func (img *publicationImage) sendToSources(x *driverContext, b []byte) {
	if img.conns == nil {
		img.ep.sendControl(x, b, img.control)
		return
	}
	for i := len(img.conns) - 1; i >= 0; i-- {
		cn := &img.conns[i]
		if cn.known && img.ep.mds.get(i) != nil && cn.lastActivityNs+destinationAddressTimeoutNs-x.nowNs > 0 {
			img.ep.sendControlOn(x, i, b, cn.control)
		}
	}
}

// pollDestinations reads every destination of an MDS endpoint.
func (r *receiver) pollDestinations(e *receiveEndpoint) int {
	total := 0
	for i, d := range e.mds.dests {
		if d != nil {
			total += r.pollSocket(e, d.sock, i)
		}
	}
	return total
}
