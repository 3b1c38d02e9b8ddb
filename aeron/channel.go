package aeron

import (
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/goblin-kv/goblin/aeron/internal/command"
	"github.com/goblin-kv/goblin/aeron/internal/logbuffer"
	"github.com/goblin-kv/goblin/aeron/internal/uri"
)

// Channel URI parameter names (io.aeron.CommonContext).
const (
	ParamEndpoint              = "endpoint"
	ParamControl               = "control"
	ParamControlMode           = "control-mode"
	ParamInterface             = "interface"
	ParamTermLength            = "term-length"
	ParamMTU                   = "mtu"
	ParamSessionID             = "session-id"
	ParamReliable              = "reliable"
	ParamLinger                = "linger"
	ParamSparse                = "sparse"
	ParamAlias                 = "alias"
	ParamTags                  = "tags"
	ParamResponseCorrelationID = "response-correlation-id"
	ParamEOS                   = "eos"
	ParamInitialTermID         = "init-term-id"
	ParamTermID                = "term-id"
	ParamTermOffset            = "term-offset"
	ParamPublicationWindow     = "pub-wnd"
	ParamReceiverWindow        = "rcv-wnd"
	ParamSocketSndBuf          = "so-sndbuf"
	ParamSocketRcvBuf          = "so-rcvbuf"

	// ControlModeResponse marks a response channel: on a subscription, the
	// one that receives responses; on a publication, the server's response
	// publication.
	ControlModeResponse = "response"
	ControlModeManual   = "manual"
	ControlModeDynamic  = "dynamic"

	MediaIPC = "ipc"
	MediaUDP = "udp"
)

// ChannelURI is a parsed Aeron channel URI:
// [aeron-spy:]aeron:<media>[?key=value(|key=value)*]. Parameters keep their
// order so String reproduces the input.
type ChannelURI struct {
	Spy    bool
	Media  string
	params [][2]string
}

// ParseChannel parses and validates a channel URI. Errors wrap
// ErrInvalidChannel.
func ParseChannel(s string) (*ChannelURI, error) {
	p, err := uri.Parse(s)
	if err != nil {
		switch e := err.(*uri.Error); e.Kind {
		case uri.TooLong:
			return nil, fmt.Errorf("%w: %d characters > %d", ErrInvalidChannel, len(s), command.MaxChannelLength)
		case uri.NoPrefix:
			return nil, fmt.Errorf("%w: %q: a channel starts with \"aeron:\" or \"aeron-spy:\"", ErrInvalidChannel, s)
		case uri.ReservedInMedia, uri.UnknownMedia:
			return nil, fmt.Errorf("%w: %q: media must be ipc or udp, not %q", ErrInvalidChannel, s, e.Media)
		default: // uri.NoValue, uri.EmptyKey
			return nil, fmt.Errorf("%w: %q: parameter %q is not key=value", ErrInvalidChannel, s, e.Param)
		}
	}
	u := &ChannelURI{Spy: p.Spy, Media: p.Media, params: p.Params}
	for i, kv := range u.params {
		for _, prev := range u.params[:i] {
			if prev[0] == kv[0] {
				return nil, fmt.Errorf("%w: %q: parameter %q repeated", ErrInvalidChannel, s, kv[0])
			}
		}
	}
	if err := u.Validate(); err != nil {
		return nil, fmt.Errorf("%w (in %q)", err, s)
	}
	return u, nil
}

// Get returns a parameter's value, or "".
func (u *ChannelURI) Get(key string) string {
	for _, p := range u.params {
		if p[0] == key {
			return p[1]
		}
	}
	return ""
}

// Set sets (or replaces) a parameter; an empty value removes it.
func (u *ChannelURI) Set(key, value string) *ChannelURI {
	for i, p := range u.params {
		if p[0] == key {
			if value == "" {
				u.params = append(u.params[:i], u.params[i+1:]...)
			} else {
				u.params[i][1] = value
			}
			return u
		}
	}
	if value != "" {
		u.params = append(u.params, [2]string{key, value})
	}
	return u
}

