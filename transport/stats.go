package transport

// Stats are the counters every listener reports, whatever its transport,
// so that each exports the same metric families. A transport fills them
// from its own, richer stats struct (uds.Stats, ring.Stats, aeron.Stats).
// Requests and error replies are counted by the command engine, per
// listener name, and are not repeated here.
type Stats struct {
	Clients     int64                       // connected now
	Connects    int64                       // clients accepted since start
	Rejected    int64                       // clients refused (too many, a failed handshake)
	Disconnects [NumDisconnectReasons]int64 // clients gone since start, by reason
	BytesIn     int64                       // request bytes received
	BytesOut    int64                       // reply bytes sent
	// Queued is the outbox depth: bytes the listener holds for its
	// clients now (replies not yet sent, partial requests).
	Queued int64
}

// StatsReporter is implemented by every transport's Server. UpdateStats
// adds the listener's counters to st, so that a caller sums listeners of
// the same kind into one struct it owns; it is called from the loop
// goroutine only and allocates nothing.
type StatsReporter interface {
	UpdateStats(st *Stats)
}

// DisconnectReason is why a listener's client went.
type DisconnectReason int

// The reasons a client goes. A transport that cannot tell one of them
// apart counts it under the nearest (a ring client that exits is
// ClientGone whether it closed or crashed).
const (
	// ClientGone: the client closed the connection, exited or vanished.
	ClientGone DisconnectReason = iota
	// ServerClosed: the server closed it after a reply, on the engine's
	// request (QUIT, a protocol error answered with an error reply).
	ServerClosed
	// SlowConsumer: its replies backed up past the listener's limit.
	SlowConsumer
	// InputTooLarge: an unfinished request passed the input limit.
	InputTooLarge
	// IdleTimeout: it sent nothing for longer than the idle timeout.
	IdleTimeout
	// ClientMemory: dropped to keep all clients' buffers under the limit.
	ClientMemory
	// Malformed: a malformed frame or message sequence.
	Malformed
	// Fault: a memory fault in its shared mapping.
	Fault
	// NumDisconnectReasons is the number of reasons.
	NumDisconnectReasons
)

var reasonNames = [NumDisconnectReasons]string{
	ClientGone: "client_gone", ServerClosed: "server_closed", SlowConsumer: "slow_consumer",
	InputTooLarge: "input_too_large", IdleTimeout: "idle_timeout", ClientMemory: "client_memory",
	Malformed: "malformed", Fault: "fault",
}

// String is the reason's metric label, e.g. "slow_consumer".
func (r DisconnectReason) String() string {
	if r < 0 || r >= NumDisconnectReasons {
		return "unknown"
	}
	return reasonNames[r]
}

// Add adds o's counters to st.
func (st *Stats) Add(o *Stats) {
	st.Clients += o.Clients
	st.Connects += o.Connects
	st.Rejected += o.Rejected
	for i := range st.Disconnects {
		st.Disconnects[i] += o.Disconnects[i]
	}
	st.BytesIn += o.BytesIn
	st.BytesOut += o.BytesOut
	st.Queued += o.Queued
}

// Remainder returns what the counted reasons leave of the clients that
// went (connects - clients - every reason but r), for the one reason r a
// transport does not count itself; never below 0.
func (st *Stats) Remainder(r DisconnectReason) int64 {
	n := st.Connects - st.Clients
	for i, d := range st.Disconnects {
		if DisconnectReason(i) != r {
			n -= d
		}
	}
	return max(n, 0)
}
