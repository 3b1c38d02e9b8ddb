package driver

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/goblin-kv/goblin/aeron/internal/command"
)

// The driver event log: the C driver's agent logging (aeron_driver_agent.c)
// as far as this driver has the events. AERON_EVENT_LOG names the events
// to log (names, "admin", "all", numeric ids or a legacy 0x mask, comma
// separated), AERON_EVENT_LOG_DISABLE the ones to leave out, and the lines
// go to standard output or, with AERON_EVENT_LOG_FILENAME, are appended to
// that file. Lines have the C agent's form:
//
//	[seconds.nanos] DRIVER: CMD_IN_ADD_PUBLICATION [len/len]: streamId=… clientId=… correlationId=… channel=…
//
// Written: the client commands in (CMD_IN_*) and the responses out
// (CMD_OUT_*). Accepted but never written, as this driver does not raise
// them: FRAME_IN/OUT, the cleanup, channel, flow control, NAK/resend, name
// resolution, untethered and revoke events (eventWritten lists what is).

// agentEventNames are the C agent's event ids: the index is the id, "" marks an
// id with no event.
var agentEventNames = [...]string{
	"", "FRAME_IN", "FRAME_OUT", "CMD_IN_ADD_PUBLICATION", "CMD_IN_REMOVE_PUBLICATION",
	"CMD_IN_ADD_SUBSCRIPTION", "CMD_IN_REMOVE_SUBSCRIPTION", "CMD_OUT_PUBLICATION_READY",
	"CMD_OUT_AVAILABLE_IMAGE", "", "", "", "CMD_OUT_ON_OPERATION_SUCCESS", "CMD_IN_KEEPALIVE_CLIENT",
	"REMOVE_PUBLICATION_CLEANUP", "REMOVE_SUBSCRIPTION_CLEANUP", "REMOVE_IMAGE_CLEANUP",
	"CMD_OUT_ON_UNAVAILABLE_IMAGE", "", "", "", "", "", "SEND_CHANNEL_CREATION", "RECEIVE_CHANNEL_CREATION",
	"SEND_CHANNEL_CLOSE", "RECEIVE_CHANNEL_CLOSE", "", "", "", "CMD_IN_ADD_DESTINATION",
	"CMD_IN_REMOVE_DESTINATION", "CMD_IN_ADD_EXCLUSIVE_PUBLICATION", "CMD_OUT_EXCLUSIVE_PUBLICATION_READY",
	"CMD_OUT_ERROR", "CMD_IN_ADD_COUNTER", "CMD_IN_REMOVE_COUNTER", "CMD_OUT_SUBSCRIPTION_READY",
	"CMD_OUT_COUNTER_READY", "CMD_OUT_ON_UNAVAILABLE_COUNTER", "CMD_IN_CLIENT_CLOSE",
	"CMD_IN_ADD_RCV_DESTINATION", "CMD_IN_REMOVE_RCV_DESTINATION", "CMD_OUT_ON_CLIENT_TIMEOUT",
	"CMD_IN_TERMINATE_DRIVER", "UNTETHERED_SUBSCRIPTION_STATE_CHANGE", "NAME_RESOLUTION_NEIGHBOR_ADDED",
	"NAME_RESOLUTION_NEIGHBOR_REMOVED", "FLOW_CONTROL_RECEIVER_ADDED", "FLOW_CONTROL_RECEIVER_REMOVED",
	"NAME_RESOLUTION_RESOLVE", "GENERIC_MESSAGE", "NAME_RESOLUTION_LOOKUP", "NAME_RESOLUTION_HOST_NAME",
	"NAK_SENT", "RESEND", "CMD_IN_REMOVE_DESTINATION_BY_ID", "CMD_IN_REJECT_IMAGE", "NAK_RECEIVED",
	"PUBLICATION_REVOKE", "PUBLICATION_IMAGE_REVOKE", "ADD_DYNAMIC_DISSECTOR", "DYNAMIC_DISSECTOR_EVENT",
}

const (
	evFrameIn             = 1
	evFrameOut            = 2
	evUntethered          = 45
	evAddDynamicDissector = 61
	evDynamicDissector    = 62
)

