package javadriver

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// share gives path to group gid: a directory 02750 (setgid, so the files
// the driver creates in it later belong to the group too), a file 0660.
func share(path string, gid int, dir bool) error {
	if err := os.Lchown(path, -1, gid); err != nil {
		return fmt.Errorf("javadriver: group of %s: %w", path, err)
	}
	mode := os.FileMode(0o660)
	if dir {
		mode = 0o750 | os.ModeSetgid
	}
	if err := os.Chmod(path, mode); err != nil {
		return fmt.Errorf("javadriver: mode of %s: %w", path, err)
	}
	return nil
}

// shareTree shares the driver's directory and everything in it (the CnC
// file, the loss report, the publications and images directories) with
// group gid once the driver is up. Files it creates later inherit the
// group from their setgid directory and get 0660 from the driver's umask.
func shareTree(dir string, gid int) error {
	return filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("javadriver: %w", err)
		}
		return share(p, gid, e.IsDir())
	})
}
