package ring

import (
	"fmt"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/goblin-kv/goblin/internal/shm"
	"github.com/goblin-kv/goblin/internal/testkit/latency"
)

// BenchmarkRecordLines is the ring's own round trip across two cores with
// no session and no engine: a client goroutine puts a request of req bytes
// into the request ring and spins for the reply; a server goroutine spins
// for the request, copies it out (as a decoder reads it) and publishes a
// reply of rep bytes written into the reply record in place, as the
// server's execute does. Both are locked to their own OS threads. The
// sizes are the SBE messages of the latency matrix (a 16-byte key and
// value: PING 16/16, GET 59/46, SET 75/32) and a request on either side of
// a record's first cache line, each with records of 16384 bytes (the
// configured default, every record at the same page offset) and of 16512
// (what the server lays 16384 out as: LaidOutRecordSize), beside the floor, one
// 8-byte counter each way:
//
//	go test -run '^$' -bench RecordLines -benchtime 200000x -count 5 ./transport/ring/
func BenchmarkRecordLines(b *testing.B) {
	b.Run("floor", benchLinesFloor)
	for _, size := range []int{DefaultRecordSize, LaidOutRecordSize(DefaultRecordSize)} {
		for _, s := range []struct {
			name     string
			req, rep int
		}{
			{"PING", 16, 16},
			{"GET", 59, 46},
			{"SET", 75, 32},
			{"first-line", firstLine, 16},
			{"first-line+1", firstLine + 1, 16},
		} {
			b.Run(fmt.Sprintf("%s/%d-%d/record%d", s.name, s.req, s.rep, size), func(b *testing.B) { benchLines(b, s.req, s.rep, size) })
		}
	}
}

func benchLines(b *testing.B, reqLen, repLen, size int) {
	const records = DefaultRecords
	g := newGeometry(records, size)
	mem, err := unix.Mmap(-1, 0, g.size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_ANONYMOUS|unix.MAP_POPULATE)
	if err != nil {
		b.Fatal(err)
	}
	defer unix.Munmap(mem)
	// Both rings live in one shared mapping, each end used by one of the
	// two goroutines only: the producer's and consumer's methods carry the
	// ordering (release stores of header words and positions, acquire
	// loads), as between a client and a server process.
	creq, crep := newProducer(mem, g.reqBase, records, size), newConsumer(mem, g.repBase, records, size)
	sreq, srep := newConsumer(mem, g.reqBase, records, size), newProducer(mem, g.repBase, records, size)
	msg := make([]byte, reqLen)
	for i := range msg {
		msg[i] = byte(i + 1)
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		var in [256]byte
		reply := make([]byte, repLen)
		for i := range reply {
			reply[i] = byte(i)
		}
		for spins := 0; ; spins++ {
			p, _, ok := sreq.peek()
			if !ok {
				if spins&1023 == 0 {
					select {
					case <-stop:
						return
					default:
					}
				}
				continue
			}
			copy(in[:], p) // read the whole request, as a decoder would
			for !srep.hasSpace() {
			}
			out := srep.claim()[:repLen]
			copy(out, reply)
			out[0] = in[len(p)-1]
			sreq.release()
			srep.publish(repLen, false)
			sreq.commit()
		}
	}()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var got []byte
	round := func() {
		for !creq.hasSpace() {
		}
		creq.put(msg, false)
		for {
			p, _, ok := crep.peek()
			if ok {
				got = append(got[:0], p...)
				crep.release()
				crep.commit()
				return
			}
		}
	}
	for range 20_000 {
		round()
	}
	rec := latency.New()
	b.ReportAllocs()
	b.ResetTimer()
	rec.Rounds(b.N, round)
	b.StopTimer()
	close(stop)
	<-done
	if len(got) != repLen {
		b.Fatalf("reply of %d bytes, want %d", len(got), repLen)
	}
	rec.Report(b)
}

// firstLine is the longest payload whose record fits its first cache line.
const firstLine = cacheLine - recHeader

// benchLinesFloor is the floor in the same harness: one 8-byte counter
// each way, each in its own 128-byte block of the same mapping. It is
// benchFloor's loop with the ring's own stores (release-only MOVs, not
// benchFloor's XCHG) and the counters on separate lines, spelled out
// again: a shared helper would put a call through a func value or a
// branch on the layout inside the loop both measure.
func benchLinesFloor(b *testing.B) {
	mem, err := unix.Mmap(-1, 0, 4096, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_ANONYMOUS|unix.MAP_POPULATE)
	if err != nil {
		b.Fatal(err)
	}
	defer unix.Munmap(mem)
	const ping, pong = 256, 512
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		for last := int64(0); ; {
			// ping: written by the pinger (release), read here (acquire).
			v := shm.LoadInt64Acquire(mem, ping)
			if v == last {
				continue
			}
			if v < 0 {
				return
			}
			last = v
			// pong: written here (release), read by the pinger (acquire).
			shm.StoreInt64ReleaseOnly(mem, pong, v)
		}
	}()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	seq := int64(0)
	round := func() {
		seq++
		shm.StoreInt64ReleaseOnly(mem, ping, seq)
		for shm.LoadInt64Acquire(mem, pong) != seq {
		}
	}
	for range 20_000 {
		round()
	}
	rec := latency.New()
	b.ReportAllocs()
	b.ResetTimer()
	rec.Rounds(b.N, round)
	b.StopTimer()
	shm.StoreInt64ReleaseOnly(mem, ping, -1)
	<-done
	rec.Report(b)
}
