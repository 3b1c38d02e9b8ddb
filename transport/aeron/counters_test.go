package aeron_test

import (
	"encoding/binary"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	ae "github.com/goblin-kv/goblin/aeron"
	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/transport/aeron"
)

// statCounters lists the allocated counters of the driver in dir whose
// label is one of labels, by label.
func statCounters(tb testing.TB, dir string, labels ...string) map[string]ae.CounterInfo {
	tb.Helper()
	cnc, err := ae.OpenCnC(dir)
	if err != nil {
		tb.Fatal(err)
	}
	defer cnc.Close()
	found := map[string]ae.CounterInfo{}
	cnc.Counters().ForEach(func(c ae.CounterInfo) bool {
		for _, l := range labels {
			if c.Label == l {
				found[l] = c
			}
		}
		return true
	})
	return found
}

// hasCounterOfType reports whether the driver in dir has an allocated
// counter of typeID whose label starts with prefix.
func hasCounterOfType(dir string, typeID int32, prefix string) bool {
	cnc, err := ae.OpenCnC(dir)
	if err != nil {
		return false
	}
	defer cnc.Close()
	found := false
	cnc.Counters().ForEach(func(c ae.CounterInfo) bool {
		found = c.TypeID == typeID && strings.HasPrefix(c.Label, prefix)
		return !found
	})
	return found
}

// TestStatCountersInTheDriver: a listener asked to export stat counters
// allocates them in its media driver (here the in-process Go driver,
// shared with a second listener), labelled with its channel and stream and
// keyed by the process, and SetCounters' values show there; closing the
// listener removes them while the driver lives on; SetCounters after
// Close writes nothing.
func TestStatCountersInTheDriver(t *testing.T) {
	dir := shmDir(t)
	host := newManual(t, aeron.Options{Media: "ipc", Proto: proto.RESP, Dir: dir})
	srv, _ := listen(t, aeron.Options{Media: "ipc", Proto: proto.SBE, Dir: dir, Stream: 2001, ReplyStream: 2002})
	defer srv.Close()

	if err := srv.ExportCounters([]aeron.StatCounter{{TypeID: 11, Name: "requests"}}); !errors.Is(err, aeron.ErrConfig) {
		t.Fatalf("a type id Aeron reserves: %v", err)
	}
	stats := []aeron.StatCounter{{TypeID: 4100, Name: "requests"}, {TypeID: 4101, Name: "keys"}}
	if err := srv.ExportCounters(stats); err != nil {
		t.Fatal(err)
	}
	reqLabel := aeron.CounterLabel("requests", "aeron:ipc", 2001)
	keysLabel := aeron.CounterLabel("keys", "aeron:ipc", 2001)
	if reqLabel != "goblin requests: aeron:ipc stream=2001" {
		t.Fatalf("label %q", reqLabel)
	}
	var got map[string]ae.CounterInfo
	deadline := time.Now().Add(60 * time.Second)
	for n := int64(1); ; n++ {
		host.srv.Poll(0)
		srv.Poll(0)
		srv.SetCounters([]int64{n, 7})
		got = statCounters(t, dir, reqLabel, keysLabel)
		if got[reqLabel].Value > 0 && got[keysLabel].Value == 7 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("counters %v after 60 s", got)
		}
		time.Sleep(time.Millisecond)
	}
	for i, l := range []string{reqLabel, keysLabel} {
		c := got[l]
		if c.TypeID != stats[i].TypeID {
			t.Errorf("%s: type %d, want %d", l, c.TypeID, stats[i].TypeID)
		}
		if pid := binary.LittleEndian.Uint64(c.Key); pid != uint64(os.Getpid()) {
			t.Errorf("%s: key's pid %d, want %d", l, pid, os.Getpid())
		}
		if stream := int32(binary.LittleEndian.Uint32(c.Key[8:])); stream != 2001 {
			t.Errorf("%s: key's stream %d", l, stream)
		}
	}

	// Close waits for the manager, which removes them through the driver
	// the other listener keeps running.
	done := make(chan error, 1)
	go func() { done <- srv.Close() }()
	for closed := false; !closed; {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			closed = true
		default:
			host.srv.Poll(0)
			time.Sleep(100 * time.Microsecond)
		}
	}
	srv.SetCounters([]int64{1, 2}) // closed: nothing to write, no fault
	if got := statCounters(t, dir, reqLabel, keysLabel); len(got) != 0 {
		t.Fatalf("counters left after Close: %v", got)
	}
}

// TestStatCountersUDP: a UDP listener (its in-process Go driver) labels
// its counters with its request channel, endpoint included.
func TestStatCountersUDP(t *testing.T) {
	m := newManual(t, aeron.Options{Media: "udp", Proto: proto.RESP, Endpoint: loopback(freeUDPPort(t)), Control: loopback(freeUDPPort(t))})
	if err := m.srv.ExportCounters([]aeron.StatCounter{{TypeID: 4100, Name: "requests"}}); err != nil {
		t.Fatal(err)
	}
	label := aeron.CounterLabel("requests", "aeron:udp?endpoint="+m.o.Endpoint, aeron.DefaultStream)
	deadline := time.Now().Add(60 * time.Second)
	for statCounters(t, m.o.Dir, label)[label].Value != 5 {
		if time.Now().After(deadline) {
			t.Fatalf("no counter %q with value 5 after 60 s", label)
		}
		m.srv.Poll(0)
		m.srv.SetCounters([]int64{5})
		time.Sleep(time.Millisecond)
	}
}
