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
// named by that command's correlation id (PublicationLink).
type publicationLink struct {
	registrationID int64
	client         *client
	pub            *ipcPublication
	endOfLife      bool
}

// counterLink is a counter a client added (CounterLink).
type counterLink struct {
	registrationID int64
	counterID      int32
	client         *client
	endOfLife      bool
}

// linkedPosition is a subscription's sub-pos on one publication.
type linkedPosition struct {
	pub   *ipcPublication
	pos   position
	freed bool // an untethered linger closed it already
}

// subscriptionLink is one client's IPC subscription (IpcSubscriptionLink).
type subscriptionLink struct {
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
	positions      []linkedPosition
	endOfLife      bool
}

// matches is SubscriptionLink.matches for an IPC publication: same stream,
// and any session unless the subscription names one (a response
// subscription matches nothing until the driver gives it a session).
func (l *subscriptionLink) matches(p *ipcPublication) bool {
	return p.streamID == l.streamID && ((!l.hasSessionID && !l.isResponse) || l.sessionID == p.sessionID)
}

func (l *subscriptionLink) linked(p *ipcPublication) *linkedPosition {
	for i := range l.positions {
		if l.positions[i].pub == p {
			return &l.positions[i]
		}
	}
	return nil
}

func (l *subscriptionLink) unlink(p *ipcPublication) {
	for i := range l.positions {
		if l.positions[i].pub == p {
			l.positions = append(l.positions[:i], l.positions[i+1:]...)
			return
		}
	}
}