// commandEvents maps a command or response type to its event id, as the C
// agent's command_id_to_driver_event_id (types it leaves out log nothing).
var commandEvents = map[int32]int{
	command.AddPublication: 3, command.RemovePublication: 4, command.AddExclusivePublication: 32,
	command.AddSubscription: 5, command.RemoveSubscription: 6, command.ClientKeepalive: 13,
	command.AddDestination: 30, command.RemoveDestination: 31, command.AddCounter: 35,
	command.RemoveCounter: 36, command.ClientClose: 40, command.AddRcvDestination: 41,
	command.RemoveRcvDestination: 42, command.TerminateDriver: 44, command.RemoveDestinationByID: 57,
	command.RejectImage: 58,
	command.OnError:     34, command.OnAvailableImage: 8, command.OnPublicationReady: 7,
	command.OnOperationSuccess: 12, command.OnUnavailableImage: 17, command.OnExclusivePublicationReady: 33,
	command.OnSubscriptionReady: 37, command.OnCounterReady: 38, command.OnUnavailableCounter: 39,
	command.OnClientTimeout: 43,
}

// eventLog writes the enabled events; nil when AERON_EVENT_LOG enables
// none. Only the conductor's goroutine writes to it.
type eventLog struct {
	enabled [len(agentEventNames)]bool
	w       *bufio.Writer
	closer  io.Closer
	line    []byte
}

// parseEventLog reads AERON_EVENT_LOG and AERON_EVENT_LOG_DISABLE as
// aeron_driver_agent_logging_events_init does; an unknown event name (the
// C agent's "unknown event code", on stderr) stops the driver here.
func parseEventLog(events, disable string) (enabled [len(agentEventNames)]bool, anyOn bool, err error) {
	if events == "" {
		return enabled, false, nil
	}
	if err := setEvents(&enabled, events, true); err != nil {
		return enabled, false, fmt.Errorf("%s: %w", EnvName("aeron.event.log"), err)
	}
	if disable != "" {
		if err := setEvents(&enabled, disable, false); err != nil {
			return enabled, false, fmt.Errorf("%s: %w", EnvName("aeron.event.log.disable"), err)
		}
	}
	for _, e := range enabled {
		anyOn = anyOn || e
	}
	return enabled, anyOn, nil
}

// setEvents applies one list, last entry first, as the C agent does: "all"
// or a mask stops at once, "admin" is every event but the frame and
// dissector ones.
func setEvents(enabled *[len(agentEventNames)]bool, list string, on bool) error {
	items := strings.Split(list, ",")
	for i := len(items) - 1; i >= 0; i-- {
		name := strings.TrimSpace(items[i])
		switch {
		case name == "":
			// aeron_tokenise yields no empty tokens: "" is no events.
		case name == "all":
			for id, n := range agentEventNames {
				if n != "" {
					enabled[id] = on
				}
			}
			return nil
		case name == "admin":
			for id, n := range agentEventNames {
				if n != "" && id != evFrameIn && id != evFrameOut && id != evAddDynamicDissector && id != evDynamicDissector {
					enabled[id] = on
				}
			}
		case strings.HasPrefix(name, "0x"):
			mask, _ := strconv.ParseUint(name[2:], 16, 64)
			setMask(enabled, mask, on)
			return nil
		default:
			id := eventID(name)
			if id <= 0 {
				return fmt.Errorf("unknown event code: '%s'", name)
			}
			enabled[id] = on
		}
	}
	return nil
}

func setMask(enabled *[len(agentEventNames)]bool, mask uint64, on bool) {
	if mask == 0 {
		return
	}
	if mask >= 0xFFFF {
		for id, n := range agentEventNames {
			if n != "" {
				enabled[id] = on
			}
		}
		return
	}
	for id, n := range agentEventNames {
		if (mask&1 != 0 && strings.HasPrefix(n, "CMD_IN_")) || (mask&2 != 0 && strings.HasPrefix(n, "CMD_OUT_")) {
			enabled[id] = on
		}
	}
	if mask&4 != 0 {
		enabled[evFrameIn] = on
	}
	if mask&0x18 != 0 {
		enabled[evFrameOut] = on
	}
	if mask&0x80 != 0 {
		enabled[evUntethered] = on
	}
	if mask&0x100 != 0 {
		enabled[evDynamicDissector] = on
	}
}

