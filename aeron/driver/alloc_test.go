package driver

import (
	"testing"
	"time"

	"github.com/goblin-kv/goblin/internal/shm"
)

// steadyDriver is a manual driver with three clients' worth of IPC
// publications and subscribers, ready for steady-state duty cycles.
func steadyDriver(t testing.TB) (*manualDriver, func()) {
	m := newManualDriver(t, Options{TimerInterval: 10 * time.Millisecond})
	c := newRawClient(m)
	for s := int32(1); s <= 3; s++ {
		c.addSubscription(ipc64k, s)
		c.addSubscription(ipc64k+"|tether=false", s)
		c.addPublication(ipc64k, s, s%2 == 0)
	}
	c.take()
	// consume moves every subscriber to its publication's tail, as a
	// polling subscriber would, and stamps the client's heartbeat.
	consume := func() {
		for _, p := range m.ipcPublications {
			for _, s := range p.subs {
				shm.StoreInt64Release(m.values, s.off, p.producerPosition())
			}
		}
		for _, cl := range m.clients {
			m.setPosition(cl.heartbeat, m.epochMs)
		}
	}
	return m, consume
}

// TestDutyCycleAllocatesNothing: the conductor's cycle, timer ticks
// included, allocates nothing once clients are set up.
func TestDutyCycleAllocatesNothing(t *testing.T) {
	m, consume := steadyDriver(t)
	i := 0
	allocs := testing.AllocsPerRun(2000, func() {
		i++
		if i%10 == 0 {
			m.nowNs += int64(time.Millisecond)
			m.epochMs++
			consume()
		}
		m.DoWork(m.nowNs)
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per duty cycle", allocs)
	}
	if hb := m.ring.ConsumerHeartbeat(); m.epochMs-hb > 20 {
		t.Fatalf("heartbeat %d ms behind: the timers did not run", m.epochMs-hb)
	}
}

// BenchmarkDutyCycle times the conductor's cycle with nothing to do (the
// common case while messages flow: limits move only every 1/8 window)
// and with a timer tick due every cycle.
func BenchmarkDutyCycle(b *testing.B) {
	b.Run("idle", func(b *testing.B) {
		m, _ := steadyDriver(b)
		b.ReportAllocs()
		for b.Loop() {
			m.DoWork(m.nowNs)
		}
	})
	b.Run("tick", func(b *testing.B) {
		m, consume := steadyDriver(b)
		b.ReportAllocs()
		for b.Loop() {
			m.nowNs += int64(10 * time.Millisecond)
			consume()
			m.DoWork(m.nowNs)
		}
	})
}
