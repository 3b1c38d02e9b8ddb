package driver

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/aeron"
	"github.com/goblin-kv/goblin/aeron/internal/cnc"
	"github.com/goblin-kv/goblin/aeron/internal/command"
	"github.com/goblin-kv/goblin/aeron/internal/errorlog"
	"github.com/goblin-kv/goblin/aeron/internal/ringbuffer"
	"github.com/goblin-kv/goblin/internal/shm"
)

// commandSeeds are well-formed commands of every type (on IPC channels),
// and some whose lengths lie.
func commandSeeds() []struct {
	typeID int32
	msg    []byte
} {
	const cl, corr = 1 << 40, 1 << 41
	ch := ipc64k
	seeds := []struct {
		typeID int32
		msg    []byte
	}{
		{command.AddPublication, command.AppendPublicationMessage(nil, cl, corr, 7, ch)},
		{command.AddExclusivePublication, command.AppendPublicationMessage(nil, cl, corr, 7, ch)},
		{command.RemovePublication, command.AppendRemovePublication(nil, cl, corr, 5, true)},
		{command.AddSubscription, command.AppendSubscriptionMessage(nil, cl, corr, 7, ch)},
		{command.RemoveSubscription, command.AppendRemove(nil, cl, corr, 5)},
		{command.ClientKeepalive, command.AppendCorrelated(nil, cl, corr)},
		{command.AddDestination, command.AppendDestination(nil, cl, corr, 5, ch)},
		{command.RemoveDestination, command.AppendDestination(nil, cl, corr, 5, ch)},
		{command.AddCounter, command.AppendCounterMessage(nil, cl, corr, 1001, []byte("key"), "label")},
		{command.RemoveCounter, command.AppendRemove(nil, cl, corr, 5)},
		{command.ClientClose, command.AppendCorrelated(nil, cl, corr)},
		{command.AddRcvDestination, command.AppendDestination(nil, cl, corr, 5, ch)},
		{command.RemoveRcvDestination, command.AppendDestination(nil, cl, corr, 5, ch)},
		{command.TerminateDriver, command.AppendTerminateDriver(nil, cl, []byte("token"))},
		{command.AddStaticCounter, command.AppendStaticCounterMessage(nil, cl, corr, 9, 1001, []byte("k"), "static")},
		{command.RejectImage, command.AppendRejectImage(nil, cl, corr, 5, 0, "no")},
		{command.RemoveDestinationByID, command.AppendRemove(append(command.AppendCorrelated(nil, cl, corr), make([]byte, 8)...), cl, corr, 5)[:32]},
		{command.GetNextAvailableSessionID, command.AppendGetNextSessionID(nil, cl, corr, 7)},
		{0x7fff, command.AppendCorrelated(nil, cl, corr)},
	}
	// Lengths that lie: a channel, a key, a label and a token longer than
	// the command, negative, or 2 GiB.
	for _, s := range seeds[:] {
		for _, off := range []int{command.CorrelatedLength + 4} {
			for _, v := range []int32{-1, math.MaxInt32} {
				if off+4 <= len(s.msg) {
					b := bytes.Clone(s.msg)
					shm.PutInt32(b, off, v)
					seeds = append(seeds, struct {
						typeID int32
						msg    []byte
					}{s.typeID, b})
				}
			}
		}
		seeds = append(seeds, struct {
			typeID int32
			msg    []byte
		}{s.typeID, s.msg[:len(s.msg)/2]})
	}
	return seeds
}

// harmlessCommand reports whether the fuzzer's command is safe to give a
// real driver on a shared machine: no network channel (it would send
// datagrams to whatever address the bytes name, or resolve a name) and no
// term length but the test's 64 KiB (a mutated one could map gigabytes).
func harmlessCommand(msg []byte) bool {
	m := bytes.ToLower(bytes.ReplaceAll(msg, []byte("term-length=64k"), nil))
	return !bytes.Contains(m, []byte("udp")) && !bytes.Contains(m, []byte("length")) &&
		!bytes.Contains(m, []byte("mtu"))
}