// eventID is an event's id by name (SEND_NAK_MESSAGE is NAK_SENT) or by
// number; 0 when there is none.
func eventID(name string) int {
	if name == "SEND_NAK_MESSAGE" {
		name = "NAK_SENT"
	}
	for id, n := range agentEventNames {
		if n != "" && n == name {
			return id
		}
	}
	if id, err := strconv.ParseInt(name, 0, 64); err == nil && id > 0 && id < int64(len(agentEventNames)) && agentEventNames[id] != "" {
		return int(id)
	}
	return 0
}

// newEventLog opens the event log the options ask for, or returns nil.
func newEventLog(o *Options, version string) (*eventLog, error) {
	enabled, anyOn, err := parseEventLog(o.EventLog, o.EventLogDisable)
	if err != nil || !anyOn {
		return nil, err
	}
	l := &eventLog{enabled: enabled}
	out := o.EventLogOutput
	if out == nil && o.EventLogFilename != "" {
		f, err := os.OpenFile(o.EventLogFilename, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return nil, fmt.Errorf("%s: could not open log file %s: %w", EnvName("aeron.event.log.filename"), o.EventLogFilename, err)
		}
		out, l.closer = f, f
	}
	if out == nil {
		out = os.Stdout
	}
	l.w = bufio.NewWriter(out)
	l.line = l.header(l.line[:0], nanoClock())
	l.line = fmt.Appendf(l.line, " log started %s, enabled loggers: {DRIVER: %s}\n",
		time.Now().Format("2006-01-02 15:04:05.000-0700"), version)
	l.w.Write(l.line)
	l.w.Flush()
	return l, nil
}

func (l *eventLog) header(b []byte, nowNs int64) []byte {
	return fmt.Appendf(b, "[%d.%09d]", nowNs/1e9, nowNs%1e9)
}

// command logs one command in or response out, if its event is enabled.
func (l *eventLog) command(typeID int32, msg []byte) {
	id, ok := commandEvents[typeID]
	if !ok || !l.enabled[id] {
		return
	}
	b := l.header(l.line[:0], nanoClock())
	b = fmt.Appendf(b, " DRIVER: %s [%d/%d]: ", agentEventNames[id], len(msg), len(msg))
	b = dissectCommand(b, typeID, msg)
	b = append(b, '\n')
	l.line = b
	l.w.Write(b)
	l.w.Flush()
}

func (l *eventLog) close() {
	if l == nil {
		return
	}
	l.w.Flush()
	if l.closer != nil {
		l.closer.Close()
	}
}

