package driver

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/internal/testkit"
)

// fakeLogs makes n closed-resource logs that are files only (nothing
// mapped), so a test can hand them to the releaser without a publication.
func fakeLogs(t *testing.T, n int) []*rawLog {
	t.Helper()
	dir := t.TempDir()
	logs := make([]*rawLog, n)
	for i := range logs {
		path := filepath.Join(dir, strconv.Itoa(i)+".logbuffer")
		if err := os.WriteFile(path, []byte("log"), 0o600); err != nil {
			t.Fatal(err)
		}
		logs[i] = &rawLog{path: path}
	}
	return logs
}

func gone(path string) bool {
	_, err := os.Stat(path)
	return errors.Is(err, os.ErrNotExist)
}

// TestAFailedLogFreeIsCountedAndRetried: a release that fails comes back
// to the conductor, is counted once (counter 17) and handed over again.
func TestAFailedLogFreeIsCountedAndRetried(t *testing.T) {
	m := newManualDriver(t, Options{})
	l := fakeLogs(t, 1)[0]
	release := m.releaser.release
	calls := 0 // the releaser goroutine's only
	m.releaser.release = func(l *rawLog) error {
		calls++
		if calls == 1 {
			return errors.New("injected failure")
		}
		return release(l)
	}
	fails := m.counters.Value(sysFreeFails)
	m.endOfLife = append(m.endOfLife, l)
	testkit.Eventually(t, 60*time.Second, "the failed log freed on a retry", func() (bool, string) {
		m.freeEndOfLife(m.opts.ResourceFreeLimit)
		return gone(l.path), ""
	})
	if got := m.counters.Value(sysFreeFails) - fails; got != 1 {
		t.Fatalf("free fails counted %d times, want 1", got)
	}
}

// TestAFullReleaseQueueWaits: with the releaser stuck, the duty cycle
// hands over what fits and keeps the rest for a later cycle instead of
// waiting; every log is freed once the releaser moves again.
func TestAFullReleaseQueueWaits(t *testing.T) {
	m := newManualDriver(t, Options{})
	logs := fakeLogs(t, releaseQueueLength+5)
	unblock := make(chan struct{})
	release := m.releaser.release
	m.releaser.release = func(l *rawLog) error {
		<-unblock
		return release(l)
	}
	m.endOfLife = append(m.endOfLife, logs...)
	handed := m.freeEndOfLife(len(logs)) // returns: hand never blocks
	if handed >= len(logs) || len(m.endOfLife) != len(logs)-handed {
		t.Fatalf("handed %d of %d logs to a stuck releaser, %d kept", handed, len(logs), len(m.endOfLife))
	}
	close(unblock)
	testkit.Eventually(t, 60*time.Second, "every log freed", func() (bool, string) {
		m.freeEndOfLife(len(logs))
		for _, l := range logs {
			if !gone(l.path) {
				return false, ""
			}
		}
		return len(m.endOfLife) == 0, ""
	})
}

// TestCloseFreesLogsTheReleaserFailedOn: Close takes back the logs whose
// release failed (queued or already returned) and frees them itself.
func TestCloseFreesLogsTheReleaserFailedOn(t *testing.T) {
	m := newManualDriver(t, Options{})
	logs := fakeLogs(t, 3)
	m.releaser.release = func(*rawLog) error { return errors.New("injected failure") }
	m.endOfLife = append(m.endOfLife, logs...)
	m.freeEndOfLife(len(logs))
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	for _, l := range logs {
		if !gone(l.path) {
			t.Errorf("%s still there after Close", l.path)
		}
	}
	if err := m.Close(); err != nil {
		t.Fatalf("a second Close: %v", err)
	}
}
