package aeron

import (
	"testing"
	"time"

	"github.com/goblin-kv/goblin/internal/shm"
)

func TestIdleStrategies(t *testing.T) {
	for _, s := range []IdleStrategy{SpinIdle{}, YieldIdle{}, SleepIdle{Period: time.Microsecond}, &BackoffIdle{}} {
		for i := 0; i < 30; i++ {
			s.Idle(0)
		}
		s.Idle(1)
	}
	b := &BackoffIdle{MaxSpins: 2, MaxYields: 1, MinPark: time.Microsecond, MaxPark: 4 * time.Microsecond}
	for i := 0; i < 10; i++ {
		b.Idle(0)
	}
	if b.park != 4*time.Microsecond {
		t.Fatalf("back-off park %v, want capped at 4µs", b.park)
	}
	b.Idle(5)
	if b.spins != 0 || b.park != 0 {
		t.Fatal("work did not reset the back-off")
	}
}

func TestErrorLogReader(t *testing.T) {
	buf := make([]byte, 1024)
	put := func(off int, count int32, first, last int64, text string) int {
		l := elEncodedError + len(text)
		shm.PutInt32(buf, off+elObservations, count)
		shm.PutInt64(buf, off+elFirstObservation, first)
		shm.PutInt64(buf, off+elLastObservation, last)
		copy(buf[off+elEncodedError:], text)
		shm.PutInt32(buf, off, int32(l))
		return off + align(l, elAlignment)
	}
	off := put(0, 3, 100, 200, "first error")
	put(off, 1, 300, 300, "second")
	var got []ErrorRecord
	if n := readErrorLog(buf, 0, func(r ErrorRecord) { got = append(got, r) }); n != 2 {
		t.Fatalf("read %d records", n)
	}
	if got[0].Text != "first error" || got[0].ObservationCount != 3 || got[0].FirstObservation != 100 || got[1].Text != "second" {
		t.Fatalf("%+v", got)
	}
	if n := readErrorLog(buf, 250, func(ErrorRecord) {}); n != 1 {
		t.Fatalf("since filter: %d", n)
	}
}

func TestCountersReader(t *testing.T) {
	meta := make([]byte, 4*counterMetadataLength)
	values := make([]byte, 4*counterValueLength)
	alloc := func(id int32, typeID int32, reg int64, label string, v int64) {
		base := int(id) * counterMetadataLength
		shm.PutInt32(meta, base+cmTypeID, typeID)
		shm.PutInt32(meta, base+cmLabelLength, int32(len(label)))
		copy(meta[base+cmLabel:], label)
		shm.PutInt64(values, int(id)*counterValueLength, v)
		shm.PutInt64(values, int(id)*counterValueLength+cvRegistrationID, reg)
		shm.StoreInt32Release(meta, base+cmState, CounterAllocated)
	}
	alloc(0, CounterTypeSystem, 0, "Bytes sent", 10)
	alloc(1, CounterTypeClientHeartbeat, 99, "client-heartbeat: id=99", 5)
	shm.PutInt32(meta, 2*counterMetadataLength, CounterReclaimed)
	alloc(3, CounterTypePublisherLimit, 7, "pub-lmt: 7", 1)
	r := &CountersReader{meta: meta, values: values}
	var labels []string
	r.ForEach(func(c CounterInfo) bool { labels = append(labels, c.Label); return true })
	if len(labels) != 3 || labels[1] != "client-heartbeat: id=99" {
		t.Fatalf("%q", labels)
	}
	if id := r.FindByTypeAndRegistrationID(CounterTypeClientHeartbeat, 99); id != 1 || r.Value(id) != 5 {
		t.Fatalf("find heartbeat: %d", id)
	}
	if r.FindByTypeAndRegistrationID(CounterTypeClientHeartbeat, 98) != -1 {
		t.Fatal("found a counter that is not there")
	}
}
