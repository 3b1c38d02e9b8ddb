package testproc

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// The binaries Build makes are shared by every test binary of a run: `go
// test ./...` starts one test binary per package, a dozen of which start
// goblin-server, and each used to link its own (tens of seconds of CPU
// each under a loaded machine). Build keeps them in a cache directory
// keyed by everything the binary is made of, and a file lock lets the
// first test binary build while the others wait for it and then reuse
// its result. A lone `go test ./pkg/` works the same way; an edit to any
// source file of the binary gives a new key, so a stale binary is never
// used.

// cacheEnv names the cache directory; by default it is goblin-testproc
// under the user's cache directory (or the temporary directory).
const cacheEnv = "GOBLIN_TEST_BIN_CACHE"

// cacheMaxAge is how long an unused entry stays before a build removes it.
const cacheMaxAge = 24 * time.Hour

func cacheRoot() string {
	if d := os.Getenv(cacheEnv); d != "" {
		return d
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "goblin-testproc")
	}
	return filepath.Join(os.TempDir(), "goblin-testproc")
}

// buildCached returns the binary of main package pkg, built with goTool
// and args, from the cache, building it there first when no test binary
// did yet.
func buildCached(goTool, root, pkg string, args []string) (string, error) {
	key, err := sourceKey(goTool, root, pkg, args)
	if err != nil {
		return "", err
	}
	cache := cacheRoot()
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return "", fmt.Errorf("testproc: build cache: %w", err)
	}
	dir := filepath.Join(cache, key)
	bin := filepath.Join(dir, filepath.Base(pkg))
	unlock, err := lockFile(dir + ".lock")
	if err != nil {
		return "", err
	}
	defer unlock()
	now := time.Now()
	if _, err := os.Stat(bin); err == nil {
		os.Chtimes(dir, now, now) // in use: keep it from pruning
		return bin, nil
	}
	prune(cache, key)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("testproc: build cache: %w", err)
	}
	tmp := bin + ".tmp"
	cmd := exec.Command(goTool, append(append([]string{"build", "-o", tmp}, args...), pkg)...)
	cmd.Dir = root
	if msg, err := cmd.CombinedOutput(); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("testproc: go build %s: %v\n%s", pkg, err, msg)
	}
	if err := os.Rename(tmp, bin); err != nil {
		return "", fmt.Errorf("testproc: build cache: %w", err)
	}
	return bin, nil
}

// sourceKey hashes what the binary of pkg is made of: the Go toolchain and
// build settings, the build flags, the module's go.mod and go.sum, the
// contents of every file of every package of this module it imports, and
// the directories (versioned, so immutable) of the others.
func sourceKey(goTool, root, pkg string, args []string) (string, error) {
	const format = `{{if not .Standard}}{{.Dir}}` +
		`{{range .GoFiles}} {{.}}{{end}}{{range .CgoFiles}} {{.}}{{end}}{{range .SFiles}} {{.}}{{end}}` +
		`{{range .CFiles}} {{.}}{{end}}{{range .HFiles}} {{.}}{{end}}{{range .SysoFiles}} {{.}}{{end}}` +
		`{{range .EmbedFiles}} {{.}}{{end}}{{end}}`
	cmd := exec.Command(goTool, "list", "-deps", "-f", format, pkg)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("testproc: go list %s: %v\n%s", pkg, err, stderr.Bytes())
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n%q\n", runtime.Version(), pkg, args)
	for _, env := range []string{"GOFLAGS", "GOOS", "GOARCH", "GOAMD64", "CGO_ENABLED", "CC", "GOEXPERIMENT", "GOTOOLCHAIN"} {
		fmt.Fprintf(h, "%s=%s\n", env, os.Getenv(env))
	}
	fmt.Fprintf(h, "go=%s\n", goTool)
	if v, err := exec.Command(goTool, "env", "GOVERSION").Output(); err == nil {
		h.Write(v)
	}
	hashFile := func(path, name string) error {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		fmt.Fprintf(h, "file %s\n", name)
		_, err = io.Copy(h, f)
		return err
	}
	for _, name := range []string{"go.mod", "go.sum"} {
		if err := hashFile(filepath.Join(root, name), name); err != nil && !os.IsNotExist(err) {
			return "", err
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		dir := fields[0]
		rel, err := filepath.Rel(root, dir)
		if err != nil || strings.HasPrefix(rel, "..") {
			fmt.Fprintf(h, "dep %s\n", dir) // the module cache: the path names the version
			continue
		}
		for _, name := range fields[1:] {
			if err := hashFile(filepath.Join(dir, name), filepath.Join(rel, name)); err != nil {
				return "", fmt.Errorf("testproc: build cache key: %w", err)
			}
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:24], nil
}

// lockFile takes an exclusive lock on path, waiting for whoever holds it,
// and returns its release.
func lockFile(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("testproc: build cache lock: %w", err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("testproc: build cache lock %s: %w", path, err)
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// prune removes the cache entries other than keep that no build has used
// for cacheMaxAge. An entry whose lock another process holds is in use and
// stays; the lock files stay too, so that two processes never lock two
// different files for one entry.
func prune(cache, keep string) {
	ents, err := os.ReadDir(cache)
	if err != nil {
		return
	}
	for _, e := range ents {
		if !e.IsDir() || e.Name() == keep {
			continue
		}
		info, err := e.Info()
		if err != nil || time.Since(info.ModTime()) < cacheMaxAge {
			continue
		}
		lock := filepath.Join(cache, e.Name()+".lock")
		f, err := os.OpenFile(lock, os.O_CREATE|os.O_RDWR, 0o644)
		if err != nil {
			continue
		}
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
			os.RemoveAll(filepath.Join(cache, e.Name()))
		}
		f.Close()
	}
}
