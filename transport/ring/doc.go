// Package ring is goblin's shared-memory transport: every client gets its
// own pair of single-producer single-consumer rings of fixed-size records
// (requests one way, replies the other) in a file the server creates in its
// directory, /dev/shm/goblin for the target ring:///dev/shm/goblin.
//
// A client finds the server through the handshake socket in that directory
// (ctl.sock): it sends one hello line naming the protocol, the server makes
// and maps a file for it and answers with the file's name, and from then on
// requests and replies cross shared memory only. The socket stays open as a
// liveness signal: the kernel hangs it up when either process dies, however
// it dies, and the other side reclaims or reports it. The server also beats
// a heartbeat counter in every file so a client notices a hung server.
//
// The loop side (Server) implements transport.Server and is polled by the
// store loop; the client side (Conn) implements transport.Conn and spins for
// replies. The wire format, ordering rules and the handshake are described
// in docs/transports.md and beside the code in spsc.go and layout.go.
//
// A server loop that parks (server.IdleBackoff) cannot see a request land
// in shared memory, so the server hands every client a doorbell, an
// eventfd, with the handshake answer; a client that finds the loop parked
// rings it (doorbell.go, and server.Sleeper, which Server implements).
//
// A spinning client and a spinning server loop each keep one CPU core busy.
package ring
