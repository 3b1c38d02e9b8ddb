package interop

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestBuildCache: the Java peers' build output is kept under the inputs'
// key; a clean target with unchanged inputs is filled from the cache
// without a build, and a changed source, pom or JDK, or a classpath jar
// gone from the Maven repository, builds again.
func TestBuildCache(t *testing.T) {
	dir, jar, cpFile := fakeProject(t)
	root := t.TempDir()
	builds := 0
	build := func() error { // what mvn package leaves in target
		builds++
		if err := os.MkdirAll(filepath.Dir(jar), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(jar, []byte("PK build "+string(rune('0'+builds))), 0o644); err != nil {
			return err
		}
		return os.WriteFile(cpFile, []byte(filepath.Join(dir, "dep.jar")+"\n"), 0o644)
	}
	clean := func() { // a fresh clone: no target
		t.Helper()
		if err := os.RemoveAll(filepath.Dir(jar)); err != nil {
			t.Fatal(err)
		}
	}
	step := func(what string, wantCache bool, wantBuilds int, javaVer string) {
		t.Helper()
		clean()
		fromCache, err := cachedBuild(root, dir, javaVer, jar, cpFile, build)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if fromCache != wantCache || builds != wantBuilds {
			t.Fatalf("%s: from cache %v after %d builds, want %v after %d", what, fromCache, builds, wantCache, wantBuilds)
		}
		if cp, ok := upToDate(dir, jar, cpFile); !ok || cp != filepath.Join(dir, "dep.jar") {
			t.Fatalf("%s: target not up to date afterwards (classpath %q)", what, cp)
		}
	}
	step("first build", false, 1, "17")
	step("same inputs, clean target", true, 1, "17")
	if b, err := os.ReadFile(jar); err != nil || !bytes.Equal(b, []byte("PK build 1")) {
		t.Fatalf("restored jar = %q, %v; want the first build's", b, err)
	}

	src := filepath.Join(dir, "src/main/java/A.java")
	if err := os.WriteFile(src, []byte("y"), 0o644); err != nil {
		t.Fatal(err)
	}
	step("edited source", false, 2, "17")
	step("edited source again, clean target", true, 2, "17")
	if err := os.WriteFile(filepath.Join(dir, "src/main/java/B.java"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	step("new source file", false, 3, "17")
	if err := os.WriteFile(filepath.Join(dir, "pom.xml"), []byte("<project/>"), 0o644); err != nil {
		t.Fatal(err)
	}
	step("edited pom", false, 4, "17")
	step("other JDK", false, 5, "21")
	step("back to the first JDK", true, 5, "17")

	// An entry whose classpath names a jar the Maven repository lost is
	// not used.
	if err := os.Remove(filepath.Join(dir, "dep.jar")); err != nil {
		t.Fatal(err)
	}
	clean()
	build = func() error { return os.ErrNotExist }
	if fromCache, err := cachedBuild(root, dir, "17", jar, cpFile, build); fromCache || err == nil {
		t.Fatalf("entry with a missing dependency: from cache %v, err %v; want a build (which fails here)", fromCache, err)
	}

	// No cache directory: always a build.
	calls := 0
	for range 2 {
		clean()
		if fromCache, err := cachedBuild("", dir, "17", jar, cpFile, func() error { calls++; return nil }); fromCache || err != nil {
			t.Fatalf("no cache: from cache %v, %v", fromCache, err)
		}
	}
	if calls != 2 {
		t.Fatalf("no cache: %d builds for 2 clean targets", calls)
	}
}

// TestBuildCacheRoot: GOBLIN_INTEROP_JAVA_CACHE names the cache ("off":
// none); by default it is under $XDG_CACHE_HOME.
func TestBuildCacheRoot(t *testing.T) {
	t.Setenv(CacheEnv, "/some/where")
	if got := javaCacheRoot(); got != "/some/where" {
		t.Errorf("%s=/some/where: root %q", CacheEnv, got)
	}
	t.Setenv(CacheEnv, "off")
	if got := javaCacheRoot(); got != "" {
		t.Errorf("%s=off: root %q, want none", CacheEnv, got)
	}
	t.Setenv(CacheEnv, "")
	t.Setenv("XDG_CACHE_HOME", "/xdg")
	if got, want := javaCacheRoot(), "/xdg/goblin-interop-java"; got != want {
		t.Errorf("XDG_CACHE_HOME=/xdg: root %q, want %q", got, want)
	}
}
