package driver

import (
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/goblin-kv/goblin/aeron"
	"github.com/goblin-kv/goblin/internal/accesstest"
)

// reachableDir is a driver directory other users could reach, so that
// only its own modes keep them out.
func reachableDir(t *testing.T) string {
	t.Helper()
	base := os.TempDir()
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		base = "/dev/shm"
	}
	root, err := os.MkdirTemp(base, "goblin-driver-access-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	if err := os.Chmod(root, 0o711); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(root, "aeron")
}

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
	for _, p := range files {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if sys := st.Sys().(*syscall.Stat_t); sys.Gid != gid || st.Mode().Perm() != 0o660 {
			t.Errorf("%s: group %d, mode %v; want %d and 0660", p, sys.Gid, st.Mode(), gid)
		}
	}
}
