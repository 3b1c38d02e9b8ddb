package accesstest

import (
	"os"
	"path/filepath"
	"testing"
)

// TestProbeSeesModes: the probe reports exactly what the modes allow, so
// a check built on it can fail.
func TestProbeSeesModes(t *testing.T) {
	Need(t)
	root := t.TempDir()
	open := filepath.Join(root, "open")
	shut := filepath.Join(root, "shut")
	Reachable(t, filepath.Dir(root), open)
	os.Mkdir(open, 0o755)
	os.Mkdir(shut, 0o700)
	files := map[string]os.FileMode{
		filepath.Join(open, "world-readable"): 0o644,
		filepath.Join(open, "world-writable"): 0o666,
		filepath.Join(open, "private"):        0o600,
		filepath.Join(shut, "world-readable"): 0o644, // but its directory is shut
	}
	for p, m := range files {
		if err := os.WriteFile(p, []byte("secret"), m); err != nil {
			t.Fatal(err)
		}
		os.Chmod(p, m) // past the umask
	}
	got := map[string]Access{}
	for _, a := range Probe(t, Nobody, append([]string{open, shut}, keys(files)...)) {
		got[a.Path] = a
	}
	want := map[string]Access{
		open:                                  {Read: true, Search: true},
		shut:                                  {},
		filepath.Join(open, "world-readable"): {Read: true},
		filepath.Join(open, "world-writable"): {Read: true, Write: true},
		filepath.Join(open, "private"):        {},
		filepath.Join(shut, "world-readable"): {},
	}
	for p, w := range want {
		if g := got[p]; g.Read != w.Read || g.Write != w.Write || g.Search != w.Search {
			t.Errorf("%s: %+v, want %+v", p, g, w)
		}
	}
	if n := CheckPrivate(t, shut, Nobody); n != 2 {
		t.Fatalf("checked %d paths under %s, want 2", n, shut)
	}
	content, _ := os.ReadFile(filepath.Join(open, "world-writable"))
	if string(content) != "secret" {
		t.Fatalf("the write probe changed a file: %q", content)
	}
}

func keys(m map[string]os.FileMode) []string {
	var k []string
	for p := range m {
		k = append(k, p)
	}
	return k
}
