// Package javadriver starts and supervises the real Aeron media driver, the
// Java one from Maven Central (io.aeron:aeron-all), as a child process in a
// private Aeron directory.
//
// goblin's own Aeron client (package aeron) talks to a media driver through
// the driver's shared-memory files. goblin runs its own Go driver (package
// aeron/driver) by default; this package is how goblin-server's driver=java
// listeners, the interop tests and the benchmarks that compare the two get
// the real Java driver with no manual step:
//
//	d, err := javadriver.Start(ctx, javadriver.Options{})
//	if err != nil {
//		return err // errors.Is(err, javadriver.ErrJarNotFound): run `make setup`
//	}
//	defer d.Stop()
//	// point the Aeron client at d.Dir(); <-d.Done() fires if the driver dies
//
// Start finds java ($JAVA_HOME/bin/java, then $PATH) and the aeron-all jar
// (Options.JarPath, then $GOBLIN_AERON_JAR, then the local Maven repository
// path for AeronVersion, which `make setup` fills), passes the JVM flags
// Aeron needs on Java 17 and later, and returns once the driver has written
// its CnC file and a fresh heartbeat. The driver's stdout and stderr go to a
// log file (Driver.LogPath); errors from a driver that exits early quote its
// last lines.
//
// # Profiles
//
// The driver's threading mode and idle strategies come as a Profile:
//
//   - Frugal (the default): one shared driver thread that backs off (spin,
//     yield, then park up to 1 ms) when idle. It costs almost nothing when
//     there is no traffic and fits a 2-core machine that also runs the
//     client and the server.
//   - SpinShared: one shared driver thread that busy-spins. One whole core.
//     The best spinning choice on 2 cores.
//   - Spin: SHARED_NETWORK threading; the conductor busy-spins and the
//     sender/receiver thread polls with no idle at all (noop). Two whole
//     cores.
//   - SpinDedicated: DEDICATED threading; sender and receiver noop, the
//     conductor busy-spins. Three whole cores.
//
// Spinning profiles are for latency runs on machines with cores to spare. On
// a 2-core machine a spinning client, a spinning server and a spinning
// driver starve one another: each spinner holds a core until the scheduler
// preempts it, and a message then waits for a time slice (milliseconds)
// instead of microseconds. Aeron IPC does not need the driver in the data
// path at all (publisher and subscriber share the log buffer), so for IPC
// latency on 2 cores use Frugal for the driver and spin only in the client
// and server.
//
// # Supervision
//
// Done is closed when the driver process exits for any reason; Wait returns
// why. Stop asks the driver to shut down (SIGTERM, which Aeron handles by
// closing cleanly and deleting its directory), waits Options.StopGrace, then
// kills it (SIGKILL). Restart starts a new driver on the same directory after
// the old one died, which is what a server does to recover. On Linux the
// driver gets SIGTERM if the process that started it dies, and deletes its
// directory as it shuts down. Start claims an explicit directory first
// (Claim): it refuses one a live driver owns and ends a driver whose
// supervisor died.
//
// # Privacy
//
// The driver's log buffers hold every message. It runs under umask 077, so
// its directory is 0700 and its files 0600; Options.Group shares them with
// a group instead (directories 02750, files 0660).
package javadriver
