package driver

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/goblin-kv/goblin/aeron"
	"github.com/goblin-kv/goblin/aeron/internal/cnc"
	"github.com/goblin-kv/goblin/aeron/internal/errorlog"
	"github.com/goblin-kv/goblin/aeron/internal/ringbuffer"
	"github.com/goblin-kv/goblin/internal/shm"
	"github.com/goblin-kv/goblin/internal/unixgroup"
)

// prepareDir makes the Aeron directory fresh, as the real drivers do
// (MediaDriver.ensureDirectoryIsRecreated): an existing directory is
// deleted — unless a live driver's CnC is in it, which refuses the start —
// after its distinct errors are saved beside it; then the directory and
// its publications/ and images/ are created, private to this user by
// default.
func prepareDir(o *Options) error {
	dir := o.Dir
	if st, err := os.Stat(dir); err == nil && st.IsDir() {
		if o.WarnIfDirExists {
			warn(o, "WARNING: "+dir+" exists")
		}
		if !o.DirDeleteOnStart {
			if err := checkNoActiveDriver(o); err != nil {
				return err
			}
			saveExistingErrors(o)
		}
		if err := os.RemoveAll(dir); err != nil {
			return fmt.Errorf("aeron driver: delete old directory %s: %w", dir, err)
		}
	}
	gid := -1
	if o.Group != "" {
		var err error
		if gid, err = unixgroup.Lookup(o.Group); err != nil {
			return fmt.Errorf("%w: group %q: %w", ErrInvalidOptions, o.Group, err)
		}
	}
	for _, d := range []string{dir, filepath.Join(dir, publicationsDir), filepath.Join(dir, imagesDir)} {
		if err := os.MkdirAll(d, o.DirPerm.Perm()); err != nil {
			return fmt.Errorf("aeron driver: create %s: %w", d, err)
		}
		if gid >= 0 {
			// The subdirectories and files inherit the group from the
			// setgid directory above them.
			if err := os.Lchown(d, -1, gid); err != nil {
				return fmt.Errorf("aeron driver: group of %s: %w", d, err)
			}
		}
		// MkdirAll's mode is reduced by the umask; set it exactly.
		if err := os.Chmod(d, o.DirPerm); err != nil {
			return fmt.Errorf("aeron driver: chmod %s: %w", d, err)
		}
	}
	return nil
}

// checkNoActiveDriver refuses a directory whose CnC a live driver keeps
// (CommonContext.isDriverActive): the version must be set within the
// driver timeout, and a heartbeat younger than the timeout means alive.
func checkNoActiveDriver(o *Options) error {
	path := filepath.Join(o.Dir, cnc.FileName)
	st, err := os.Stat(path)
	if err != nil || st.Size() <= cnc.MetadataLength {
		return nil
	}
	data, err := shm.Map(path)
	if err != nil {
		return nil // unreadable: not a driver we could talk to either
	}
	defer shm.Unmap(data)
	deadline := time.Now().Add(o.DriverTimeout)
	for cnc.LoadVersion(data) == 0 {
		if time.Now().After(deadline) {
			return fmt.Errorf("%w: %s is created but not initialised after %v; delete it if no driver is starting",
				ErrActiveDriver, path, o.DriverTimeout)
		}
		time.Sleep(time.Millisecond)
	}
	l, _, err := cnc.Parse(data)
	if err != nil {
		if errors.Is(err, cnc.ErrVersion) {
			return fmt.Errorf("aeron driver: %s: %w", path, err)
		}
		return nil
	}
	rb, err := ringbuffer.New(l.Slice(data).ToDriver)
	if err != nil {
		return nil
	}
	hb := rb.ConsumerHeartbeat()
	age := time.Since(time.UnixMilli(hb))
	if hb != -1 && age <= o.DriverTimeout {
		return fmt.Errorf("%w: %s (its heartbeat is %v old, the driver timeout is %v): stop that driver or use another directory",
			ErrActiveDriver, path, age.Round(time.Millisecond), o.DriverTimeout)
	}
	return nil
}

// saveExistingErrors writes the old driver's distinct errors, if any, to
// <dir>-<date>-error.log beside the directory, as ErrorStat prints them.
func saveExistingErrors(o *Options) {
	c, err := aeron.OpenCnC(o.Dir)
	if err != nil {
		return
	}
	defer c.Close()
	if c.ReadErrors(0, func(errorlog.Record) {}) == 0 {
		return
	}
	now := time.Now()
	name := strings.TrimRight(o.Dir, "/") + "-" + now.Format("2006-01-02-15-04-05") +
		fmt.Sprintf("-%03d", now.Nanosecond()/int(time.Millisecond)) + now.Format("-0700") + "-error.log"
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, o.FilePerm)
	if err != nil {
		warn(o, fmt.Sprintf("WARNING: could not save the existing errors to %s: %v", name, err))
		return
	}
	defer f.Close()
	if _, err := aeron.WriteErrors(f, c); err == nil {
		warn(o, "WARNING: Existing errors saved to: "+name)
	}
}

func warn(o *Options, msg string) {
	if o.Warn != nil {
		o.Warn(msg)
	}
}

// createExclusive creates path, which must not exist, with exactly perm:
// the mode OpenFile gives is reduced by the umask, which may take a
// group's access away.
func createExclusive(path string, perm os.FileMode) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return nil, err
	}
	if err := f.Chmod(perm); err != nil {
		f.Close()
		os.Remove(path)
		return nil, err
	}
	return f, nil
}
