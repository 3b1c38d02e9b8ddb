// Package accesstest checks, from a second Unix user, what another user
// of the machine can see of a directory that should be private: a media
// driver's Aeron directory, a ring directory. The tests run as root, which
// may take any uid and gid for a child process; the second user needs no
// entry in /etc/passwd.
//
//	accesstest.CheckPrivate(t, dir, accesstest.Nobody)           // nothing readable
//	accesstest.CheckGroup(t, dir, accesstest.Member(gid), files)  // group members read and write files
package accesstest

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/goblin-kv/goblin/internal/testkit"
)

// User is a second user: a uid, a primary gid and supplementary groups.
type User struct {
	UID, GID uint32
	Groups   []uint32
}

// Nobody is a user that owns nothing here and is in no group of ours.
var Nobody = User{UID: 65534, GID: 65534}

// Member is a second user (not the owner) in group gid.
func Member(gid uint32) User { return User{UID: 65533, GID: 65533, Groups: []uint32{gid}} }

// Need skips (or, under CI=true, fails) tb unless the test can run
// processes as another user: it must be root.
func Need(tb testing.TB) {
	tb.Helper()
	testkit.NeedRoot(tb, "checking access as a second user")
}

// Access is what u could do with one path.
type Access struct {
	Path        string
	Read, Write bool // open(2) for reading (a file) or listing (a directory); open for writing (a file)
	Search      bool // enter (a directory)
}

// Probe runs one process as u that tries every path in paths and reports
// what it could do.
func Probe(tb testing.TB, u User, paths []string) []Access {
	tb.Helper()
	Need(tb)
	// One shell as u: per path, "R" if it can read (a byte of a file, the
	// list of a directory), "W" if it can open a file for writing
	// (appending nothing), "X" if it can enter a directory, then the path.
	script := `for p in "$@"; do r=-; w=-; x=-
if [ -d "$p" ]; then ls "$p" >/dev/null 2>&1 && r=R; (cd "$p") 2>/dev/null && x=X
else head -c1 "$p" >/dev/null 2>&1 && r=R; (: >>"$p") 2>/dev/null && w=W; fi
printf '%s%s%s %s\n' "$r" "$w" "$x" "$p"; done`
	cmd := exec.Command("/bin/sh", append([]string{"-c", script, "probe"}, paths...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: u.UID, Gid: u.GID, Groups: u.Groups}}
	cmd.Dir = "/"
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		tb.Fatalf("accesstest: probe as uid %d: %v\n%s", u.UID, err, errb.String())
	}
	var res []Access
	for _, line := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		if len(line) < 5 {
			continue
		}
		res = append(res, Access{Path: line[4:], Read: line[0] == 'R', Write: line[1] == 'W', Search: line[2] == 'X'})
	}
	if len(res) != len(paths) {
		tb.Fatalf("accesstest: probed %d paths, got %d answers:\n%s", len(paths), len(res), out.String())
	}
	return res
}

// Walk lists dir and everything under it, as the test (the owner) sees it.
func Walk(tb testing.TB, dir string) []string {
	tb.Helper()
	var paths []string
	err := filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		paths = append(paths, p)
		return nil
	})
	if err != nil {
		tb.Fatalf("accesstest: walk %s: %v", dir, err)
	}
	return paths
}

// Reachable makes every directory above dir up to and including top
// searchable by all (mode |= 0o111), so a check of dir's own modes means
// something; top is a directory the test created (t.TempDir()).
func Reachable(tb testing.TB, top, dir string) {
	tb.Helper()
	for p := filepath.Dir(dir); ; p = filepath.Dir(p) {
		st, err := os.Stat(p)
		if err != nil {
			tb.Fatal(err)
		}
		if err := os.Chmod(p, st.Mode().Perm()|0o111); err != nil {
			tb.Fatal(err)
		}
		if p == top || p == filepath.Dir(p) {
			return
		}
	}
}

// reachable fails tb unless u can reach dir (search every directory above
// it): otherwise a check of dir's own modes could not fail.
func reachable(tb testing.TB, dir string, u User) {
	tb.Helper()
	var above []string // from the root down, so the first failure is the cause
	for p := filepath.Dir(dir); ; p = filepath.Dir(p) {
		above = append([]string{p}, above...)
		if p == filepath.Dir(p) {
			break
		}
	}
	for _, a := range Probe(tb, u, above) {
		if !a.Search {
			tb.Fatalf("accesstest: uid %d cannot enter %s above %s, so the check would prove nothing; make it 0711 or 0755 for the test", u.UID, a.Path, dir)
		}
	}
}

// CheckPrivate fails tb if u can list dir or any directory under it, or
// read or write any file in it. It first makes sure u can reach dir.
// It returns how many paths it checked.
func CheckPrivate(tb testing.TB, dir string, u User) int {
	tb.Helper()
	reachable(tb, dir, u)
	paths := Walk(tb, dir)
	for _, a := range Probe(tb, u, paths) {
		if a.Read || a.Write || a.Search {
			st, _ := os.Stat(a.Path)
			mode := "?"
			if st != nil {
				mode = st.Mode().String()
			}
			tb.Errorf("uid %d can get into %s (%s): read %v write %v enter %v", u.UID, a.Path, mode, a.Read, a.Write, a.Search)
		}
	}
	return len(paths)
}

// CheckGroup fails tb unless member u can list dir and read and write
// every path in files (inside dir).
func CheckGroup(tb testing.TB, dir string, u User, files []string) {
	tb.Helper()
	reachable(tb, dir, u)
	for _, a := range Probe(tb, u, append([]string{dir}, files...)) {
		switch {
		case a.Path == dir && !a.Read:
			tb.Errorf("group member uid %d cannot list %s", u.UID, dir)
		case a.Path != dir && (!a.Read || !a.Write):
			tb.Errorf("group member uid %d: %s read %v write %v, want both", u.UID, a.Path, a.Read, a.Write)
		}
	}
}

// ShmDir returns a path (not created) for a shared-memory directory under
// test, inside a fresh directory under /dev/shm (the temp dir where it is
// missing) that every user may search but not list, so that only the
// directory's own modes can keep another user out. The fresh directory is
// removed at cleanup.
func ShmDir(tb testing.TB, prefix string) string {
	tb.Helper()
	base := os.TempDir()
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		base = "/dev/shm"
	}
	root, err := os.MkdirTemp(base, prefix)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(root) })
	if err := os.Chmod(root, 0o711); err != nil {
		tb.Fatal(err)
	}
	return filepath.Join(root, "aeron")
}

// CheckGroupFiles fails tb unless every path in files belongs to group gid
// with exactly mode perm.
func CheckGroupFiles(tb testing.TB, files []string, gid uint32, perm os.FileMode) {
	tb.Helper()
	for _, p := range files {
		st, err := os.Stat(p)
		if err != nil {
			tb.Fatal(err)
		}
		if sys := st.Sys().(*syscall.Stat_t); sys.Gid != gid || st.Mode().Perm() != perm {
			tb.Errorf("%s: group %d, mode %v; want %d and %v", p, sys.Gid, st.Mode(), gid, perm)
		}
	}
}
