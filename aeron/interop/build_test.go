package interop

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/aeron/javadriver"
	"github.com/goblin-kv/goblin/internal/testkit"
)

// fakeProject lays out a Maven project whose build output is up to date.
func fakeProject(t *testing.T) (dir, jar, cpFile string) {
	t.Helper()
	dir = t.TempDir()
	dep := filepath.Join(dir, "dep.jar")
	for _, p := range []string{"pom.xml", "src/main/java/A.java", "dep.jar"} {
		p = filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-time.Hour)
	for _, p := range []string{"pom.xml", "src/main/java/A.java"} {
		os.Chtimes(filepath.Join(dir, p), old, old)
	}
	jar = filepath.Join(dir, "target", "goblin-aeron-interop.jar")
	cpFile = filepath.Join(dir, "target", "classpath.txt")
	os.MkdirAll(filepath.Dir(jar), 0o755)
	os.WriteFile(jar, []byte("PK"), 0o644)
	os.WriteFile(cpFile, []byte(dep+"\n"), 0o644)
	return dir, jar, cpFile
}

func TestBuildOutputFreshness(t *testing.T) {
	dir, jar, cpFile := fakeProject(t)
	cp, ok := upToDate(dir, jar, cpFile)
	if !ok || cp != filepath.Join(dir, "dep.jar") {
		t.Fatalf("fresh build judged stale: %q %v", cp, ok)
	}
	// A source edited after the build makes it stale.
	src := filepath.Join(dir, "src/main/java/A.java")
	later := time.Now().Add(time.Hour)
	os.Chtimes(src, later, later)
	if _, ok := upToDate(dir, jar, cpFile); ok {
		t.Fatal("an edited source did not make the build stale")
	}
	// So does a dependency that disappeared from the Maven repository.
	dir, jar, cpFile = fakeProject(t)
	os.Remove(filepath.Join(dir, "dep.jar"))
	if _, ok := upToDate(dir, jar, cpFile); ok {
		t.Fatal("a missing dependency did not make the build stale")
	}
}

func TestBuildWithoutToolsSaysSo(t *testing.T) {
	dir, _, _ := fakeProject(t)
	later := time.Now().Add(time.Hour)
	os.Chtimes(filepath.Join(dir, "pom.xml"), later, later) // stale: needs mvn
	t.Setenv(ProjectEnv, dir)
	t.Setenv(CacheEnv, "off") // the build must need mvn
	javaHome := ""
	if java, err := javadriver.FindJava(); err == nil {
		if real, err := filepath.EvalSymlinks(java); err == nil {
			javaHome = filepath.Dir(filepath.Dir(real))
		}
	}
	t.Setenv("PATH", t.TempDir()) // no mvn, no java
	t.Run("no java", func(t *testing.T) {
		t.Setenv("JAVA_HOME", "")
		if _, err := buildJava(context.Background()); !errors.Is(err, ErrToolMissing) {
			t.Fatalf("err = %v, want ErrToolMissing", err)
		}
	})
	t.Run("no mvn", func(t *testing.T) {
		if javaHome == "" {
			testkit.Missing(t, "java, to find beside a missing mvn")
		}
		t.Setenv("JAVA_HOME", javaHome)
		_, err := buildJava(context.Background())
		if !errors.Is(err, ErrToolMissing) || !strings.Contains(err.Error(), "mvn") {
			t.Fatalf("err = %v, want ErrToolMissing naming mvn", err)
		}
	})
}
