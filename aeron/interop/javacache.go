package interop

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// The Maven build of the Java peers takes minutes from a clean checkout
// (184 s measured on the 2-core test VM, most of it Maven starting and
// resolving plugins) and seconds' worth of input: a pom and a dozen
// sources. BuildJava therefore keeps each build's output (the jar and the
// classpath file) in a cache directory outside the checkout, keyed by a
// hash of the pom, every file under src and the JDK that compiled them, and
// a clean clone, a new worktree or `git clean` copies it back into target
// instead of running Maven. Any change to those inputs gives a new key and
// a real build. The classpath names jars in the local Maven repository, so
// an entry whose jars have gone is not used.

// CacheEnv names the environment variable that sets the cache directory of
// the Java peers' builds; by default it is goblin-interop-java under the
// user's cache directory ($XDG_CACHE_HOME, else ~/.cache). "off" disables
// the cache.
const CacheEnv = "GOBLIN_INTEROP_JAVA_CACHE"

// javaCacheRoot returns the cache directory, or "" when there is none.
func javaCacheRoot() string {
	if d := os.Getenv(CacheEnv); d != "" {
		if d == "off" {
			return ""
		}
		return d
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "goblin-interop-java")
	}
	return ""
}

// javaVersion identifies the JDK java belongs to: its resolved path and its
// home's release file (JAVA_VERSION, IMPLEMENTOR, ...), or, without one,
// what `java -version` prints.
func javaVersion(java string) string {
	real, err := filepath.EvalSymlinks(java)
	if err != nil {
		real = java
	}
	if b, err := os.ReadFile(filepath.Join(filepath.Dir(filepath.Dir(real)), "release")); err == nil {
		return real + "\n" + string(b)
	}
	out, _ := exec.Command(java, "-version").CombinedOutput()
	return real + "\n" + string(out)
}

// buildKey hashes what the build's output is made of: the project's
// pom.xml, the path and contents of every file under src, and javaVer.
func buildKey(dir, javaVer string) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "java %q\n", javaVer)
	hashFile := func(path, name string) error {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "file %q %d\n", name, fi.Size())
		_, err = io.Copy(h, f)
		return err
	}
	if err := hashFile(filepath.Join(dir, "pom.xml"), "pom.xml"); err != nil {
		return "", err
	}
	err := filepath.WalkDir(filepath.Join(dir, "src"), func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		return hashFile(p, filepath.ToSlash(rel))
	})
	if err != nil {
		return "", fmt.Errorf("interop: build cache key: %w", err)
	}
	return hex.EncodeToString(h.Sum(nil))[:24], nil
}

// cachedBuild brings the build output jar and cpFile of the project in dir
// up to date: from the cache entry of its inputs under root when there is
// one, else by calling build, whose output it then stores there. It reports
// whether the cache served it. root "" means no cache; a cache that cannot
// be read or written costs a build, never a failure.
func cachedBuild(root, dir, javaVer, jar, cpFile string, build func() error) (fromCache bool, err error) {
	key := ""
	if root != "" {
		if k, err := buildKey(dir, javaVer); err == nil {
			key = k
		}
	}
	if key != "" && restoreBuild(filepath.Join(root, key), jar, cpFile) {
		return true, nil
	}
	if err := build(); err != nil {
		return false, err
	}
	if key != "" {
		storeBuild(root, key, jar, cpFile)
	}
	return false, nil
}

// restoreBuild copies entry's jar and classpath file to jar and cpFile
// (classpath last, so that it is never older than the jar) when the entry
// is whole and every jar its classpath names still exists.
func restoreBuild(entry, jar, cpFile string) bool {
	cached := filepath.Join(entry, filepath.Base(jar))
	b, err := os.ReadFile(filepath.Join(entry, filepath.Base(cpFile)))
	if err != nil {
		return false
	}
	cp := strings.TrimSpace(string(b))
	if cp == "" {
		return false
	}
	for _, p := range filepath.SplitList(cp) {
		if _, err := os.Stat(p); err != nil {
			return false // the local Maven repository lost it: build afresh
		}
	}
	if _, err := os.Stat(cached); err != nil {
		return false
	}
	if err := os.MkdirAll(filepath.Dir(jar), 0o755); err != nil {
		return false
	}
	if copyFile(cached, jar) != nil || os.WriteFile(cpFile, b, 0o644) != nil {
		os.Remove(cpFile)
		return false
	}
	return true
}

// storeBuild puts jar and cpFile into root/key, whole or not at all: it
// fills a temporary directory and renames it into place.
func storeBuild(root, key, jar, cpFile string) {
	entry := filepath.Join(root, key)
	if _, err := os.Stat(entry); err == nil {
		return
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return
	}
	tmp, err := os.MkdirTemp(root, key+".tmp-")
	if err != nil {
		return
	}
	if copyFile(jar, filepath.Join(tmp, filepath.Base(jar))) != nil ||
		copyFile(cpFile, filepath.Join(tmp, filepath.Base(cpFile))) != nil ||
		os.Rename(tmp, entry) != nil {
		os.RemoveAll(tmp)
	}
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
