package testkit

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestPollReturnsOnceTheConditionHolds(t *testing.T) {
	calls := 0
	err := Poll(10*time.Second, "the third call", func() (bool, string) {
		calls++
		return calls == 3, fmt.Sprintf("%d calls", calls)
	})
	if err != nil || calls != 3 {
		t.Fatalf("Poll = %v after %d calls, want nil after 3", err, calls)
	}
}

func TestPollNamesTheConditionAndItsLastState(t *testing.T) {
	calls := 0
	err := Poll(20*time.Millisecond, "the victims' rings to be released", func() (bool, string) {
		calls++
		return false, fmt.Sprintf("%d still held", calls)
	})
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("Poll = %v, want ErrTimeout", err)
	}
	want := fmt.Sprintf("waiting for the victims' rings to be released; last state: %d still held", calls)
	if !strings.Contains(err.Error(), want) {
		t.Fatalf("Poll's error %q does not say %q", err, want)
	}
	if err := Poll(0, "nothing", func() (bool, string) { return false, "" }); err == nil || strings.Contains(err.Error(), "last state") {
		t.Fatalf("Poll with no state = %v, want a timeout that reports no state", err)
	}
}

// fatalTB records Fatal instead of stopping the test that uses it.
type fatalTB struct {
	testing.TB
	msg string
}

func (f *fatalTB) Helper() {}
func (f *fatalTB) Fatal(args ...any) {
	f.msg = fmt.Sprint(args...)
	runtime.Goexit()
}

func TestEventuallyFailsWithTheConditionsName(t *testing.T) {
	f := &fatalTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		Eventually(f, 10*time.Millisecond, "the server to log ready", func() (bool, string) { return false, "log: starting" })
	}()
	<-done
	if want := "waiting for the server to log ready; last state: log: starting"; !strings.Contains(f.msg, want) {
		t.Fatalf("Eventually failed with %q, want it to say %q", f.msg, want)
	}
}
