package javadriver

import (
	"fmt"
	"strings"
)

// Profile selects the driver's threading mode and idle strategies. The zero
// value is Frugal. See the package documentation for when to use which.
type Profile int

const (
	// Frugal runs every driver agent on one thread that backs off when idle
	// (aeron.threading.mode=SHARED, aeron.shared.idle.strategy=backoff).
	Frugal Profile = iota
	// SpinShared runs every driver agent on one busy-spinning thread
	// (SHARED, spin). It uses one whole core.
	SpinShared
	// Spin runs the conductor on a busy-spinning thread and the sender and
	// receiver on a second thread that never idles (SHARED_NETWORK; conductor
	// spin, shared network noop). It uses two whole cores.
	Spin
	// SpinDedicated gives the conductor, the sender and the receiver a thread
	// each (DEDICATED; conductor spin, sender and receiver noop). It uses
	// three whole cores.
	SpinDedicated
)

var profileNames = [...]string{
	Frugal:        "frugal",
	SpinShared:    "spin-shared",
	Spin:          "spin",
	SpinDedicated: "spin-dedicated",
}

// String returns the profile's name as ParseProfile accepts it.
func (p Profile) String() string {
	if p >= 0 && int(p) < len(profileNames) {
		return profileNames[p]
	}
	return fmt.Sprintf("Profile(%d)", int(p))
}

// ParseProfile returns the profile named s ("frugal", "spin-shared", "spin",
// "spin-dedicated"; case-insensitive), for command-line flags.
func ParseProfile(s string) (Profile, error) {
	for p, name := range profileNames {
		if strings.EqualFold(s, name) {
			return Profile(p), nil
		}
	}
	return 0, fmt.Errorf("%w: unknown driver profile %q (want one of %s)",
		ErrInvalidOptions, s, strings.Join(profileNames[:], ", "))
}

// Spins reports whether the profile keeps at least one driver thread
// busy-polling.
func (p Profile) Spins() bool { return p != Frugal }

// properties returns the Aeron system properties the profile sets. The idle
// strategy names are the aliases io.aeron.driver.Configuration accepts
// (noop, spin, yield, sleep-ns, sleep-ms, backoff).
func (p Profile) properties() ([][2]string, error) {
	switch p {
	case Frugal:
		return [][2]string{
			{"aeron.threading.mode", "SHARED"},
			{"aeron.shared.idle.strategy", "backoff"},
		}, nil
	case SpinShared:
		return [][2]string{
			{"aeron.threading.mode", "SHARED"},
			{"aeron.shared.idle.strategy", "spin"},
		}, nil
	case Spin:
		return [][2]string{
			{"aeron.threading.mode", "SHARED_NETWORK"},
			{"aeron.conductor.idle.strategy", "spin"},
			{"aeron.sharednetwork.idle.strategy", "noop"},
		}, nil
	case SpinDedicated:
		return [][2]string{
			{"aeron.threading.mode", "DEDICATED"},
			{"aeron.conductor.idle.strategy", "spin"},
			{"aeron.sender.idle.strategy", "noop"},
			{"aeron.receiver.idle.strategy", "noop"},
		}, nil
	}
	return nil, fmt.Errorf("%w: unknown driver profile %d", ErrInvalidOptions, int(p))
}
