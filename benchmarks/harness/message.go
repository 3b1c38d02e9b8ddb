package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
)

// messageTarget returns, for a message transport (ring, Aeron IPC, Aeron
// UDP), the target goblin-server listens on, a readiness check, and what to
// record (client.target overrides the target the client dials). Transports
// the harness cannot drive yet report ErrUnavailable.
func messageTarget(ctx context.Context, cfg *Config, prof Profile, transport, proto, dir string) (listen string, ready func() error, info map[string]string, err error) {
	switch transport {
	case TRing:
		// The ring directory lives in the case directory unless /dev/shm is
		// there (it is tmpfs: the rings' pages never touch a disk).
		rdir := filepath.Join(dir, "ring")
		if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
			if rdir, err = os.MkdirTemp("/dev/shm", "goblin-bench-"); err != nil {
				return "", nil, nil, err
			}
		} else if err := os.MkdirAll(rdir, 0o700); err != nil {
			return "", nil, nil, err
		}
		listen = "ring://" + rdir + "?proto=" + proto
		wait := "spin"
		if prof.ClientWait == "block" {
			wait = "park"
		}
		info = map[string]string{
			"client.target": listen + "&wait=" + wait,
			"ring.dir":      rdir,
			"cleanup.dir":   rdir,
		}
		return listen, dialable("unix", filepath.Join(rdir, "ctl.sock")), info, nil
	}
	return "", nil, nil, fmt.Errorf("%w: the harness does not drive goblin over %s yet (the Aeron transport is not in this build)", ErrUnavailable, transport)
}

// transportServerArgs are goblin-server flags a message transport needs
// (driver directory, profile); none yet.
func transportServerArgs(cfg *Config, prof Profile, transport, dir string) []string { return nil }

// goblinCheckTransport reports whether the build can measure goblin over a
// transport at all.
func goblinCheckTransport(transport string, p Protocol) error {
	switch transport {
	case TUDS, TTCP:
		if p == RESP || libraryDial != nil {
			return nil
		}
		return fmt.Errorf("%w: goblin %s over %s needs the goblin client library (package client)", ErrUnavailable, p, transport)
	case TRing:
		return ringClientCheck()
	}
	return fmt.Errorf("%w: the harness does not drive goblin over %s yet (the Aeron transport is not in this build)", ErrUnavailable, transport)
}

// unsupportedListen recognises goblin-server refusing a target scheme it
// was built without, so the case is reported unavailable, not failed.
var unsupportedListen = regexp.MustCompile(`(?i)no [a-z-]+ transport in this build|unknown (target )?scheme|(scheme|transport)[^\n]{0,60}(unsupported|not supported|not registered)`)
