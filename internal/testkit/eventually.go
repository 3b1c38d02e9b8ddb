package testkit

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

// ErrTimeout is wrapped by the error Poll returns when its condition never
// came true.
var ErrTimeout = errors.New("testkit: timed out")

// Eventually calls cond, every millisecond at first and then less often,
// until it reports done, and fails tb once timeout has passed without it.
// what names the condition ("the victims' rings to be released"), and
// state is what cond saw on its last call ("2 of 3 released: pid 812
// still holds /dev/shm/x"): the failure says both, so a test that hangs
// tells which condition never came true and how far it got. cond may
// return "" for a state when there is nothing to add to what.
//
// cond runs on the test's goroutine, so it may call tb.Fatal itself.
func Eventually(tb testing.TB, timeout time.Duration, what string, cond func() (done bool, state string)) {
	tb.Helper()
	if err := Poll(timeout, what, cond); err != nil {
		tb.Fatal(err)
	}
}

// Poll is Eventually for code that must not fail a test by itself: it
// returns nil once cond reports done, or an error wrapping ErrTimeout that
// names what and cond's last state.
func Poll(timeout time.Duration, what string, cond func() (done bool, state string)) error {
	deadline := time.Now().Add(timeout)
	for wait := time.Millisecond; ; {
		done, state := cond()
		if done {
			return nil
		}
		if time.Now().After(deadline) {
			if state == "" {
				return fmt.Errorf("%w after %v waiting for %s", ErrTimeout, timeout, what)
			}
			return fmt.Errorf("%w after %v waiting for %s; last state: %s", ErrTimeout, timeout, what, state)
		}
		time.Sleep(wait)
		if wait < 20*time.Millisecond {
			wait *= 2
		}
	}
}
