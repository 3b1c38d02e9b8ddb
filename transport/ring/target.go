package ring

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/goblin-kv/goblin/idle"
	"github.com/goblin-kv/goblin/transport"
)

// ConfigFor fills a server's Options from a ring target,
// ring:///dev/shm/goblin?proto=sbe&records=256&record=16384&group=goblin.
// The caller sets Handler. Unknown parameters are an error.
func ConfigFor(t transport.Target) (Options, error) {
	o := Options{Dir: t.Path, Proto: t.Proto}
	if t.Scheme != transport.Ring {
		return o, fmt.Errorf("ring: target scheme %q is not ring", t.Scheme)
	}
	for k, v := range t.Params {
		var err error
		switch k {
		case "records":
			o.Records, err = strconv.Atoi(v)
		case "record":
			o.RecordSize, err = strconv.Atoi(v)
		case "group":
			o.Group = v
		case "wait", "server-timeout", "server_timeout": // client-side parameters; a shared target may carry them
		default:
			return o, fmt.Errorf("ring: %w: unknown target parameter %q (want records, record or group)", transport.ErrTargetParam, k)
		}
		if err != nil {
			return o, fmt.Errorf("ring: %w: parameter %s=%q: %w", transport.ErrTargetParam, k, v, err)
		}
	}
	o.ensureDefaults()
	return o, checkGeometry(o.Records, o.RecordSize)
}

// DialOptionsFor fills DialOptions from a ring target:
// ring:///dev/shm/goblin?proto=sbe&wait=spin|yield|backoff&server-timeout=3s
// (wait=park and server_timeout, the older spellings, still work).
// A target without proto speaks the server's protocol (AnyProto).
// Server-side parameters (records, record, group) are accepted and ignored,
// so server and clients can share one target string.
func DialOptionsFor(t transport.Target) (DialOptions, error) {
	o := DialOptions{Proto: t.Proto, AnyProto: !t.ProtoSet}
	if t.Scheme != transport.Ring {
		return o, fmt.Errorf("ring: target scheme %q is not ring", t.Scheme)
	}
	for k, v := range t.Params {
		var err error
		switch k {
		case "wait":
			o.Wait, err = idle.Parse(v)
		case "server-timeout", "server_timeout": // server_timeout: deprecated spelling
			o.ServerTimeout, err = time.ParseDuration(v)
		case "records", "record", "group":
		default:
			return o, fmt.Errorf("ring: %w: unknown target parameter %q (want wait or server-timeout)", transport.ErrTargetParam, k)
		}
		if err != nil {
			return o, fmt.Errorf("ring: %w: parameter %s=%q: %w", transport.ErrTargetParam, k, v, err)
		}
	}
	return o, nil
}

// DialTarget dials the ring server a target names. The returned Conn
// implements transport.Conn.
func DialTarget(ctx context.Context, t transport.Target) (transport.Conn, error) {
	o, err := DialOptionsFor(t)
	if err != nil {
		return nil, err
	}
	c, err := Dial(ctx, t.Path, o)
	if err != nil {
		return nil, err
	}
	return c, nil
}
