package aeron

// The server's stats as Aeron counters in the media driver's CnC, where
// Aeron's AeronStat and goblin's aeron-stat list them beside the driver's.

import (
	"encoding/binary"
	"fmt"
	"os"

	ae "github.com/goblin-kv/goblin/aeron"
)

// StatCounter is one stat a listener keeps as an Aeron counter in its
// media driver (see Server.ExportCounters).
type StatCounter struct {
	// TypeID is the counter's type id, 1000 or more: Aeron reserves 0–999
	// for its own counters (io.aeron.AeronCounters).
	TypeID int32
	// Name is the stat, "requests" say; the counter's label reads
	// CounterLabel's "goblin requests: aeron:ipc stream=1001".
	Name string
}

// MinStatCounterType is the lowest type id a StatCounter may have: Aeron
// reserves the ids below it (driver and client 0–99, archive 100–199,
// cluster 200–299, the rest up to 999 for later use).
const MinStatCounterType = 1000

// CounterLabel is the label of the counter of the stat name that a
// listener subscribed to channel and stream keeps: "goblin requests:
// aeron:ipc stream=1001". The channel and stream tell apart the goblin
// servers that share one driver.
func CounterLabel(name, channel string, stream int32) string {
	return fmt.Sprintf("goblin %s: %s stream=%d", name, channel, stream)
}

// counterKey is the key of every stat counter a listener keeps: the
// server's process id (int64 at 0) and its request stream id (int32 at 8),
// little-endian as Aeron's buffers are, so a tool can find one server's
// counters by process.
func counterKey(stream int32) []byte {
	k := make([]byte, 12)
	binary.LittleEndian.PutUint64(k, uint64(os.Getpid()))
	binary.LittleEndian.PutUint32(k[8:], uint32(stream))
	return k
}

// ExportCounters asks the listener to keep one Aeron counter per stat in
// its media driver, which SetCounters fills. The manager goroutine
// allocates them (ADD_COUNTER waits on the driver) and allocates them
// again after the driver was lost; they are removed when the listener
// closes, and the driver frees them itself if the process dies (client
// liveness timeout). Call it once, before the loop starts.
func (s *Server) ExportCounters(stats []StatCounter) error {
	for _, st := range stats {
		if st.TypeID < MinStatCounterType {
			return fmt.Errorf("%w: counter %q has type id %d; Aeron reserves the ids below %d", ErrConfig, st.Name, st.TypeID, MinStatCounterType)
		}
	}
	s.m.mu.Lock()
	s.m.stats = stats
	s.m.mu.Unlock()
	s.m.post(mgrEvent{kind: mgrCounters})
	return nil
}

// SetCounters stores values[i] into the counter of the i-th stat given to
// ExportCounters (loop goroutine only). It stores nothing until the driver
// has allocated them, while the driver is being replaced, or once the
// listener is closed.
//
// Who writes: this loop goroutine only, every counter, with a release
// store (ae.Counter.Set), as Aeron's own counters are written. Who reads:
// other processes (AeronStat, aeron-stat) through their mapping of the
// driver's CnC, each value with an acquire load. Ordering: every value is
// one aligned 8-byte word, so a reader sees a whole value of one call or
// the next; values of one call may be seen beside values of the previous
// (no snapshot across counters), as with the driver's own counters. The
// counters live in the manager's Aeron client's mapping: s.ctrs is set
// from the manager's evCounters and dropped on evReset before the manager
// closes that client, and on Close before the manager stops, so no store
// reaches a mapping that is gone.
func (s *Server) SetCounters(values []int64) {
	for i, c := range s.ctrs {
		c.Set(values[i])
	}
}

// addCounters allocates the stat counters on the current Aeron client, if
// ExportCounters asked for them and they are not there yet, and hands them
// to the loop (manager goroutine).
func (m *manager) addCounters() {
	m.mu.Lock()
	stats := m.stats
	m.mu.Unlock()
	if len(stats) == 0 || m.ctrs != nil || m.ac == nil {
		return
	}
	key := counterKey(m.o.Stream)
	ctrs := make([]*ae.Counter, 0, len(stats))
	for _, st := range stats {
		k, err := m.ac.AddCounter(st.TypeID, key, CounterLabel(st.Name, m.channel, m.o.Stream))
		if err != nil {
			// The stats still reach /metrics; only the driver's view lacks them.
			m.o.Logger.Warn("aeron: cannot add the server's stat counters to the media driver", "dir", m.o.Dir, "err", err)
			for _, c := range ctrs {
				c.Close()
			}
			return
		}
		ctrs = append(ctrs, k)
	}
	m.ctrs = ctrs
	m.s.post(event{kind: evCounters, ctrs: ctrs, gen: m.gen})
	m.o.Logger.Debug("aeron stat counters added", "dir", m.o.Dir, "counters", len(ctrs))
}

// removeCounters removes the stat counters from the driver (manager
// goroutine, once the loop no longer writes them).
func (m *manager) removeCounters() {
	for _, c := range m.ctrs {
		c.Close() // an error means they went with the client or the driver
	}
	m.ctrs = nil
}
