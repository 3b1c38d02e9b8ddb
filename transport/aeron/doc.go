// Package aeron is goblin's Aeron transport, built on goblin's own Aeron
// client (package github.com/goblin-kv/goblin/aeron): clients send one
// request per Aeron message on a request stream, and the server answers
// each client on its own response channel.
//
//	aeron:ipc?proto=sbe                                        one driver, shared memory
//	aeron:udp?endpoint=SERVER_IP:40123|control=SERVER_IP:40124  two drivers, UDP
//
// IPC: the server subscribes to aeron:ipc; a client adds a response
// subscription aeron:ipc?control-mode=response and then a request
// publication aeron:ipc?response-correlation-id=<subscription id>; the
// server answers on aeron:ipc?control-mode=response|response-correlation-id=<image
// correlation id>, which the driver links to that client's subscription.
//
// UDP: the server subscribes to aeron:udp?endpoint=SERVER_IP:REQUEST_PORT;
// its response publications are
// aeron:udp?control=SERVER_IP:RESPONSE_PORT|control-mode=response, which
// bind the control address on the server. A client's response subscription
// names the same server control URI; Aeron's response correlation learns
// the client's return address. Never give the client's own IP as control:
// the server's driver would try to bind an address it does not own.
//
// The store loop polls every client's request image inline (Server.Poll,
// at most FragmentLimit requests per call), executes each request through
// the Handler and offers the reply on that client's publication. Adding and
// closing publications and supervising the media driver wait on the driver,
// so they happen on a manager goroutine that hands results to the loop.
// A reply that cannot be offered after OfferRetries immediate retries
// waits in that client's backlog, and the client's requests wait in its
// image, while each Poll retries it; a reply that still cannot go after
// OfferTimeout drops the client (Stats.Dropped). The loop never blocks on
// one client, and a moment's CPU starvation of the driver or the client is
// not taken for a client that stopped reading.
//
// A request or reply longer than the stream's maximum message (term length
// / 8) travels as chunk frames, goblin's own 16-byte header and a piece;
// shorter messages carry nothing extra (frame.go has the layout). The
// server's first message on every response stream is a hello naming its
// protocol and request limit: a client that names another protocol fails
// at the dial (transport.ErrProtocolMismatch), one that names none speaks
// the server's, and a request over the limit is refused before it is sent
// (transport.ErrMessageTooLarge, the connection kept).
//
// By default (driver=go) a server runs goblin's Go media driver (package
// aeron/driver) inside its own process in DefaultDir(), or the target's
// dir=, for IPC and UDP alike, and the store loop works its duty cycle.
// driver=java starts and supervises the real Java media driver (package
// aeron/javadriver) there instead and restarts it if it dies, re-adding
// its subscription; clients then get transport.ErrServerGone (or a
// timeout) and dial again. driver=external uses a driver something else
// runs. IPC clients use the server's driver
// directory (dir=, default DefaultDir()); UDP clients start a driver of
// their own unless given dir=. docs/transports.md has the profiles
// (frugal and continuous polling), the exact channels and how to choose
// addresses across hosts.
package aeron
