package main

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/goblin-kv/goblin/redisconf"
)

// errUnsupported wraps the list of Redis directives goblin does not have.
//
//lint:ignore ST1005 starts with the proper noun Redis
var errUnsupported = errors.New("Redis directives goblin does not support (remove them, or start with --ignore-unsupported to skip each with a warning)")

// fileConfig is what a configuration file gave: the notes to log once the
// logger exists (skipped directives, optional addresses not available).
type fileConfig struct {
	notes []string
}

// applyConfigFile reads a configuration file in redis.conf's syntax and
// sets every flag it names that the command line did not: flags win. A
// directive goblin does not have is an error listing every such line,
// unless ignoreUnsupported, when each becomes a note (logged as a
// warning). Redis's names map to goblin's flags as docs/config.md says.
func applyConfigFile(fs *flag.FlagSet, path string, ignoreUnsupported bool) (*fileConfig, error) {
	dirs, err := redisconf.ParseFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	report, err := redisconf.Check(dirs)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	fc := &fileConfig{}
	if len(report.Unsupported) > 0 {
		if !ignoreUnsupported {
			return nil, fmt.Errorf("config %s: %d %w:\n%w", path, len(report.Unsupported), errUnsupported, report.Unsupported)
		}
		for _, e := range report.Unsupported {
			fc.notes = append(fc.notes, "skipped (--ignore-unsupported): "+e.Error())
		}
	}
	onCmdline := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { onCmdline[f.Name] = true })
	set := func(s redisconf.Setting, name, value string) error {
		if onCmdline[name] {
			return nil
		}
		if err := fs.Set(name, value); err != nil {
			return fmt.Errorf("config %s:%d: >>> '%s' %v", s.File, s.Line, s.Text, err)
		}
		return nil
	}
	vals := report.Values()
	var listen []string
	var netLine redisconf.Setting // the last of port, bind, unixsocket: errors name it
	netSet := false
	done := map[string]bool{}
	for _, s := range report.Supported {
		name := s.Spec.Name
		switch name {
		case "listen":
			listen = append(listen, s.Args...)
			continue
		case "port", "bind", "unixsocket", "tls-port":
			netLine, netSet = s, true
			continue
		}
		if done[name] {
			continue // the last line's value, applied once
		}
		done[name] = true
		args := vals[name]
		if s.Spec.Kind == redisconf.KindSave { // every line's pairs, accumulated; none after save ""
			if err := set(s, s.Spec.Goblin, strings.Join(args, " ")); err != nil {
				return nil, err
			}
			continue
		}
		v := args[0]
		switch {
		case s.Spec.Kind == redisconf.KindList, name == "replicaof": // latency-tracking-info-percentiles 50 99 99.9; replicaof host port: one flag value
			v = strings.Join(args, " ")
		case name == "timeout": // Redis's seconds; the flag's a duration
			v += "s"
		case name == "loglevel":
			v = map[string]string{"debug": "debug", "verbose": "debug", "notice": "info", "warning": "warn"}[strings.ToLower(v)]
		case s.Spec.Kind == redisconf.KindMemory: // Redis's units: 1k is 1000, 1kb 1024
			n, err := redisconf.ParseMemory(v)
			if err != nil {
				return nil, fmt.Errorf("config %s:%d: >>> '%s' %v", s.File, s.Line, s.Text, err)
			}
			v = strconv.FormatUint(n, 10)
		case isBoolFlag(fs, s.Spec.Goblin): // yes/no in the file; the flag is a Go bool
			v = strconv.FormatBool(strings.EqualFold(v, "yes"))
		case s.Spec.Kind == redisconf.KindBool:
			v = strings.ToLower(v)
		}
		if err := set(s, s.Spec.Goblin, v); err != nil {
			return nil, err
		}
	}
	if netSet {
		targets, notes := redisTargets(vals)
		fc.notes = append(fc.notes, notes...)
		if len(targets) == 0 && len(listen) == 0 {
			return nil, fmt.Errorf("config %s:%d: >>> '%s' port 0, no tls-port and no unixsocket leave nothing to listen on", netLine.File, netLine.Line, netLine.Text)
		}
		listen = append(targets, listen...)
	}
	for _, t := range listen {
		if err := set(redisconf.Setting{Directive: redisconf.Directive{File: path}}, "listen", t); err != nil {
			return nil, err
		}
	}
	return fc, nil
}

// redisTargets turns Redis's port, bind and unixsocket into listen
// targets: tcp://ADDR:PORT for each bind address (Redis's defaults when
// one is missing: port 6379, bind "* -::*"; port 0: no TCP), "*" being
// every IPv4 address and "::*" every IPv6 one, and uds://PATH. An address
// marked optional ("-::1") is left out, with a note, when this host
// cannot bind it, as Redis does.
// isBoolFlag reports whether fs's flag name is a Go bool flag (set with
// true or false, where the file says yes or no).
func isBoolFlag(fs *flag.FlagSet, name string) bool {
	f := fs.Lookup(name)
	if f == nil {
		return false
	}
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

func redisTargets(vals map[string][]string) (targets, notes []string) {
	port := "6379"
	if p, ok := vals["port"]; ok {
		port = p[0]
	}
	binds := []string{"*", "-::*"}
	if b, ok := vals["bind"]; ok {
		binds = b
	}
	tlsPort := "0"
	if p, ok := vals["tls-port"]; ok {
		tlsPort = p[0]
	}
	if port != "0" || tlsPort != "0" {
		for _, a := range binds {
			optional := strings.HasPrefix(a, "-")
			a = strings.TrimPrefix(a, "-")
			switch a {
			case "*":
				a = "0.0.0.0"
			case "::*":
				a = "::"
			}
			if optional {
				ln, err := net.Listen("tcp", net.JoinHostPort(a, "0"))
				if err != nil {
					notes = append(notes, "optional bind address "+a+" not available here: not listening on it")
					continue
				}
				ln.Close()
			}
			if port != "0" {
				targets = append(targets, "tcp://"+net.JoinHostPort(a, port))
			}
			if tlsPort != "0" {
				targets = append(targets, "tls://"+net.JoinHostPort(a, tlsPort))
			}
		}
	}
	if u, ok := vals["unixsocket"]; ok && u[0] != "" {
		p, err := filepath.Abs(u[0])
		if err != nil {
			p = u[0]
		}
		targets = append(targets, "uds://"+p)
	}
	return targets, notes
}
