// Package driver is an Aeron media driver written in Go, for IPC and UDP:
// unchanged Aeron Java and C clients, and goblin's own Go client (package
// aeron), connect to it exactly as to the real Java or C media driver.
//
// It owns an Aeron directory and lays out what the real drivers lay out —
// cnc.dat 0.2.0 (to-driver ring buffer, to-clients broadcast buffer,
// counters, distinct error log), loss-report.dat and one log buffer per
// publication under publications/ — with the same fields in the same
// order, so Aeron's AeronStat, ErrorStat, LossStat and StreamStat read it
// too. Its conductor answers every command a 1.51 client sends with the
// responses and error codes of the Java driver (DriverConductor) and runs
// IPC: concurrent publications shared by their publishers, exclusive
// publications, session ids and channel parameters, the publication limit
// from the slowest tethered subscriber, untethered subscribers, unblocking
// a publisher that died mid-claim, end of stream, IPC response channels,
// image rejection, client liveness and the system counters. It runs UDP
// too, as the Java driver's sender and receiver do: unicast and multicast
// publications and subscriptions, SETUP, status messages, NAKs and
// retransmits, flow control, multi-destination publications, response
// channels and loss reports, interoperating with the Java and C drivers
// on the other host. Multi-destination subscriptions (control-mode=manual
// on a subscription) are refused with NOT_SUPPORTED.
//
// # Running it
//
// New prepares the directory and returns a driver whose duty cycle the
// owner runs: call DoWork from one goroutine, as goblin's server loop does,
// so an Aeron IPC server is one thread. Start runs the cycle on a goroutine
// of its own, locked to an OS thread, idling with the back-off the Java
// driver uses. Close deletes the logs and marks the CnC file shut down.
//
//	d, err := driver.Start(driver.Options{Dir: "/dev/shm/aeron-me"})
//	defer d.Close()
//	client, err := aeron.Connect(aeron.Options{Dir: d.Dir()})
//
// The command aeron/cmd/aeronmd runs it with the C driver's command line.
//
// # Files
//
// The directory is created 0700 and every file 0600 (Options.DirPerm and
// FilePerm): only the driver's user can use it, unlike the real drivers,
// which leave that to the umask. A directory a live driver uses (its CnC
// heartbeat younger than the driver timeout) is refused with
// ErrActiveDriver; any other existing directory is deleted first, after
// its distinct errors are saved beside it, as the real drivers do.
//
// # Structure
//
// The code is laid out as the C driver's is, so someone who knows
// aeron_driver_conductor.c and its neighbours finds each part by name.
// Three agents, each a type that owns its state, run one after the other
// in DoWork (the shared threading mode) and share a driverContext
// (aeron_driver_context_t: options, counters, error log, clocks):
//
//   - conductor (conductor.go, conductorpublications.go,
//     conductorsubscriptions.go, destinations.go, clientproxy.go): client
//     commands and responses, clients, links, the publications and images
//     for their life, the entity maps and session ids, the timers;
//   - sender (sender.go): the network publications while they send and
//     the send channel endpoints it reads control messages on;
//   - receiver (receiver.go): the receive channel endpoints, the images
//     it serves while connected and the sources asked for SETUP.
//
// Each entity's behaviour is its own methods, in its file:
// ipcpublication.go, networkpublication.go, publicationimage.go,
// sendchannelendpoint.go and receivechannelendpoint.go; the conductor's
// side of an entity takes the conductor (p.onTimeEvent(c, now)), as the
// C functions take it. The Driver (driver.go) embeds the context and the
// conductor and holds the sender and receiver; it is the owner's API.
//
// # Goroutines and memory
//
// DoWork and Close belong to one goroutine at a time. Every access to
// shared memory goes through internal/shm with the ordering the Aeron
// protocol specifies (written by whom, read by whom, noted at each call).
// In steady state — clients connected, messages flowing — a duty cycle
// allocates nothing.
package driver
