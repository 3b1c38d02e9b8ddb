package javadriver

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// AeronVersion is the io.aeron:aeron-all version goblin runs against. It
// matches scripts/aeron.version, which `make setup` fetches (a test checks
// the two agree). Maven Central serves 1.51.0; goblin's protocol notes were
// read from the 1.51.1 sources, which do not differ in anything the client
// or these tests touch.
const AeronVersion = "1.51.0"

// JarEnv names the environment variable that overrides where the aeron-all
// jar is.
const JarEnv = "GOBLIN_AERON_JAR"

// JVMFlags are the flags every JVM that loads aeron-all 1.51 gets from this
// package and from the interop programs' launchers:
//   - --add-opens java.base/jdk.internal.misc: Agrona 2.x's UnsafeApi reads
//     jdk.internal.misc.Unsafe; without it the driver dies at start-up with
//     an IllegalAccessError on Java 17 and later.
//   - --add-opens java.base/sun.nio.ch and java.util.zip: what Aeron's own
//     launch scripts (aeron-samples/scripts/java-common) pass, for direct
//     buffer cleaning and CRC32C.
//   - -XX:+UnlockDiagnosticVMOptions -XX:GuaranteedSafepointInterval=300000:
//     also from java-common, so the JVM does not stop every thread for a
//     safepoint every second.
//   - -XX:+UseParallelGC (java-common) and a small heap: the driver keeps
//     its data off-heap, and the machine is shared.
//   - -Djava.net.preferIPv4Stack=true: loopback UDP over IPv4, as the
//     samples run it.
var JVMFlags = []string{
	"--add-opens", "java.base/jdk.internal.misc=ALL-UNNAMED",
	"--add-opens", "java.base/sun.nio.ch=ALL-UNNAMED",
	"--add-opens", "java.base/java.util.zip=ALL-UNNAMED",
	"-XX:+UnlockDiagnosticVMOptions",
	"-XX:GuaranteedSafepointInterval=300000",
	"-XX:+UseParallelGC",
	"-Xms32m",
	"-Xmx256m",
	"-Djava.net.preferIPv4Stack=true",
}

// FindJava returns the java executable: $JAVA_HOME/bin/java if it exists,
// else java on $PATH. The error wraps ErrJavaNotFound.
func FindJava() (string, error) {
	if home := os.Getenv("JAVA_HOME"); home != "" {
		p := filepath.Join(home, "bin", "java")
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p, nil
		}
	}
	p, err := exec.LookPath("java")
	if err != nil {
		return "", fmt.Errorf("%w: neither $JAVA_HOME/bin/java nor java on $PATH (install a JDK 17 or later): %w",
			ErrJavaNotFound, err)
	}
	return p, nil
}

// MavenJarPath returns where Maven keeps io.aeron:aeron-all:AeronVersion:
// under $MAVEN_REPO if set (as scripts/setup.sh honours it), else
// ~/.m2/repository.
func MavenJarPath() string {
	repo := os.Getenv("MAVEN_REPO")
	if repo == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			home = "~"
		}
		repo = filepath.Join(home, ".m2", "repository")
	}
	return filepath.Join(repo, "io", "aeron", "aeron-all", AeronVersion, "aeron-all-"+AeronVersion+".jar")
}

// FindJar returns the aeron-all jar: explicit if not empty, else
// $GOBLIN_AERON_JAR if set, else MavenJarPath. The path must name a
// non-empty file; otherwise the error wraps ErrJarNotFound and says how to
// get the jar.
func FindJar(explicit string) (string, error) {
	p, from := explicit, "Options.JarPath"
	if p == "" {
		p, from = os.Getenv(JarEnv), "$"+JarEnv
	}
	if p == "" {
		p, from = MavenJarPath(), "the local Maven repository"
	}
	fi, err := os.Stat(p)
	if err != nil || fi.IsDir() || fi.Size() == 0 {
		return "", fmt.Errorf("%w: no io.aeron:aeron-all:%s jar at %s (from %s); run `make setup` (scripts/setup.sh) to fetch it, or set $%s",
			ErrJarNotFound, AeronVersion, p, from, JarEnv)
	}
	return p, nil
}