// dissectCommand writes a command's or response's fields as the C agent's
// dissect_cmd_in and dissect_cmd_out name them; a message too short for
// its fields is written as its length only.
func dissectCommand(b []byte, typeID int32, msg []byte) (out []byte) {
	defer func() {
		if recover() != nil {
			out = fmt.Appendf(b, "malformed, length=%d", len(msg))
		}
	}()
	corr := func() []byte {
		h := command.Correlated(msg)
		return fmt.Appendf(b, "clientId=%d correlationId=%d", h.ClientID(), h.CorrelationID())
	}
	switch typeID {
	case command.AddPublication, command.AddExclusivePublication:
		m := command.PublicationMessage(msg)
		h := command.Correlated(msg)
		return fmt.Appendf(b, "streamId=%d clientId=%d correlationId=%d channel=%s", m.StreamID(), h.ClientID(),
			h.CorrelationID(), m.Channel())
	case command.AddSubscription:
		m := command.SubscriptionMessage(msg)
		h := command.Correlated(msg)
		return fmt.Appendf(b, "streamId=%d registrationCorrelationId=-1 clientId=%d correlationId=%d channel=%s",
			m.StreamID(), h.ClientID(), h.CorrelationID(), m.Channel())
	case command.RemovePublication, command.RemoveSubscription, command.RemoveCounter:
		h := command.Correlated(msg)
		return fmt.Appendf(b, "registrationId=%d clientId=%d correlationId=%d",
			command.RemoveMessage(msg).RegistrationID(), h.ClientID(), h.CorrelationID())
	case command.AddDestination, command.RemoveDestination, command.AddRcvDestination, command.RemoveRcvDestination:
		m := command.DestinationMessage(msg)
		h := command.Correlated(msg)
		return fmt.Appendf(b, "registrationCorrelationId=%d clientId=%d correlationId=%d channel=%s",
			m.RegistrationID(), h.ClientID(), h.CorrelationID(), m.Channel())
	case command.RemoveDestinationByID:
		m := command.DestinationByIDMessage(msg)
		h := command.Correlated(msg)
		return fmt.Appendf(b, "resourceRegistrationId=%d destinationRegistrationId=%d clientId=%d correlationId=%d",
			m.ResourceRegistrationID(), m.DestinationRegistrationID(), h.ClientID(), h.CorrelationID())
	case command.AddCounter:
		m := command.CounterMessage(msg)
		h := command.Correlated(msg)
		return fmt.Appendf(b, "typeId=%d keyBufferLength=%d labelLength=%d clientId=%d correlationId=%d label=%s",
			m.TypeID(), len(m.Key()), len(m.Label()), h.ClientID(), h.CorrelationID(), m.Label())
	case command.ClientKeepalive, command.ClientClose, command.TerminateDriver:
		return corr()
	case command.RejectImage:
		m := command.RejectImageMessage(msg)
		h := command.Correlated(msg)
		return fmt.Appendf(b, "clientId=%d correlationId=%d imageCorrelationId=%d position=%d reason=%s",
			h.ClientID(), h.CorrelationID(), m.ImageCorrelationID(), m.Position(), m.Reason())
	case command.OnError:
		m := command.ErrorResponse(msg)
		return fmt.Appendf(b, "offendingCorrelationId=%d errorCode=%d message=%s", m.OffendingCorrelationID(), m.Code(),
			m.Message())
	case command.OnOperationSuccess:
		return fmt.Appendf(b, "correlationId=%d", command.OperationSucceeded(msg).CorrelationID())
	case command.OnClientTimeout:
		return fmt.Appendf(b, "clientId=%d", command.ClientTimeout(msg).ClientID())
	case command.OnPublicationReady, command.OnExclusivePublicationReady:
		m := command.PublicationBuffersReady(msg)
		return fmt.Appendf(b, "sessionId=%d streamId=%d publicationLimitCounterId=%d channelStatusCounterId=%d "+
			"correlationId=%d registrationId=%d logFileName=%s", m.SessionID(), m.StreamID(),
			m.PublicationLimitCounterID(), m.ChannelStatusIndicatorID(), m.CorrelationID(), m.RegistrationID(),
			m.LogFileName())
	case command.OnAvailableImage:
		m := command.ImageBuffersReady(msg)
		return fmt.Appendf(b, "sessionId=%d streamId=%d subscriberPositionId=%d subscriptionRegistrationId=%d "+
			"correlationId=%d sourceIdentity=%s logFileName=%s", m.SessionID(), m.StreamID(), m.SubscriberPositionID(),
			m.SubscriptionRegistrationID(), m.CorrelationID(), m.SourceIdentity(), m.LogFileName())
	case command.OnUnavailableImage:
		m := command.ImageMessage(msg)
		return fmt.Appendf(b, "correlationId=%d subscriptionRegistrationId=%d streamId=%d channel=%s", m.CorrelationID(),
			m.SubscriptionRegistrationID(), m.StreamID(), m.Channel())
	case command.OnSubscriptionReady, command.OnCounterReady, command.OnUnavailableCounter:
		m := command.CounterUpdate(msg)
		if typeID == command.OnSubscriptionReady {
			return fmt.Appendf(b, "correlationId=%d channelStatusCounterId=%d", m.CorrelationID(), m.Value())
		}
		return fmt.Appendf(b, "correlationId=%d counterId=%d", m.CorrelationID(), m.Value())
	}
	return fmt.Appendf(b, "length=%d", len(msg))
}
