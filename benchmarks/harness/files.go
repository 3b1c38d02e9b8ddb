package harness

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// AeronJar finds io.aeron:aeron-all: the configured jar, else the version
// scripts/aeron.version pins in the local Maven repository (what
// scripts/setup.sh fetches).
func AeronJar(cfg *Config) (string, error) {
	if cfg.AeronJar != "" {
		if _, err := os.Stat(cfg.AeronJar); err != nil {
			return "", fmt.Errorf("%w: aeron jar %s: %w", ErrUnavailable, cfg.AeronJar, err)
		}
		return cfg.AeronJar, nil
	}
	version := ReadTrim(filepath.Join(RepoRoot(), "scripts", "aeron.version"), "1.51.0")
	home, _ := os.UserHomeDir()
	repo := os.Getenv("MAVEN_REPO")
	if repo == "" {
		repo = filepath.Join(home, ".m2", "repository")
	}
	jar := filepath.Join(repo, "io", "aeron", "aeron-all", version, "aeron-all-"+version+".jar")
	if _, err := os.Stat(jar); err != nil {
		return "", fmt.Errorf("%w: %s is missing (run scripts/setup.sh)", ErrUnavailable, jar)
	}
	return jar, nil
}

// RepoRoot is the checkout the harness runs in (for scripts/aeron.version).
func RepoRoot() string {
	out, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		return "."
	}
	return strings.TrimSpace(string(out))
}

func LastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

func ReadTrim(path, def string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return def
	}
	return strings.TrimSpace(string(b))
}

func FileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// RedisVersion asks redis-server for its version line.
func RedisVersion(bin string) string {
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
}

// HostVersion runs bin with a version flag on h and returns the first line
// of its output ("unknown" when it fails).
func HostVersion(ctx context.Context, h Host, bin string, flag string) string {
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, err := h.Run(cctx, ProcSpec{Argv: []string{bin, flag}})
	if err != nil {
		return "unknown"
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return line
}
