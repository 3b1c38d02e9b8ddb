// Package server runs goblin: one store, the command engine, and every
// transport built from Options.Listen, all owned by a single loop
// goroutine locked to its OS thread.
//
// Each duty cycle the loop polls every transport.Server (which executes
// requests inline through the engine), runs a bounded step of store
// maintenance, publishes its plain counters to the Prometheus collector now
// and then, and hands the cycle's work count to its idle strategy (an
// idle.Idler): spin, yield or backoff (the default, which parks on the
// socket transports' epoll descriptors so an idle server sleeps yet wakes
// at once for a socket request). Nothing on a request's path crosses a
// goroutine, a channel or a lock.
//
// Each transport is a Builder in one fixed table (build.go): it turns a
// target into a transport.Server using the Env (options, logger, engine
// handlers) the server gives it. The socket transports are built in
// transports.go, the ring in ring.go and Aeron in aeron.go; package server
// links them all (the client library, by contrast, links the ring and
// Aeron only when a program imports them).
//
// cmd/goblin-server turns flags into Options; docs/server.md documents
// them and docs/metrics.md the metrics.
package server
