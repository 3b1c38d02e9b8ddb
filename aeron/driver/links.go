package driver

// client is one Aeron client the driver knows (AeronClient): created by its
// first command, kept alive by its heartbeat counter.
type client struct {
	id              int64
	heartbeat       position // client-heartbeat (type 11)
	closedByCommand bool
	timedOut        bool
}

// publicationLink is one client's handle on a publication: one per ADD,
// named by that command's correlation id (PublicationLink). Exactly one of
// ipc and net is set.
type publicationLink struct {
	registrationID int64
	client         *client
	ipc            *ipcPublication
	net            *networkPublication
	endOfLife      bool
}

func (l *publicationLink) revoke() {
	if l.ipc != nil {
		l.ipc.revoke()
	} else {
		l.net.revoke()
	}
}

// counterLink is a counter a client added (CounterLink).
type counterLink struct {
	registrationID int64
	counterID      int32
	client         *client
	endOfLife      bool
}

// subscribable is what a subscription links to (Subscribable): an IPC
// publication, a network publication a spy reads, or a publication image.
type subscribable interface {
	// rejoin is where an untethered subscriber that rested rejoins, and
	// announce tells its subscription the image is back.
	rejoinPosition(c *conductor) int64
	announce(c *conductor, l *subscriptionLink, pos position, join int64)
	// notifyID is the image id ON_UNAVAILABLE_IMAGE names.
	notifyID() int64
}

// linkedPosition is a subscription's sub-pos on one subscribable.
type linkedPosition struct {
	res   subscribable
	pos   position
	freed bool // an untethered linger closed it already
}

// subscriptionKind says what a subscription reads.
type subscriptionKind uint8

const (
	subIPC     subscriptionKind = iota // aeron:ipc
	subNetwork                         // aeron:udp: images of its receive endpoint
	subSpy                             // aeron-spy:aeron:udp: network publications of this driver
)

// subscriptionLink is one client's subscription (SubscriptionLink and its
// IPC, network and spy kinds).
type subscriptionLink struct {
	kind           subscriptionKind
	registrationID int64
	streamID       int32
	channel        string
	client         *client
	sessionID      int32
	hasSessionID   bool
	isResponse     bool
	tether         bool
	rejoin         bool
	sparse         bool
	reliable       bool
	group          inferable
	positions      []linkedPosition
	endOfLife      bool

	ep  *receiveEndpoint // subNetwork
	spy *udpChannel      // subSpy: the publications' channel
	// A network subscription's parameters, read again when an image
	// is made (SETUP tells the term length its receiver window depends on).
	params *subscriptionParams
}

// inferable is a setting that may be left to the driver (InferableBoolean).
type inferable uint8

const (
	inferInfer inferable = iota
	inferTrue
	inferFalse
)

// matches is SubscriptionLink.matches for an IPC publication: same stream,
// and any session unless the subscription names one (a response
// subscription matches nothing until the driver gives it a session).
func (l *subscriptionLink) matches(p *ipcPublication) bool {
	return l.kind == subIPC && p.streamID == l.streamID && l.sessionMatches(p.sessionID)
}

// sessionMatches is isWildcardOrSessionIdMatch.
func (l *subscriptionLink) sessionMatches(sessionID int32) bool {
	return (!l.hasSessionID && !l.isResponse) || l.sessionID == sessionID
}

func (l *subscriptionLink) linked(r subscribable) *linkedPosition {
	for i := range l.positions {
		if l.positions[i].res == r {
			return &l.positions[i]
		}
	}
	return nil
}

func (l *subscriptionLink) unlink(r subscribable) {
	for i := range l.positions {
		if l.positions[i].res == r {
			l.positions = append(l.positions[:i], l.positions[i+1:]...)
			return
		}
	}
}
