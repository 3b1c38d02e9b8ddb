package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/goblin-kv/goblin/client"
	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/transport"
)

// appendRaw appends v as redis-cli --raw prints it: strings as their
// bytes, integers and doubles as numbers, nil as nothing, an error's text
// followed by a newline, aggregates one element a line (a map's key and
// value on one line, a space apart).
func appendRaw(dst []byte, v client.Value) []byte {
	switch v.Kind {
	case client.KindNil:
	case client.KindError:
		if v.Err != nil {
			dst = append(dst, v.Err.Message...)
		}
		dst = append(dst, '\n')
	case client.KindStatus, client.KindBulk, client.KindVerbatim, client.KindDouble, client.KindBigNumber:
		dst = append(dst, v.Str...)
	case client.KindInt:
		dst = strconv.AppendInt(dst, v.Int, 10)
	case client.KindBool:
		dst = append(dst, v.String()...)
	case client.KindMap:
		for i := 0; i+1 < len(v.Array); i += 2 {
			if i > 0 {
				dst = append(dst, '\n')
			}
			dst = appendRaw(dst, v.Array[i])
			dst = append(dst, ' ')
			dst = appendRaw(dst, v.Array[i+1])
		}
	case client.KindArray, client.KindSet, client.KindPush:
		for i, e := range v.Array {
			if i > 0 {
				dst = append(dst, '\n')
			}
			dst = appendRaw(dst, e)
		}
	}
	return dst
}

// shortTarget is the target as the prompt shows it: host:port for TCP, the
// socket path (home as ~, a long directory elided) for a Unix socket,
// ring: and aeron: forms likewise, "sbe " first when the protocol is SBE.
// The whole target is printed once, when the prompt opens.
func shortTarget(t transport.Target) string {
	var s string
	switch t.Scheme {
	case transport.TCP:
		s = t.Address
	case transport.UDS:
		s = shortPath(t.Path)
	case transport.Ring:
		s = "ring:" + shortPath(t.Path)
	case transport.Aeron:
		s = "aeron:" + t.Address
		if ep := t.Params["endpoint"]; ep != "" {
			s += " " + ep
		}
	default:
		s = t.String()
	}
	if t.Proto == proto.SBE {
		s = "sbe " + s
	}
	return s
}

// maxPromptPath is the longest path the prompt shows whole.
const maxPromptPath = 24

func shortPath(p string) string {
	if home, err := os.UserHomeDir(); err == nil && home != "/" && strings.HasPrefix(p, home+"/") {
		p = "~" + p[len(home):]
	}
	if len(p) > maxPromptPath {
		p = ".../" + filepath.Base(p)
	}
	return p
}

// promptText is the prompt: the short target, the database in brackets
// when it is not 0 (as redis-cli shows it), then "> ".
func (s *session) promptText() string {
	p := s.short
	if one, ok := s.c.(*client.Client); ok {
		if db := one.DB(); db != 0 {
			p += "[" + strconv.Itoa(db) + "]"
		}
	}
	return p + "> "
}

// monitor streams what the server runs, as redis-cli monitor does: OK,
// then one line per command, until Ctrl-C (back to the prompt, or exit 0)
// or until the connection ends (reported, exit 3). The stream has a
// connection of its own, so the prompt's stays in step.
func (s *session) monitor() int {
	one, ok := s.c.(*client.Client)
	if !ok {
		fmt.Fprintln(s.errw, "goblin-client: monitor with --cluster: MONITOR shows one node's commands; run it with --target set to that node, without --cluster")
		return exitUsage
	}
	ctx, cancel := s.ctx()
	m, err := one.Monitor(ctx)
	cancel()
	if err != nil {
		return s.report(err)
	}
	defer m.Close()
	fmt.Fprintln(s.out, "OK")
	sctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	for {
		line, err := m.Next(sctx)
		if err != nil {
			if sctx.Err() != nil {
				return exitOK // Ctrl-C ends the stream
			}
			return s.report(err)
		}
		fmt.Fprintln(s.out, line)
	}
}

// jsonFloat is a double for JSON: a number, or its text for inf and nan,
// which JSON cannot hold.
func jsonFloat(v client.Value) any {
	if math.IsInf(v.Float, 0) || math.IsNaN(v.Float) {
		return string(v.Str)
	}
	return v.Float
}
