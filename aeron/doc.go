// Package aeron is a pure-Go Aeron client: it talks to an Aeron media
// driver — the Java or C driver (1.51.x), or goblin's own Go driver
// (package aeron/driver) — through the driver's shared-memory files, so Go
// programs share streams with Java, C and C++ Aeron programs over IPC and UDP.
//
// # Use
//
//	client, err := aeron.Connect(aeron.Options{Dir: "/dev/shm/aeron-me"})
//	pub, err := client.AddExclusivePublication("aeron:ipc", 1001)
//	sub, err := client.AddSubscription("aeron:ipc", 1001)
//	for pub.Offer(msg) < 0 { idle.Idle(0) }        // position, or a status < 0
//	sub.Poll(func(buf []byte, h *aeron.Header) { ... }, 10)
//
// # Goroutines and the hot path
//
// Each Client runs one conductor goroutine that reads driver events, keeps
// the client alive (stamping its client-heartbeat counter every 500 ms, as
// 1.51 clients do), watches the driver's heartbeat and unmaps closed logs
// after a linger. The conductor is never on the message path: Offer,
// TryClaim, Poll, ControlledPoll and NextMessage touch only mapped memory
// (with the orderings below), take no lock and allocate nothing.
//
//   - Publication: any number of goroutines may offer concurrently.
//   - ExclusivePublication: one goroutine at a time.
//   - Subscription and its Images: one polling goroutine at a time.
//   - Client methods (Add*, Close, Counters...): any goroutine; they
//     serialise on the conductor lock.
//   - Handlers in Options and image handlers run on the conductor and must
//     not call Add*/Close.
//
// When the driver is lost (heartbeat older than the driver timeout, or the
// CnC marked shut down) or the driver times the client out, every
// publication, subscription and image is closed (offers return Closed,
// polls return 0), the error goes to Options.ErrorHandler and Client.Err,
// and Add* calls fail with ErrClientClosed. Mappings stay until Close.
//
// # Memory ordering
//
// The Aeron protocol is specified with acquire loads, release stores and
// full-fence read-modify-writes on shared memory. Shared memory is read and
// written through internal/shm's accessors, which map those onto sync/atomic
// (sequentially consistent, stronger than the protocol requires) or, for a
// release store that needs nothing more, onto one plain store (a MOV on
// amd64, release_amd64.s), with one exception: an exclusive publication's
// unfragmented Offer on amd64. That path is assembly (frame_amd64.s:
// offerFast, and appendFrame), reading the publication limit and storing
// the frame and the raw tail with plain MOVs (acquire loads and release
// stores on amd64) through raw pointers into the mapped files: the uintptr
// addresses exclusive.go keeps in appendState, and the pointers frame.go
// forms. Elsewhere and under the race detector the same accesses go through
// internal/shm (frame_other.go).
// Each access documents who writes, who reads and which ordering holds.
package aeron
