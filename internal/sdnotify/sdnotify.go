// Package sdnotify tells a service manager (systemd with Type=notify, or
// anything that speaks its protocol) how the server is doing: READY=1 once
// it serves, STOPPING=1 when a shutdown begins, STATUS= lines, and the
// watchdog keep-alive WATCHDOG=1.
//
// The protocol is one datagram per message on the Unix socket named by
// $NOTIFY_SOCKET (a path, or an abstract name written with a leading '@'),
// the message being newline-separated VARIABLE=value assignments. Without
// $NOTIFY_SOCKET every call does nothing, so the server runs the same under
// a shell, a container runtime or systemd.
package sdnotify

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"time"
)

// Socket is the environment variable naming the notification socket.
const Socket = "NOTIFY_SOCKET"

// Notifier sends state changes to the service manager.
type Notifier struct {
	addr *net.UnixAddr // nil: no service manager is listening
}

// FromEnv returns a Notifier for $NOTIFY_SOCKET, or one that does nothing
// when the variable is unset or empty. A name that cannot be a Unix socket
// address is an error the caller should report (the unit is misconfigured).
func FromEnv() (*Notifier, error) {
	name := os.Getenv(Socket)
	if name == "" {
		return &Notifier{}, nil
	}
	if name[0] != '/' && name[0] != '@' {
		return &Notifier{}, fmt.Errorf("%s=%q: want an absolute path or an abstract name starting with @", Socket, name)
	}
	// Go writes an abstract address as a name starting with '@' as well.
	return &Notifier{addr: &net.UnixAddr{Name: name, Net: "unixgram"}}, nil
}

// Enabled says whether a service manager is listening.
func (n *Notifier) Enabled() bool { return n.addr != nil }

// Send sends one message, e.g. "READY=1\nSTATUS=serving". It does nothing
// without a service manager.
func (n *Notifier) Send(msg string) error {
	if n.addr == nil {
		return nil
	}
	c, err := net.DialUnix("unixgram", nil, n.addr)
	if err != nil {
		return fmt.Errorf("notify %s: %w", n.addr.Name, err)
	}
	defer c.Close()
	if _, err := c.Write([]byte(msg)); err != nil {
		return fmt.Errorf("notify %s: %w", n.addr.Name, err)
	}
	return nil
}

// Ready tells the manager the service is up, with a status line and the
// main process id (so a wrapper script may start the server).
func (n *Notifier) Ready(status string) error {
	return n.Send("READY=1\nSTATUS=" + status + "\nMAINPID=" + strconv.Itoa(os.Getpid()))
}

// Stopping tells the manager a shutdown has begun.
func (n *Notifier) Stopping(status string) error {
	return n.Send("STOPPING=1\nSTATUS=" + status)
}

// ErrNoWatchdog means the manager asked for no watchdog keep-alives.
var ErrNoWatchdog = errors.New("no watchdog requested")

// WatchdogInterval is how often the manager expects WATCHDOG=1 (half of
// $WATCHDOG_USEC, as sd_watchdog_enabled advises), or ErrNoWatchdog when
// $WATCHDOG_USEC is unset or meant for another process ($WATCHDOG_PID).
func WatchdogInterval() (time.Duration, error) {
	us := os.Getenv("WATCHDOG_USEC")
	if us == "" {
		return 0, ErrNoWatchdog
	}
	if pid := os.Getenv("WATCHDOG_PID"); pid != "" && pid != strconv.Itoa(os.Getpid()) {
		return 0, ErrNoWatchdog
	}
	v, err := strconv.ParseInt(us, 10, 64)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("WATCHDOG_USEC=%q: want a positive number of microseconds", us)
	}
	return time.Duration(v) * time.Microsecond / 2, nil
}
