package aeron

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"time"

	"github.com/goblin-kv/goblin/aeron/internal/cnc"
	"github.com/goblin-kv/goblin/aeron/internal/counters"
	"github.com/goblin-kv/goblin/aeron/internal/errorlog"
	"github.com/goblin-kv/goblin/aeron/internal/ringbuffer"
	"github.com/goblin-kv/goblin/internal/shm"
)

// CnCFile is the name of the driver's command-and-control file.
const CnCFile = cnc.FileName

// DefaultDir is the Aeron directory the real clients use when none is
// configured: $AERON_DIR if set, else /dev/shm/aeron-<user> on Linux (or
// <tmp>/aeron-<user> where /dev/shm is missing), where <user> is $USER, the
// account name, or "default".
func DefaultDir() string {
	if d := os.Getenv("AERON_DIR"); d != "" {
		return d
	}
	name := os.Getenv("USER")
	if name == "" {
		if u, err := user.Current(); err == nil {
			name = u.Username
		}
	}
	if name == "" {
		name = "default"
	}
	base := os.TempDir()
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		base = "/dev/shm"
	}
	return filepath.Join(base, "aeron-"+name)
}

// CnC is a mapped cnc.dat: the driver's command-and-control file. Open one
// with OpenCnC to read counters and the error log without connecting a
// client (as AeronStat and ErrorStat do).
type CnC struct {
	data            []byte
	toDriver        []byte
	toClients       []byte
	countersMeta    []byte
	countersValues  []byte
	errorLog        []byte
	clientLiveness  time.Duration
	driverStartTime int64
	driverPID       int64
}

// OpenCnC maps dir/cnc.dat and checks its version and length. It does not
// wait for a driver: use Connect for that.
func OpenCnC(dir string) (*CnC, error) {
	path := filepath.Join(dir, CnCFile)
	data, err := shm.Map(path)
	if err != nil {
		return nil, err
	}
	c, err := parseCnC(data)
	if err != nil {
		shm.Unmap(data)
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

func parseCnC(data []byte) (*CnC, error) {
	l, m, err := cnc.Parse(data)
	switch {
	case errors.Is(err, cnc.ErrNotReady):
		return nil, fmt.Errorf("%w: %w", ErrDriverTimeout, err)
	case errors.Is(err, cnc.ErrVersion):
		return nil, fmt.Errorf("%w: %w", ErrCnCVersion, err)
	case err != nil:
		return nil, err
	}
	s := l.Slice(data)
	return &CnC{
		data:            data,
		toDriver:        s.ToDriver,
		toClients:       s.ToClients,
		countersMeta:    s.CountersMeta,
		countersValues:  s.CountersValues,
		errorLog:        s.ErrorLog,
		clientLiveness:  time.Duration(m.ClientLivenessTimeoutNs),
		driverStartTime: m.StartTimestampMs,
		driverPID:       m.PID,
	}, nil
}

// Counters returns a reader over the driver's counters.
func (c *CnC) Counters() *CountersReader {
	return counters.NewReader(c.countersMeta, c.countersValues)
}

// ReadErrors calls fn for every distinct error the driver logged that was
// last observed at or after since (epoch ms; 0 for all) and returns the count.
func (c *CnC) ReadErrors(since int64, fn func(ErrorRecord)) int {
	return errorlog.Read(c.errorLog, since, fn)
}

// DriverHeartbeat is the driver's last liveness stamp (epoch ms); −1 means
// the driver shut down.
func (c *CnC) DriverHeartbeat() int64 {
	// Writer: the driver conductor (release); acquire here.
	return shm.LoadInt64Acquire(c.toDriver, len(c.toDriver)-ringbuffer.TrailerLength+ringbuffer.ConsumerHeartbeatOffset)
}

// DriverPID is the driver's process id.
func (c *CnC) DriverPID() int64 { return c.driverPID }

// DriverStartTime is when the driver started (epoch ms).
func (c *CnC) DriverStartTime() int64 { return c.driverStartTime }

// ClientLivenessTimeout is how long the driver waits for a client's
// heartbeat before timing it out.
func (c *CnC) ClientLivenessTimeout() time.Duration { return c.clientLiveness }

// Close unmaps the file.
func (c *CnC) Close() error {
	d := c.data
	c.data = nil
	return shm.Unmap(d)
}

// ErrorRecord is one distinct error the driver logged.
type ErrorRecord = errorlog.Record
