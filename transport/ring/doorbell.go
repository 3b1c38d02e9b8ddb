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
// the other stored), which loses wake-ups unless both sides put a
// store-load fence between their store and their load. The server's store
// of 1 is sequentially consistent (a locked XCHG on amd64), once per park.
// The client publishes a request with a sequentially consistent store too
// (producer.publishFenced) instead of the plain release store (MOV) the
// rings otherwise use: with a MOV the later load of serverParked could pass
// the store while it sits in the store buffer, read 0 while the server,
// having just stored 1, does not yet see the record, and the request would
// wait out the park. Measured on the 2-core development VM (-benchtime
// 100000x, interleaved runs): the fence adds about 4 ns to a 410 ns
// spinning PING p50, the flag load alone about 1 ns. With both fences at
// least one side sees the other's store: the server sees the record and
// calls the park off, or the client sees the flag and rings.
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
	for _, c := range s.clients {
		// serverParked: written by the server (1 here, 0 in Unparked) with
		// a sequentially consistent store (XCHG), so the loads of the
		// request rings below cannot pass it; cleared by a client (CAS)
		// when it rings. Read by the client (acquire) after it publishes.
		shm.StoreInt64Release(c.mem, offParked, 1)
	}
	for _, c := range s.clients {
		// A request counts only if serve would take it: with its reply
		// ring full the client is not reading, and it rings again when it
		// frees room (Conn.waitFor).
		if _, _, ok := c.req.peek(); ok && c.rep.hasSpace() {
			s.stats.ParksSkipped++
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
func (c *Conn) ringIfParked() {
	// serverParked: written by the server (seq-cst store of 1 before a park,
	// of 0 after it); read here (acquire) after the request's seq-cst
	// publish, which the load cannot pass (see Ordering above); cleared
	// here with a CAS so a client rings once per park, however many
	// requests it sends during it.
	if c.bell < 0 || shm.LoadInt64Acquire(c.mem, offParked) == 0 {
		return
	}
	if shm.CompareAndSwapInt64(c.mem, offParked, 1, 0) {
		// EAGAIN (counter saturated) or EBADF-like errors from a server
		// that is going: the server is awake or will not serve anyway.
		_, _ = unix.Write(c.bell, c.one[:])
		c.rang = true
	}
}

// schedYield gives the rest of the thread's time slice away (sched_yield);
// it does not block, so it is a raw system call.
func schedYield() { unix.RawSyscall(unix.SYS_SCHED_YIELD, 0, 0, 0) }

// sendAnswer writes the handshake answer line with the doorbell attached.
func sendAnswer(fd int, line string, bell int) error {
	return unix.Sendmsg(fd, []byte(line), unix.UnixRights(bell), nil, 0)
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
