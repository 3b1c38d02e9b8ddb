package snapshot

import (
	"fmt"
	"os"
	"path/filepath"
)

// TempName is the temporary file a save of the server with process id pid
// writes before renaming it over the target, as Redis names its own.
func TempName(dir string, pid int) string {
	return filepath.Join(dir, fmt.Sprintf("temp-%d.rdb", pid))
}

// createTemp creates (or truncates) the temporary file.
func createTemp(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
}

// commit makes the temporary file f the file at path: fsync, close,
// rename, then fsync the directory so the rename itself survives a crash.
// On an error the temporary file is removed and the previous file at path
// is left as it was.
func commit(f *os.File, path string) error {
	tmp := f.Name()
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("fsync %s: %w", tmp, err)
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("close %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("rename %s to %s: %w", tmp, path, err)
	}
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return fmt.Errorf("open directory to fsync it: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("fsync directory %s: %w", filepath.Dir(path), err)
	}
	return nil
}

// discard closes and removes a temporary file a failed save leaves.
func discard(f *os.File) {
	f.Close()
	os.Remove(f.Name())
}
