package driver

// recvBatchSize is how many datagrams one recvmmsg reads.
const recvBatchSize = 16

// subscriptionLinksTick drops the subscriptions of timed-out clients.
func (d *Driver) subscriptionLinksTick() {
	d.subscriptionLinks = checkResources(d.subscriptionLinks,
		func(l *subscriptionLink) bool { l.endOfLife = l.endOfLife || l.client.timedOut; return l.endOfLife },
		d.closeSubscription)
}

// doReceive is the receiver's duty cycle (Receiver.doWork): read every
// receive endpoint, then, for each connected image, its end of stream,
// status message and NAK; an image that stopped being connected leaves
// the receiver (a session that went without end of stream cools down);
// then the sources asked for SETUP are asked again.
func (d *Driver) doReceive(nowNs int64) int {
	work, received := 0, 0
	for _, e := range d.rcvEndpoints {
		received += d.pollData(e)
	}
	if received > 0 {
		d.counters.AddValue(sysBytesReceived, int64(received))
	}
	for i := len(d.rcvImages) - 1; i >= 0; i-- {
		img := d.rcvImages[i]
		if img.isConnected(nowNs) {
			d.checkEOSForDrain(img, nowNs)
			work += d.sendPendingStatusMessage(img, nowNs)
			work += d.processPendingLoss(img)
			continue
		}
		last := len(d.rcvImages) - 1
		d.rcvImages[i] = d.rcvImages[last]
		d.rcvImages[last] = nil
		d.rcvImages = d.rcvImages[:last]
		d.removeImageFromDispatcher(img)
		img.receiverReleased = true
	}
	if len(d.pendingSetups) > 0 {
		d.checkPendingSetups(nowNs)
	}
	return work + received
}

// removeImageFromDispatcher takes an image off its endpoint: a session
// that went without end of stream cools down until the image lingers
// (DataPacketDispatcher.removePublicationImage).
func (d *Driver) removeImageFromDispatcher(img *publicationImage) {
	if s := img.ep.streams[img.streamID]; s != nil {
		if active := s.active[img.sessionID]; active == img {
			delete(s.active, img.sessionID)
			if !img.isEndOfStream {
				s.states[img.sessionID] = sessionOnCoolDown
			}
		}
	}
	d.deactivateImage(img)
}

// WaitFD is a descriptor (an epoll set of the driver's UDP sockets) that
// polls readable when a datagram waits, once PrepareToWait armed it: an
// owner that parks between duty cycles calls PrepareToWait, then waits on
// it (with a timeout of at most Deadline), so a datagram wakes it at once.
// It stays the same for the driver's life.
func (d *Driver) WaitFD() int { return d.poller.FD() }

// disarmAfterNs: once DoWork has run this long with no PrepareToWait, its
// owner is taken to busy-poll, and the sockets leave WaitFD's set.
const disarmAfterNs = int64(2e6)

// PrepareToWait arms WaitFD: the driver's sockets join its epoll set, so
// it polls readable while a datagram waits, one that came before the call
// included. An owner calls it each time before it waits on WaitFD; any
// goroutine may. The sockets stay in the set until DoWork has run for
// disarmAfterNs with no PrepareToWait: an owner that busy-polls never
// waits, and a socket in an epoll set makes every datagram that comes for
// it pay for a wake-up callback (in the sender's system call, one per
// level of nested sets) on the round trip's path. A failure to arm
// (epoll_ctl) is returned; WaitFD then stays unreadable, so the owner
// waits out its timeout.
func (d *Driver) PrepareToWait() error {
	_, err := d.poller.Arm()
	return err
}

// disarmIfSpinning takes the sockets out of WaitFD's set once no owner
// has armed it for disarmAfterNs (while armed, DoWork calls it each
// cycle). A PrepareToWait between the look at the generation and the
// disarm keeps the set armed (udp.Poller.DisarmIf).
func (d *Driver) disarmIfSpinning(nowNs int64) {
	gen := d.poller.Arms()
	if gen != d.waitGen {
		d.waitGen, d.lastWaitNs = gen, nowNs
		return
	}
	if nowNs-d.lastWaitNs >= disarmAfterNs {
		d.poller.DisarmIf(gen)
	}
}

// HasNetwork reports whether the driver has UDP sockets open: then its
// owner should run the duty cycle on every pass of its loop (or park on
// WaitFD), since datagrams wait for it.
func (d *Driver) HasNetwork() bool { return len(d.sendEndpoints)+len(d.receiveEndpoints) > 0 }

// networkDeadline is the earliest time a UDP timer is due: a SETUP or
// heartbeat to send, a retransmit to make or free, a status message, a
// NAK, a source to ask for SETUP again.
func (d *Driver) networkDeadline(deadline int64) int64 {
	for _, p := range d.sender.publications {
		if !p.hasInitialConnection || p.isSetupElicited {
			deadline = min(deadline, p.timeOfLastSetupNs+setupIntervalNs+1)
		}
		if p.hasInitialConnection {
			deadline = min(deadline, p.timeOfLastDataOrHeartbeatNs+heartbeatIntervalNs+1)
		}
		if p.retransmit.active > 0 {
			for _, a := range p.retransmit.actions {
				if a.state != retransmitInactive {
					deadline = min(deadline, a.expiryNs+1)
				}
			}
		}
	}
	for _, img := range d.rcvImages {
		if img.smEnabled {
			deadline = min(deadline, img.nextSMDeadlineNs+1)
		}
		if img.smScheduled || img.lossPending {
			return d.nowNs
		}
		if at, open := img.loss.deadline(); open {
			deadline = min(deadline, at)
		}
	}
	for _, p := range d.pendingSetups {
		deadline = min(deadline, p.timeNs+pendingSetupTimeoutNs+1)
	}
	return deadline
}