// FuzzCommand writes one command of any type and content into a real
// driver's to-driver ring buffer, as a client of the same user can: the
// driver must not panic, must answer a command of a known type that is
// too short for its fields with ON_ERROR MALFORMED_COMMAND, and must go
// on serving: an IPC publication added afterwards is ready.
func FuzzCommand(f *testing.F) {
	for _, s := range commandSeeds() {
		f.Add(s.typeID, s.msg)
	}
	// One driver serves many inputs (making one per input runs the
	// fuzzer at a few execs a second); a fresh one every 256 inputs, or
	// after a command stopped it, bounds what the commands leave behind.
	var (
		m    *manualDriver
		c    *rawClient
		n    int
		base = f.TempDir()
	)
	f.Cleanup(func() {
		if m != nil {
			m.Close()
		}
	})
	f.Fuzz(func(t *testing.T, typeID int32, msg []byte) {
		if typeID < 1 || !harmlessCommand(msg) {
			t.Skip("not a type id, or a command naming the network or a term length other than 64 KiB (see harmlessCommand)")
		}
		if m == nil || n%256 == 0 || m.terminated() {
			if m != nil {
				m.Close()
				os.RemoveAll(m.opts.Dir)
			}
			o := testOptions(t)
			o.Dir = filepath.Join(base, strconv.Itoa(n), "aeron")
			d, err := New(o)
			if err != nil {
				t.Fatal(err)
			}
			m = &manualDriver{Driver: d, t: t, nowNs: 1, epochMs: time.Now().UnixMilli()}
			d.epochClock = func() int64 { return m.epochMs }
			d.epochMs = m.epochMs
			m.DoWork(m.nowNs)
			c = newRawClient(m)
		}
		n++
		m.t = t
		if len(msg) > m.ring.MaxMessageLength() {
			t.Skip("longer than the to-driver ring takes")
		}
		errorsBefore := m.malformedRefusals()
		c.take()
		c.send(typeID, msg)
		for _, e := range c.take() {
			if e.typeID == command.OnError {
				r := command.ErrorResponse(e.msg)
				if r.Code() == int32(aeron.ErrorCodeMalformedCommand) && r.OffendingCorrelationID() != 0 {
					t.Fatalf("MALFORMED_COMMAND names correlation id %d: it was read from a command too short to hold one",
						r.OffendingCorrelationID())
				}
			}
		}
		if len(msg) < command.CorrelatedLength && typeID <= command.GetNextAvailableSessionID {
			// Too short for even the header: it must have been refused as malformed.
			if m.malformedRefusals() == errorsBefore {
				t.Fatalf("a %d-byte command of type %d was not refused as MALFORMED_COMMAND", len(msg), typeID)
			}
		}
		if m.terminated() {
			return
		}
		// A correlation id no fuzzed command is likely to have taken.
		corr := math.MaxInt64 - int64(n)
		c.send(command.AddExclusivePublication, command.AppendPublicationMessage(nil, c.id, corr, 99, ipc64k))
		if e := c.take(); !containsType(e, command.OnExclusivePublicationReady) {
			t.Fatalf("after the command the driver answers an add publication with %s", eventNames(e))
		}
		c.send(command.RemovePublication, command.AppendRemovePublication(nil, c.id, corr-1<<32, corr, false))
	})
}

func containsType(e []event, typeID int32) bool {
	for _, ev := range e {
		if ev.typeID == typeID {
			return true
		}
	}
	return false
}

// malformedRefusals counts the MALFORMED_COMMAND refusals the driver
// has logged (the error log keeps one entry per distinct text, with a
// count).
func (m *manualDriver) malformedRefusals() int {
	s, _, err := cncParse(m.cncData)
	if err != nil {
		return 0
	}
	n := 0
	errorlog.Read(s.ErrorLog, 0, func(r errorlog.Record) {
		if strings.Contains(r.Text, "too short") {
			n += int(r.ObservationCount)
		}
	})
	return n
}

func (m *manualDriver) terminated() bool { return m.Terminated() }

// toDriverBuffer is the to-driver ring buffer's bytes in the CnC, records
// and trailer.
func toDriverBuffer(m *manualDriver) ([]byte, error) {
	l, _, err := cnc.Parse(m.cncData)
	if err != nil {
		return nil, err
	}
	return l.Slice(m.cncData).ToDriver, nil
}

// TestScribbledRingDoesNotStopTheDriver: a client of the same user writes
// a record length no producer writes into the to-driver ring buffer; the
// driver skips it, logs an error, and serves the next command.
func TestScribbledRingDoesNotStopTheDriver(t *testing.T) {
	m := newManualDriver(t, Options{})
	c := newRawClient(m)
	ring := m.ring
	// A record header claiming 2 GiB at the tail, the tail moved past it.
	tail := ring.ProducerPosition()
	l, err := toDriverBuffer(m)
	if err != nil {
		t.Fatal(err)
	}
	shm.PutInt32(l, int(tail)&(len(l)-ringbuffer.TrailerLength-1), math.MaxInt32)
	shm.PutInt32(l, int(tail)&(len(l)-ringbuffer.TrailerLength-1)+4, command.AddPublication)
	shm.PutInt64(l, len(l)-ringbuffer.TrailerLength+ringbuffer.TailPositionOffset, tail+64)
	m.cycle(3)
	if ring.Corrupt() != 1 {
		t.Fatalf("Corrupt() = %d, want 1", ring.Corrupt())
	}
	s, _, err := cncParse(m.cncData)
	if err != nil || !bytes.Contains(s.ErrorLog, []byte("to-driver ring buffer")) {
		t.Fatalf("no error logged for the scribbled record (%v)", err)
	}
	c.addPublication(ipc64k, 7, true)
	if e := c.take(); !containsType(e, command.OnExclusivePublicationReady) {
		t.Fatalf("after the scribbled record the driver answers an add publication with %s", eventNames(e))
	}
}
