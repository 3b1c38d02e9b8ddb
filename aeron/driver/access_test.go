package driver

import (
	"path/filepath"
	"strconv"
	"testing"

	"github.com/goblin-kv/goblin/aeron"
	"github.com/goblin-kv/goblin/internal/testkit/accesstest"
)

// reachableDir is a driver directory other users could reach, so that
// only its own modes keep them out.
func reachableDir(t *testing.T) string { return accesstest.ShmDir(t, "goblin-driver-access-") }

// withLog adds an IPC publication, so a log buffer exists, and returns
// the CnC file and the log.
func withLog(t *testing.T, d *Driver) []string {
	t.Helper()
	c := connectClient(t, d)
	if _, err := c.AddExclusivePublication(ipc64k, 77); err != nil {
		t.Fatal(err)
	}
	logs, _ := filepath.Glob(filepath.Join(d.Dir(), "publications", "*.logbuffer"))
	if len(logs) != 1 {
		t.Fatalf("log buffers %v", logs)
	}
	return []string{filepath.Join(d.Dir(), aeron.CnCFile), filepath.Join(d.Dir(), LossReportFile), logs[0]}
}

// TestDirectoryPrivateToOtherUsers: another user can enter, read or
// write nothing of the driver's directory.
func TestDirectoryPrivateToOtherUsers(t *testing.T) {
	accesstest.Need(t)
	o := testOptions(t)
	o.Dir = reachableDir(t)
	d := startDriver(t, o)
	withLog(t, d)
	n := accesstest.CheckPrivate(t, d.Dir(), accesstest.Nobody)
	t.Logf("checked %d paths from uid %d", n, accesstest.Nobody.UID)
}

// TestDirectoryForGroup: with Group, the group's members can use the
// driver (its CnC file and logs, including ones created later); others
// still get nothing.
func TestDirectoryForGroup(t *testing.T) {
	accesstest.Need(t)
	const gid = 4243 // no /etc/group entry needed
	o := testOptions(t)
	o.Dir = reachableDir(t)
	o.Group = strconv.Itoa(gid)
	d := startDriver(t, o)
	files := withLog(t, d)
	accesstest.CheckGroup(t, d.Dir(), accesstest.Member(gid), files)
	accesstest.CheckPrivate(t, d.Dir(), accesstest.Nobody)
	accesstest.CheckGroupFiles(t, files, gid, 0o660)
}
