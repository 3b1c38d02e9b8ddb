package aeronfeed

import (
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/goblin-kv/goblin/aeron"
	"github.com/goblin-kv/goblin/aeron/driver"
)

// Media is a media driver of this process's own, on a goroutine of its
// own (driver.Start), in a private directory, with a client connected to
// it: what replication over Aeron publishes and subscribes through, apart
// from any Aeron listener the server has.
type Media struct {
	Driver *driver.Driver
	Client *aeron.Client
}

// StartMedia starts a driver in a fresh directory under /dev/shm (or the
// temporary directory) and connects a client to it.
func StartMedia(log *slog.Logger) (*Media, error) {
	base := "/dev/shm"
	if st, err := os.Stat(base); err != nil || !st.IsDir() {
		base = os.TempDir()
	}
	dir, err := os.MkdirTemp(base, "goblin-repl-aeron-")
	if err != nil {
		return nil, fmt.Errorf("aeronfeed: media driver directory: %w", err)
	}
	// Its only clients are this process's Publisher and Source, which
	// wake it after they offer or consume: it may park longer when quiet.
	o := driver.Options{Dir: dir, DirDeleteOnShutdown: true, WakeOnOffer: true}
	if log != nil {
		o.Warn = func(msg string) { log.Warn("aeron driver (replication): " + msg) }
	}
	d, err := driver.Start(o)
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("aeronfeed: start the media driver: %w", err)
	}
	// The client's own commands (Add*, Close) wait for the driver's reply
	// on the caller's goroutine, the loop's: ring the driver's doorbell
	// while waiting, or a quiet driver's long park would hold the loop.
	c, err := aeron.Connect(aeron.Options{Dir: dir, DriverTimeout: 10 * time.Second,
		WhileAwaiting: func() int { d.Wake(); return 0 }})
	if err != nil {
		d.Close()
		return nil, fmt.Errorf("aeronfeed: connect to the media driver: %w", err)
	}
	return &Media{Driver: d, Client: c}, nil
}

// Close closes the client, then the driver (its directory goes).
func (m *Media) Close() error {
	err := m.Client.Close()
	if derr := m.Driver.Close(); err == nil {
		err = derr
	}
	return err
}
