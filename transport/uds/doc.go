// Package uds is goblin's socket transport: Unix domain sockets and TCP,
// each carrying RESP or SOFH-framed SBE.
//
// It serves TCP too (tcp:// targets), with the same code as Unix sockets
// but for binding (listen.go) and TCP_NODELAY on each client. The name is
// the project's declared layout, from the transport it served first.
//
// The server side (Listen, Server) is polled by the store loop: the
// listening socket and every client are non-blocking and watched by one
// epoll instance; Poll accepts, reads, hands complete requests to a
// transport.StreamHandler's sessions (the stream contract) inline and
// writes the replies, with no goroutine per connection and no
// channel between a request and its execution. Each connection's protocol
// (RESP or SOFH-framed SBE) is recognised from its first bytes. Pipelined
// requests are answered in order with one write per read batch; partial
// reads and writes are resumed, and a partial request is offered again
// only with new bytes (the session's parser resumes where it stopped).
//
// Limits: each client's queued replies are bounded (a client that stops
// reading is disconnected) as are its incomplete requests, the replies its
// requests may produce per Poll (PassOutput: the rest wait for the next
// Poll), the number of clients and, optionally, idle time; a Budget bounds
// the buffers of all clients of the listeners sharing it, disconnecting
// the biggest. Clients are served from the listener's shared buffers and
// hold memory of their own only for what is left over. A session may ask
// for its client to be held back (Delayer; the server's sessions do after
// a wrong password).
//
// Unix socket files are created 0660, stale ones replaced, live ones left
// alone (ErrAddrInUse); a socket directory inside a world-writable one must
// be the server user's own (ErrUnsafeDir). TCP binds 127.0.0.1 unless told
// otherwise.
//
// Checking the sockets is a system call, so Poll makes it only every
// Config.CheckEvery calls while the sockets are quiet, on every call while
// they are busy, and at once when the loop reports it is idle (CheckNow);
// the loop parks on WaitFD. See docs/server.md for the measured costs.
//
// A TCP listener with Config.TLS serves TLS (tls:// targets): the loop
// accepts as usual, a goroutine per client makes the handshake, and the
// loop then runs crypto/tls's record layer itself over a net.Conn that
// never waits (loopConn: a read reports would-block, a write keeps what
// the socket did not take), so a TLS request costs one wake-up of the
// loop, as a plain one, and the loop never blocks on a TLS peer (tls.go,
// tlsloop.go; tlsconfig.go turns Redis's tls-* settings into a
// tls.Config).
//
// The client side (Dial, DialTLS, Conn) is a transport.Conn over a
// connected socket, used by the client library.
package uds
