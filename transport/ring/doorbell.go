package ring

// The doorbell: how a client wakes a server loop that parked.
//
// The kernel cannot see a record land in shared memory, so a loop that
// parks (the backoff idle strategy's bounded wait) would leave a ring
// request waiting for the rest of the park, up to a millisecond by default.
// The server therefore makes one eventfd (the doorbell) and passes it to
// every client with the handshake answer (SCM_RIGHTS). The server loop
// parks in epoll_wait on it (server.Sleeper), and:
//
//   - before it parks, the server stores 1 in the serverParked word of every
//     client's file, then looks at every request ring once more and calls
//     the park off if one holds a record (PrepareToPark);
//   - a client, after publishing a request, loads serverParked; if it is 1
//     it clears it (compare-and-swap, so it rings once per park however
//     many requests it sends) and writes 1 to the eventfd;
//   - when the park ends, the server stores 0 in every file and drains the
//     eventfd (Unparked).
//
// The spinning path pays the fenced publish below and one load of a cache
// line nobody writes while the loop spins, so it stays in the client's
// cache.
//
// Ordering. This is Dekker's pattern (each side stores, then loads what
// the other stored), which loses wake-ups unless there is a store-load
// fence between each side's store and its load: otherwise the client can
// read serverParked == 0 while its request still sits in its store buffer,
// and the server, having just stored 1, does not see the request and
// parks. A locked instruction on every request would put the fence on the
// client, but it is not free: publishing requests with XCHG instead of MOV
// cost 4 ns on a 410 ns spinning PING p50 and 125 ns on a 520 ns SBE SET
// p50 (2-core development VM). So the fence is made asymmetric, as
// user-space RCU and hazard pointers do: the client keeps its plain MOV
// and the server, after storing 1 and before looking at the rings, calls
// membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED), which runs a full barrier on
// every CPU running a thread of a process that registered for it (the
// clients register when they dial; a thread not running has passed a
// barrier when it was switched out). Then either the server's look sees
// the request, or the client's load, which comes after a barrier that
// comes after the server's store, sees 1: no wake-up is lost. The cost is
// one system call and a few inter-processor interrupts per park, at most a
// thousand times a second, and only when the server is idle.
//
// Where membarrier is missing (kernels before 4.16, a seccomp filter), the
// server says so in the header (flagBarrier unset) or the client cannot
// register; the client then publishes requests with the sequentially
// consistent store (producer.publishFenced) and pays the locked
// instruction instead.
//
// The client also looks at serverParked whenever it starts waiting and
// once per liveness interval (1 ms) while it waits: the room it just made
// in its reply ring may be what a parked server waits for (a request with
// no room for its reply does not call a park off).
//
// A doorbell write that fails (EAGAIN when the counter is saturated, or a
// server that closed) is ignored: the server is awake or going.

import (
	"encoding/binary"
	"runtime/debug"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/goblin-kv/goblin/internal/shm"
)

// newDoorbell makes the server's eventfd.
func newDoorbell() (int, error) {
	return unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
}

// WakeFD is the doorbell, an eventfd that polls readable when a client
// rang (server.Sleeper).
func (s *Server) WakeFD() int { return s.bell }

// PrepareToPark tells every client the loop is about to park, then looks
// at every request ring once more: it returns false, and the loop does not
// park, when a request it could serve is already waiting (server.Sleeper).
func (s *Server) PrepareToPark() bool {
	if s.closed {
		return true
	}
	s.stats.Parks++
	if !s.announcePark() {
		s.stats.ParksSkipped++
		return false
	}
	return true
}

// PrepareToRest is PrepareToPark for a busy cycle's rest (a background
// save's, server.RestPreparer): the same announcement, not counted among
// the parks (Stats.Parks, ParksSkipped).
func (s *Server) PrepareToRest() bool {
	if s.closed {
		return true
	}
	return s.announcePark()
}

