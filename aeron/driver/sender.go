package driver

import (
	"slices"

	"github.com/goblin-kv/goblin/aeron/internal/udp"
)

// sender is the sender agent (aeron_driver_sender, Sender): it owns the
// network publications while they send and the send channel endpoints it
// reads control messages on, and in its duty cycle sends their data,
// SETUPs, heartbeats and retransmits and hands status messages, NAKs and
// ERR frames to their publications. The conductor adds and removes its
// publications and endpoints (the C driver's sender proxy, a direct call
// here: the agents share DoWork's goroutine).
type sender struct {
	*driverContext
	conductor *conductor // what a control message tells the conductor (the sender's conductor proxy)

	publications []*networkPublication // in round-robin order, until the conductor's cleanup
	endpoints    []*sendEndpoint       // in poll order
	batch        *udp.SendBatch        // one publication's datagrams for one sendmmsg

	roundRobin       int   // the publication that sends first next cycle
	dutyCycleCounter int   // cycles since the control sockets were read
	idleSendCycles   int   // cycles that sent nothing since the control sockets were read
	controlPollNs    int64 // when the control sockets are read at the latest
}

// idleControlPollRatio: of the duty cycles that send nothing, every this
// many read the control sockets (the Java sender reads them on each). An
// owner's loop runs a cycle every microsecond or so while it polls, and a
// status message or NAK read three cycles later changes nothing, but each
// read of an idle socket is a system call that delays noticing a datagram
// on the data sockets.
const idleControlPollRatio = 4

// doWork is the sender's duty cycle (Sender.doWork): every network
// publication sends, round robin from one later each cycle; then the
// control sockets are read on every idleControlPollRatio-th cycle that
// sent nothing, every SendToStatusPollRatio cycles, after a short send,
// or when half a status message interval passed since the last read.
func (s *sender) doWork(nowNs int64) int {
	shortSends := s.counters.Value(sysShortSends)
	sent := 0
	pubs := s.publications
	if n := len(pubs); n > 0 {
		start := s.roundRobin
		s.roundRobin++
		if start >= n {
			start, s.roundRobin = 0, 1
		}
		for i := start; i < n; i++ {
			sent += pubs[i].send(nowNs)
		}
		for i := 0; i < start; i++ {
			sent += pubs[i].send(nowNs)
		}
		if sent > 0 {
			s.counters.AddValue(sysBytesSent, int64(sent))
		}
	}
	received := 0
	s.dutyCycleCounter++
	if sent == 0 {
		s.idleSendCycles++
	}
	if s.idleSendCycles >= idleControlPollRatio || s.dutyCycleCounter >= s.opts.SendToStatusPollRatio ||
		s.controlPollNs-nowNs < 0 || shortSends < s.counters.Value(sysShortSends) {
		for _, e := range s.endpoints {
			received += s.pollControl(e)
		}
		s.dutyCycleCounter, s.idleSendCycles = 0, 0
		s.controlPollNs = nowNs + int64(s.opts.StatusMessageTimeout)/2
	}
	return sent + received
}

// deadline is the earliest of deadline and the time a publication's timer
// is due: a SETUP or heartbeat to send, a retransmit to make or free.
func (s *sender) deadline(deadline int64) int64 {
	for _, p := range s.publications {
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
	return deadline
}

// onAddEndpoint starts reading a new send channel endpoint's control
// messages (Sender.onRegisterSendChannelEndpoint).
func (s *sender) onAddEndpoint(e *sendEndpoint) { s.endpoints = append(s.endpoints, e) }

// onRemoveEndpoint stops reading a closed endpoint.
func (s *sender) onRemoveEndpoint(e *sendEndpoint) {
	if i := slices.Index(s.endpoints, e); i >= 0 {
		s.endpoints = slices.Delete(s.endpoints, i, i+1)
	}
}

// onAddPublication starts sending a new network publication
// (Sender.onNewNetworkPublication).
func (s *sender) onAddPublication(p *networkPublication) { s.publications = append(s.publications, p) }

// onRemovePublication stops sending a publication the conductor cleans
// up (Sender.onRemoveNetworkPublication).
func (s *sender) onRemovePublication(p *networkPublication) {
	if i := slices.Index(s.publications, p); i >= 0 {
		s.publications = slices.Delete(s.publications, i, i+1)
	}
}
