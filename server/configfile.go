package server

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// goblin-server's configuration file: one setting per line, "name value"
// or "name=value" (name a flag's name, optionally with its dashes; value
// optionally in double quotes), blank lines and # comments ignored.
// CONFIG REWRITE writes the parameters CONFIG SET changes back into it.

// ParseConfigLine reads one line of a configuration file: ok is false for
// a blank line or a comment.
func ParseConfigLine(line string) (name, value string, ok bool) {
	line = strings.TrimSpace(line)
	if line == "" || strings.HasPrefix(line, "#") {
		return "", "", false
	}
	name, value, eq := strings.Cut(line, "=")
	if i := strings.IndexAny(line, " \t"); i >= 0 && (!eq || i < len(name)) {
		name, value = line[:i], line[i+1:]
	}
	name = strings.TrimPrefix(strings.TrimSpace(name), "--")
	value = strings.Trim(strings.TrimSpace(value), `"`)
	return name, value, true
}

// rewritable are the parameters CONFIG SET changes that have a flag of the
// same name, with the flag's spelling of a CONFIG GET value.
var rewritable = []struct {
	name   string
	asFlag func(v string) string
}{
	{"maxmemory", nil}, {"maxmemory-policy", nil}, {"requirepass", nil}, {"maxclients", nil},
	{"maxmemory-clients", nil}, {"save", nil}, {"dir", nil}, {"dbfilename", nil}, {"rdbcompression", nil},
	{"rdbchecksum", nil}, {"stop-writes-on-bgsave-error", nil},
	{"timeout", func(v string) string { // CONFIG's seconds; the flag's a duration
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return v
		}
		return (time.Duration(n) * time.Second).String()
	}},
}

// configValues returns the rewritable parameters' current values, in
// their flag's spelling; on the loop goroutine (or before it runs).
func (s *Server) configValues() map[string]string {
	vals := make(map[string]string, len(rewritable))
	for _, r := range rewritable {
		v, ok := s.engine.ConfigValue(r.name)
		if !ok {
			continue
		}
		if r.asFlag != nil {
			v = r.asFlag(v)
		}
		vals[r.name] = v
	}
	return vals
}

// rewriteConfig answers CONFIG REWRITE: every line of the configuration
// file that sets a rewritable parameter gets its current value, in place;
// a parameter the file does not set and CONFIG SET changed since the start
// is added at the end. Comments, blank lines, the other settings and their
// order stay as they were. The new file replaces the old one atomically,
// with its permissions.
func (s *Server) rewriteConfig() error {
	path := s.opts.ConfigFile
	old, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	vals := s.configValues()
	out, seen := rewriteLines(old, vals)
	var added []string
	for _, r := range rewritable {
		if v, ok := vals[r.name]; ok && !seen[r.name] && v != s.startConfig[r.name] {
			added = append(added, r.name+" "+quoteConfig(v))
		}
	}
	if len(added) > 0 {
		if len(out) > 0 && out[len(out)-1] != '\n' {
			out = append(out, '\n')
		}
		out = append(out, "# added by CONFIG REWRITE\n"...)
		for _, l := range added {
			out = append(append(out, l...), '\n')
		}
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".rewrite-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after a successful rename there is nothing to remove
	if _, err := tmp.Write(out); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(fi.Mode().Perm()); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	s.log.Info("configuration file rewritten", "file", path)
	return nil
}

// rewriteLines returns the file with the value of every line that sets a
// parameter in vals replaced, and which parameters it set.
func rewriteLines(file []byte, vals map[string]string) ([]byte, map[string]bool) {
	seen := map[string]bool{}
	var out []byte
	for len(file) > 0 {
		line, rest, found := bytes.Cut(file, []byte("\n"))
		file = rest
		name, _, ok := ParseConfigLine(string(line))
		if v, set := vals[name]; ok && set {
			seen[name] = true
			trimmed := strings.TrimSpace(string(line))
			indent := string(line[:strings.Index(string(line), trimmed)])
			key, sep := trimmed, " "
			if i := strings.IndexAny(trimmed, " \t="); i >= 0 {
				key, sep = trimmed[:i], trimmed[i:i+1]
			}
			line = []byte(indent + key + sep + quoteConfig(v))
		}
		out = append(out, line...)
		if found {
			out = append(out, '\n')
		}
	}
	return out, seen
}

// quoteConfig writes v so ParseConfigLine reads it back: in double quotes
// when it is empty or has spaces, '#' or '='.
func quoteConfig(v string) string {
	if v == "" || strings.ContainsAny(v, " \t#=") {
		return fmt.Sprintf(`"%s"`, v)
	}
	return v
}