// announcePark is PrepareToPark's work: tell every client, then look at
// every request ring once more.
func (s *Server) announcePark() bool {
	defer s.survive()
	debug.SetPanicOnFault(true)
	for _, c := range s.clients {
		// serverParked: written by the server (1 here, 0 in Unparked) with
		// a sequentially consistent store (XCHG), so the loads of the
		// request rings below cannot pass it; cleared by a client (CAS)
		// when it rings. Read by the client (acquire) after it publishes.
		shm.StoreInt64Release(c.mem, offParked, 1)
	}
	if s.barrier && len(s.clients) > 0 {
		// The other half of the fence (see Ordering above). It cannot
		// fail once MEMBARRIER_CMD_QUERY offered it; if it did, a request
		// published in the last nanoseconds could wait for this park.
		_ = membarrier(membarrierGlobalExpedited)
	}
	for _, c := range s.clients {
		// A request counts only if serve would take it: with its reply
		// ring full the client is not reading, and it rings again when it
		// frees room (Conn.waitFor).
		if c.ready() {
			return false
		}
	}
	return true
}

// Unparked ends a park: it clears serverParked in every client's file and
// drains the doorbell (server.Sleeper).
func (s *Server) Unparked() {
	if s.closed {
		return
	}
	defer s.survive()
	debug.SetPanicOnFault(true)
	for _, c := range s.clients {
		// serverParked: see PrepareToPark. A client that read 1 just
		// before this store may still ring: the next park then ends at
		// once, and drains it.
		shm.StoreInt64Release(c.mem, offParked, 0)
	}
	if n, _ := unix.Read(s.bell, s.bellBuf[:]); n == len(s.bellBuf) {
		s.stats.Rings += int64(binary.NativeEndian.Uint64(s.bellBuf[:]))
	}
}

// ringIfParked rings the doorbell when the server announced a park. It is
// called after publishing a request, when the client starts waiting and
// once per liveness interval while it waits (see the ordering note above).
// Small enough to inline: the spinning path pays one load and a branch.
func (c *Conn) ringIfParked() {
	// serverParked: written by the server (seq-cst store of 1 before a park,
	// of 0 after it); read here (acquire) after the request's publish, with
	// the server's membarrier or the fenced publish between the two (see
	// Ordering above).
	if c.bell >= 0 && c.parked.Load() != 0 {
		c.ring()
	}
}

// ring rings the doorbell of a server that announced a park, clearing
// serverParked with a CAS so a client rings once per park, however many
// requests it sends during it.
func (c *Conn) ring() {
	if shm.CompareAndSwapInt64(c.mem, offParked, 1, 0) {
		// EAGAIN (counter saturated) or EBADF-like errors from a server
		// that is going: the server is awake or will not serve anyway.
		_, _ = unix.Write(c.bell, c.one[:])
		c.rang = true
	}
}

// membarrier(2) commands, from linux/membarrier.h.
const (
	membarrierQuery                   = 0
	membarrierGlobalExpedited         = 1 << 1
	membarrierRegisterGlobalExpedited = 1 << 2
)

func membarrier(cmd int) error {
	if _, _, e := unix.Syscall(unix.SYS_MEMBARRIER, uintptr(cmd), 0, 0); e != 0 {
		return e
	}
	return nil
}

// serverBarrierOK reports whether this kernel offers the expedited global
// barrier the server issues before parking.
func serverBarrierOK() bool {
	r, _, e := unix.Syscall(unix.SYS_MEMBARRIER, membarrierQuery, 0, 0)
	return e == 0 && r&(membarrierGlobalExpedited|membarrierRegisterGlobalExpedited) == membarrierGlobalExpedited|membarrierRegisterGlobalExpedited
}

// clientBarrier registers this process, once, for the server's barriers.
var clientBarrier = sync.OnceValue(func() bool {
	return membarrier(membarrierRegisterGlobalExpedited) == nil
})

// sendAnswer writes the handshake answer line with the doorbell and the
// client's memfd attached, in that order.
func sendAnswer(fd int, line string, bell, mem int) error {
	return unix.Sendmsg(fd, []byte(line), unix.UnixRights(bell, mem), nil, 0)
}

// takeRights returns the descriptors an SCM_RIGHTS message carried.
func takeRights(oob []byte) []int {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil
	}
	var fds []int
	for i := range msgs {
		if got, err := unix.ParseUnixRights(&msgs[i]); err == nil {
			fds = append(fds, got...)
		}
	}
	return fds
}
