package aeron

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// ErrDriverReplaced: the CnC file the client mapped is no longer the one in
// the Aeron directory — a new driver started there (deleting the old one's
// files), or the directory was removed. The old driver is gone; connect
// again to use the new one.
var ErrDriverReplaced = errors.New("aeron: media driver replaced")

// fileID identifies a file by device and inode, so a file replaced under
// the same name is told from the one mapped.
type fileID struct{ dev, ino uint64 }

func statID(path string) (fileID, error) {
	st, err := os.Stat(path)
	if err != nil {
		return fileID{}, err
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, errors.New("no inode")
	}
	return fileID{dev: uint64(sys.Dev), ino: uint64(sys.Ino)}, nil
}

// checkCnCFile fails the client when its CnC file was replaced or removed.
// A killed driver's heartbeat stops, but the client would wait the driver
// timeout (10 s) to call it dead; a driver restarted in the same directory
// (as a supervising server does within a second or so) replaces the file,
// which one stat every keepalive interval notices. It works across pid
// namespaces, unlike asking whether the driver's pid lives. Callers hold
// c.mu.
func (c *Client) checkCnCFile() bool {
	if c.cncFile == (fileID{}) {
		return true // the file could not be identified at connect
	}
	path := filepath.Join(c.opts.Dir, CnCFile)
	id, err := statID(path)
	switch {
	case err == nil && id == c.cncFile:
		return true
	case err == nil:
		c.fail(fmt.Errorf("%w: %s is another file now: a new driver started in %s", ErrDriverReplaced, path, c.opts.Dir))
	case errors.Is(err, os.ErrNotExist):
		c.fail(fmt.Errorf("%w: %s was removed", ErrDriverReplaced, path))
	default:
		return true // cannot tell (permissions changed?): the heartbeat still guards
	}
	return false
}
