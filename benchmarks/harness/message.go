package harness

import (
	"context"
	"fmt"
)

// messageTarget returns the listen target of a message transport (ring,
// Aeron IPC, Aeron UDP), a readiness check, and what to record about the
// channels. It is filled in as each transport lands; until then the case
// reports that it is not available in this build.
func messageTarget(ctx context.Context, cfg *Config, transport, proto, dir string) (listen string, ready func() error, info map[string]string, err error) {
	if libraryDial == nil {
		return "", nil, nil, fmt.Errorf("%w: goblin %s needs the goblin client library (package client) to measure it", ErrUnavailable, transport)
	}
	return "", nil, nil, fmt.Errorf("%w: the harness does not drive goblin over %s yet", ErrUnavailable, transport)
}

// transportServerArgs are goblin-server flags a message transport needs
// (driver directory, profile); none yet.
func transportServerArgs(cfg *Config, prof Profile, transport, dir string) []string { return nil }

// goblinCheckTransport reports whether the build can measure goblin over a
// transport at all.
func goblinCheckTransport(transport string, p Protocol) error {
	if transport == TUDS || transport == TTCP {
		if p == RESP || libraryDial != nil {
			return nil
		}
	}
	if libraryDial == nil {
		return fmt.Errorf("%w: goblin %s over %s needs the goblin client library (package client), which this build lacks", ErrUnavailable, p, transport)
	}
	return fmt.Errorf("%w: the harness does not drive goblin over %s yet", ErrUnavailable, transport)
}