// Params returns the parameters in order as key/value pairs.
func (u *ChannelURI) Params() [][2]string { return u.params }

// String formats the URI.
func (u *ChannelURI) String() string {
	var b strings.Builder
	if u.Spy {
		b.WriteString("aeron-spy:")
	}
	b.WriteString("aeron:")
	b.WriteString(u.Media)
	for i, p := range u.params {
		if i == 0 {
			b.WriteByte('?')
		} else {
			b.WriteByte('|')
		}
		b.WriteString(p[0])
		b.WriteByte('=')
		b.WriteString(p[1])
	}
	return b.String()
}

// Validate checks the parameters the driver would reject, so errors show up
// at the call site with a clear message. Errors wrap ErrInvalidChannel.
func (u *ChannelURI) Validate() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrInvalidChannel}, a...)...)
	}
	for _, p := range u.params {
		if strings.ContainsAny(p[0], "|=?") || strings.ContainsAny(p[1], "|?") {
			return bad("parameter %q=%q has a reserved character", p[0], p[1])
		}
	}
	for _, k := range []string{ParamEndpoint, ParamControl} {
		if v := u.Get(k); v != "" {
			if _, port, err := net.SplitHostPort(v); err != nil {
				return bad("%s=%q is not host:port", k, v)
			} else if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
				return bad("%s=%q has an invalid port", k, v)
			}
		}
	}
	if v := u.Get(ParamTermLength); v != "" {
		n, err := uri.ParseSize(v)
		if err != nil || n < logbuffer.MinTermLength || n > logbuffer.MaxTermLength || n&(n-1) != 0 {
			return bad("term-length=%q must be a power of two between 64k and 1g", v)
		}
	}
	if v := u.Get(ParamMTU); v != "" {
		n, err := uri.ParseSize(v)
		if err != nil || n <= logbuffer.HeaderLength || n > 65504 || n%logbuffer.FrameAlignment != 0 {
			return bad("mtu=%q must be a multiple of 32 in (32, 65504]", v)
		}
	}
	if v := u.Get(ParamSessionID); v != "" && !strings.HasPrefix(v, "tag:") {
		if _, err := strconv.ParseInt(v, 10, 32); err != nil {
			return bad("session-id=%q is not an int32", v)
		}
	}
	if v := u.Get(ParamResponseCorrelationID); v != "" && v != "prototype" {
		if _, err := strconv.ParseInt(v, 10, 64); err != nil {
			return bad("response-correlation-id=%q is not an int64 or prototype", v)
		}
	}
	for _, k := range []string{ParamReliable, ParamSparse, ParamEOS} {
		if v := u.Get(k); v != "" && v != "true" && v != "false" {
			return bad("%s=%q must be true or false", k, v)
		}
	}
	mode := u.Get(ParamControlMode)
	switch mode {
	case "", ControlModeManual, ControlModeDynamic, ControlModeResponse:
	default:
		return bad("control-mode=%q must be manual, dynamic or response", mode)
	}
	ids := 0
	for _, k := range []string{ParamInitialTermID, ParamTermID, ParamTermOffset} {
		if v := u.Get(k); v != "" {
			ids++
			if _, err := strconv.ParseInt(v, 10, 32); err != nil {
				return bad("%s=%q is not an int32", k, v)
			}
		}
	}
	if ids != 0 && ids != 3 {
		return bad("init-term-id, term-id and term-offset must be given together")
	}
	if u.Media == MediaUDP {
		if u.Get(ParamEndpoint) == "" && u.Get(ParamControl) == "" && u.Get(ParamTags) == "" &&
			mode != ControlModeManual && mode != ControlModeResponse {
			return bad("a udp channel needs endpoint, control, tags or control-mode=manual|response")
		}
		if mode == ControlModeDynamic && u.Get(ParamControl) == "" {
			return bad("control-mode=dynamic needs control")
		}
	}
	return nil
}

