package uds

// The directory of a Unix socket. A socket in a directory that every user
// may write (/tmp) can be taken by whoever binds the path first; goblin's
// default socket lives in a directory of the server user's own instead
// (transport.DefaultSocketPath), and this file makes sure that directory is
// what it claims to be before the server binds in it.

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
)

// ErrUnsafeDir reports a socket directory another user could have made or
// may write to, in a directory every user may write.
var ErrUnsafeDir = errors.New("uds: unsafe socket directory")

// prepareSocketDir makes sure the directory of the socket at path exists.
// When the directory lies in a world-writable one (such as /tmp) it must be
// the server user's own: created 0700 here, or, when it exists, a real
// directory (not a link) owned by this user that no other user may write.
// A socket placed directly in a world-writable directory is allowed, with a
// warning: another user could take the path first.
func prepareSocketDir(path string, log *slog.Logger) error {
	dir := filepath.Dir(path)
	parent := filepath.Dir(dir)
	shared := dir != parent && worldWritable(parent)
	if _, err := os.Lstat(dir); os.IsNotExist(err) {
		mode := os.FileMode(0o750)
		if shared {
			mode = 0o700
		}
		// Another user may create it between the Lstat and here; then
		// MkdirAll succeeds and the checks below catch it.
		if err := os.MkdirAll(dir, mode); err != nil {
			return fmt.Errorf("uds: socket directory: %w", err)
		}
	}
	if !shared {
		if worldWritable(dir) {
			log.Warn("the socket is in a directory every user may write: another local user could bind this path first, or answer in goblin's place; prefer the default socket or a directory of your own",
				"path", path)
		}
		return nil
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("uds: socket directory: %w", err)
	}
	why := ""
	switch st, _ := fi.Sys().(*syscall.Stat_t); {
	case fi.Mode()&os.ModeSymlink != 0:
		why = "is a symbolic link"
	case !fi.IsDir():
		why = "is not a directory"
	case st != nil && int(st.Uid) != os.Geteuid():
		why = fmt.Sprintf("belongs to uid %d, not to this user (uid %d)", st.Uid, os.Geteuid())
	case fi.Mode().Perm()&0o022 != 0:
		why = fmt.Sprintf("may be written by other users (mode %04o)", fi.Mode().Perm())
	default:
		return nil
	}
	return fmt.Errorf("%w: %s %s, in %s where every user may create files: another user may have made it to take goblin's socket. Remove it (or ask who made it), or listen on a socket in a directory of your own",
		ErrUnsafeDir, dir, why, parent)
}

// worldWritable reports whether every user may create files in dir.
func worldWritable(dir string) bool {
	fi, err := os.Stat(dir)
	return err == nil && fi.Mode().Perm()&0o002 != 0
}
