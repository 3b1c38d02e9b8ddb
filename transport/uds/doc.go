// Package uds is goblin's socket transport: Unix domain sockets and TCP,
// each carrying RESP or SOFH-framed SBE.
//
// The server side (Listen, Server) is polled by the store loop: the
// listening socket and every client are non-blocking and watched by one
// epoll instance; Poll accepts, reads, hands complete requests to a Handler
// inline and writes the replies, with no goroutine per connection and no
// channel between a request and its execution. Pipelined requests are
// answered in order with one write per read batch; partial reads and
// writes are resumed; each client's queued replies are bounded (a client
// that stops reading is disconnected) as are its incomplete requests, the
// number of clients and, optionally, idle time. Unix socket files are
// created 0660, stale ones replaced, live ones left alone (ErrAddrInUse);
// TCP binds 127.0.0.1 unless told otherwise.
//
// Checking the sockets is a system call, so Poll makes it only every
// Config.CheckEvery calls while the sockets are quiet, on every call while
// they are busy, and at once when the loop reports it is idle (CheckNow);
// the loop parks on WaitFD. See docs/server.md for the measured costs.
//
// The client side (Dial, Conn) is a transport.Conn over a connected
// socket, used by the client library.
package uds
