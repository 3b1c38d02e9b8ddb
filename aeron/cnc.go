package aeron

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"time"

	"github.com/goblin-kv/goblin/internal/shm"
)

// CnC file layout (cnc.dat): a 128-byte header, then the to-driver ring
// buffer, the to-clients broadcast buffer, counters metadata, counters
// values and the error log, back to back.
const (
	cncVersion            = 0x200 // 0.2.0: major 0, minor 2
	cncMetaLength         = 128
	cncVersionOffset      = 0
	cncToDriverLength     = 4
	cncToClientsLength    = 8
	cncCountersMetaLength = 12
	cncCountersValsLength = 16
	cncErrorLogLength     = 20
	cncClientLiveness     = 24
	cncStartTimestamp     = 32
	cncPID                = 40
)

// CnCFile is the name of the driver's command-and-control file.
const CnCFile = "cnc.dat"

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
	if len(data) < cncMetaLength {
		return nil, fmt.Errorf("cnc file of %d bytes is too short", len(data))
	}
	// Version: the driver stores it last with release ("ready"); acquire.
	v := shm.LoadInt32Acquire(data, cncVersionOffset)
	if v == 0 {
		return nil, fmt.Errorf("%w: driver has not finished creating the CnC file", ErrDriverTimeout)
	}
	if v>>16 != cncVersion>>16 || (v>>8)&0xFF < (cncVersion>>8)&0xFF {
		return nil, fmt.Errorf("%w: driver has %d.%d.%d, client needs %d.%d.x", ErrCnCVersion,
			v>>16, (v>>8)&0xFF, v&0xFF, cncVersion>>16, (cncVersion>>8)&0xFF)
	}
	lens := [5]int{
		int(shm.GetInt32(data, cncToDriverLength)),
		int(shm.GetInt32(data, cncToClientsLength)),
		int(shm.GetInt32(data, cncCountersMetaLength)),
		int(shm.GetInt32(data, cncCountersValsLength)),
		int(shm.GetInt32(data, cncErrorLogLength)),
	}
	total := cncMetaLength
	for _, l := range lens {
		if l < 0 {
			return nil, fmt.Errorf("cnc file has a negative section length")
		}
		total += l
	}
	if total > len(data) {
		return nil, fmt.Errorf("cnc file of %d bytes is shorter than its sections (%d)", len(data), total)
	}
	c := &CnC{data: data}
	off := cncMetaLength
	secs := []*[]byte{&c.toDriver, &c.toClients, &c.countersMeta, &c.countersValues, &c.errorLog}
	for k, s := range secs {
		*s = data[off : off+lens[k] : off+lens[k]]
		off += lens[k]
	}
	c.clientLiveness = time.Duration(shm.GetInt64(data, cncClientLiveness))
	c.driverStartTime = shm.GetInt64(data, cncStartTimestamp)
	c.driverPID = shm.GetInt64(data, cncPID)
	return c, nil
}

// Counters returns a reader over the driver's counters.
func (c *CnC) Counters() *CountersReader {
	return &CountersReader{meta: c.countersMeta, values: c.countersValues}
}

// ReadErrors calls fn for every distinct error the driver logged that was
// last observed at or after since (epoch ms; 0 for all) and returns the count.
func (c *CnC) ReadErrors(since int64, fn func(ErrorRecord)) int {
	return readErrorLog(c.errorLog, since, fn)
}

// DriverHeartbeat is the driver's last liveness stamp (epoch ms); −1 means
// the driver shut down.
func (c *CnC) DriverHeartbeat() int64 {
	return shm.LoadInt64Acquire(c.toDriver, len(c.toDriver)-rbTrailerLength+rbHeartbeatOffset)
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