// ChannelBuilder builds a channel URI from typed setters; Build validates.
//
//	ch, err := aeron.NewChannel(aeron.MediaUDP).Endpoint("127.0.0.1:40123").TermLength(64 << 10).Build()
type ChannelBuilder struct{ u ChannelURI }

// NewChannel starts a builder for media "ipc" or "udp".
func NewChannel(media string) *ChannelBuilder { return &ChannelBuilder{u: ChannelURI{Media: media}} }

// IPC starts a builder for aeron:ipc.
func IPC() *ChannelBuilder { return NewChannel(MediaIPC) }

// UDP starts a builder for aeron:udp.
func UDP() *ChannelBuilder { return NewChannel(MediaUDP) }

// Set sets any parameter.
func (b *ChannelBuilder) Set(key, value string) *ChannelBuilder { b.u.Set(key, value); return b }

// Endpoint sets endpoint=host:port.
func (b *ChannelBuilder) Endpoint(hostPort string) *ChannelBuilder {
	return b.Set(ParamEndpoint, hostPort)
}

// Control sets control=host:port.
func (b *ChannelBuilder) Control(hostPort string) *ChannelBuilder {
	return b.Set(ParamControl, hostPort)
}

// ControlMode sets control-mode (manual, dynamic or response).
func (b *ChannelBuilder) ControlMode(mode string) *ChannelBuilder {
	return b.Set(ParamControlMode, mode)
}

// ResponseCorrelationID sets response-correlation-id: on a request
// publication the response subscription's registration id; on a response
// publication the request image's correlation id.
func (b *ChannelBuilder) ResponseCorrelationID(id int64) *ChannelBuilder {
	return b.Set(ParamResponseCorrelationID, strconv.FormatInt(id, 10))
}

// TermLength sets term-length in bytes.
func (b *ChannelBuilder) TermLength(n int) *ChannelBuilder {
	return b.Set(ParamTermLength, strconv.Itoa(n))
}

// MTU sets mtu in bytes.
func (b *ChannelBuilder) MTU(n int) *ChannelBuilder { return b.Set(ParamMTU, strconv.Itoa(n)) }

// SessionID sets session-id.
func (b *ChannelBuilder) SessionID(id int32) *ChannelBuilder {
	return b.Set(ParamSessionID, strconv.FormatInt(int64(id), 10))
}

// Linger sets linger in nanoseconds.
func (b *ChannelBuilder) Linger(ns int64) *ChannelBuilder {
	return b.Set(ParamLinger, strconv.FormatInt(ns, 10))
}

// Reliable sets reliable=true|false.
func (b *ChannelBuilder) Reliable(v bool) *ChannelBuilder {
	return b.Set(ParamReliable, strconv.FormatBool(v))
}

// Alias sets alias.
func (b *ChannelBuilder) Alias(a string) *ChannelBuilder { return b.Set(ParamAlias, a) }

// Build validates and formats the URI.
func (b *ChannelBuilder) Build() (string, error) {
	if b.u.Media != MediaIPC && b.u.Media != MediaUDP {
		return "", fmt.Errorf("%w: media must be ipc or udp, not %q", ErrInvalidChannel, b.u.Media)
	}
	if err := b.u.Validate(); err != nil {
		return "", err
	}
	s := b.u.String()
	if len(s) > command.MaxChannelLength {
		return "", fmt.Errorf("%w: %d characters > %d", ErrInvalidChannel, len(s), command.MaxChannelLength)
	}
	return s, nil
}

// String is Build for call sites that know the URI is valid; it panics on
// an invalid one.
func (b *ChannelBuilder) String() string {
	s, err := b.Build()
	if err != nil {
		panic(err)
	}
	return s
}
