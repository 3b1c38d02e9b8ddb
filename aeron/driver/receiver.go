package driver

import "slices"

// receiver is the receiver agent (aeron_driver_receiver, Receiver): it
// owns the receive channel endpoints it reads, the images it polls while
// they are connected, and the sources it asked for SETUP; in its duty
// cycle it reads data and SETUPs into images and sends their status
// messages, NAKs and ERR frames. The conductor adds and removes its
// endpoints and images (the C driver's receiver proxy, a direct call
// here: the agents share DoWork's goroutine) and makes the image a SETUP
// asks for.
type receiver struct {
	*driverContext
	conductor *conductor // makes images for SETUPs (the receiver's conductor proxy)

	endpoints     []*receiveEndpoint  // in poll order
	images        []*publicationImage // while connected
	pendingSetups []pendingSetup      // sources asked for SETUP
}

// doWork is the receiver's duty cycle (Receiver.doWork): read every
// receive endpoint, then, for each connected image, its end of stream,
// status message and NAK; an image that stopped being connected leaves
// the receiver (a session that went without end of stream cools down);
// then the sources asked for SETUP are asked again.
func (r *receiver) doWork(nowNs int64) int {
	work, received := 0, 0
	for _, e := range r.endpoints {
		received += r.pollData(e)
	}
	if received > 0 {
		r.counters.AddValue(sysBytesReceived, int64(received))
	}
	for i := len(r.images) - 1; i >= 0; i-- {
		img := r.images[i]
		if img.isConnected(nowNs) {
			img.checkEOSForDrain(r, nowNs)
			work += img.sendPendingStatusMessage(r, nowNs)
			work += img.processPendingLoss(r)
			continue
		}
		last := len(r.images) - 1
		r.images[i] = r.images[last]
		r.images[last] = nil
		r.images = r.images[:last]
		r.removeImageFromDispatcher(img)
		img.receiverReleased = true
	}
	if len(r.pendingSetups) > 0 {
		r.checkPendingSetups(nowNs)
	}
	return work + received
}

// removeImageFromDispatcher takes an image off its endpoint: a session
// that went without end of stream cools down until the image lingers
// (DataPacketDispatcher.removePublicationImage).
func (r *receiver) removeImageFromDispatcher(img *publicationImage) {
	if s := img.ep.streams[img.streamID]; s != nil {
		if active := s.active[img.sessionID]; active == img {
			delete(s.active, img.sessionID)
			if !img.isEndOfStream {
				s.states[img.sessionID] = sessionOnCoolDown
			}
		}
	}
	img.deactivate(r.driverContext)
}

// deadline is the earliest of deadline and the time an image's timer is
// due (a status message, a NAK) or a source is to be asked for SETUP
// again; the current cycle's time when a status message or NAK waits to go.
func (r *receiver) deadline(deadline int64) int64 {
	for _, img := range r.images {
		if img.smEnabled {
			deadline = min(deadline, img.nextSMDeadlineNs+1)
		}
		if img.smScheduled || img.lossPending {
			return r.nowNs
		}
		if at, open := img.loss.deadline(); open {
			deadline = min(deadline, at)
		}
	}
	for _, p := range r.pendingSetups {
		deadline = min(deadline, p.timeNs+pendingSetupTimeoutNs+1)
	}
	return deadline
}

// onAddEndpoint starts reading a new receive channel endpoint; one with
// an explicit control address asks it for SETUP now and every second
// while it has interest (Receiver.onRegisterReceiveChannelEndpoint).
func (r *receiver) onAddEndpoint(e *receiveEndpoint) {
	r.endpoints = append(r.endpoints, e)
	if to, ok := e.explicitControl(); ok {
		r.pendingSetups = append(r.pendingSetups, pendingSetup{ep: e, control: to, periodic: true, timeNs: r.nowNs})
		e.sendSetupEliciting(r.driverContext, to, 0, 0)
	}
}

// onRemoveEndpoint forgets a closing endpoint and the sources it asked
// for SETUP.
func (r *receiver) onRemoveEndpoint(e *receiveEndpoint) {
	for i := len(r.pendingSetups) - 1; i >= 0; i-- {
		if r.pendingSetups[i].ep == e {
			r.removePendingSetup(i)
		}
	}
	if i := slices.Index(r.endpoints, e); i >= 0 {
		r.endpoints = slices.Delete(r.endpoints, i, i+1)
	}
}

// onNewImage starts serving a new image (Receiver.onNewPublicationImage):
// an older image of the session stops its status messages.
func (r *receiver) onNewImage(img *publicationImage) {
	for _, old := range r.images {
		if old.ep == img.ep && old.streamID == img.streamID && old.sessionID == img.sessionID && old.state != imageActive {
			old.smEnabled = false
		}
	}
	r.images = append(r.images, img)
}
