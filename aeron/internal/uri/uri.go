// Package uri reads Aeron channel URIs and sizes the one way both the Go
// client (package aeron) and the media driver (aeron/driver) read them,
// following the Java driver's ChannelUri.parse and SystemUtil.parseSize:
//
//	[aeron-spy:]aeron:<media>[?key=value(|key=value)*]
//
// Parse only splits a URI into its parts; what a parameter's value may be,
// and whether a key may repeat, is the caller's rule (the client refuses a
// repeated key, the driver keeps the last value, as Java's does). Errors
// are *Error values whose Kind says what was wrong, so each caller words
// its refusal its own way (the driver in the Java driver's words, which
// its clients read back).
package uri

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/goblin-kv/goblin/aeron/internal/command"
)

// The prefixes and media a channel URI may have.
const (
	Prefix    = "aeron:"
	SpyPrefix = "aeron-spy:"
	MediaIPC  = "ipc"
	MediaUDP  = "udp"
)

// URI is a channel URI split into its parts.
type URI struct {
	Spy   bool
	Media string
	// Params are the key=value parameters in the order given, a repeated
	// key as often as it was given; values may be empty.
	Params [][2]string
}

// Kind is what made Parse refuse a URI.
type Kind uint8

// The kinds of Error.
const (
	TooLong         Kind = iota + 1 // longer than command.MaxChannelLength
	NoPrefix                        // does not start with aeron: or aeron-spy:aeron:
	ReservedInMedia                 // the media holds ':', '|' or '='
	UnknownMedia                    // the media is neither ipc nor udp
	NoValue                         // a parameter without '=' (also an empty query: "aeron:ipc?")
	EmptyKey                        // a parameter "=value"
)

// Error is Parse's refusal.
type Error struct {
	Kind  Kind
	Media string // the media, for ReservedInMedia and UnknownMedia
	Param string // the parameter's text, for NoValue and EmptyKey
}

func (e *Error) Error() string {
	switch e.Kind {
	case TooLong:
		return fmt.Sprintf("channel URI longer than %d characters", command.MaxChannelLength)
	case NoPrefix:
		return `channel URI does not start with "aeron:" or "aeron-spy:"`
	case ReservedInMedia:
		return fmt.Sprintf("reserved character in media %q", e.Media)
	case UnknownMedia:
		return fmt.Sprintf("unknown media %q", e.Media)
	case NoValue:
		return fmt.Sprintf("parameter %q has no '='", e.Param)
	case EmptyKey:
		return fmt.Sprintf("parameter %q has an empty key", e.Param)
	}
	return "invalid channel URI"
}

// Parse splits s into its parts. It refuses (with an *Error) a URI
// longer than command.MaxChannelLength, one without the aeron: prefix, a
// media other than ipc or udp, and a parameter without '=' or with an
// empty key.
func Parse(s string) (URI, error) {
	var u URI
	if len(s) > command.MaxChannelLength {
		return u, &Error{Kind: TooLong}
	}
	rest := s
	if strings.HasPrefix(rest, SpyPrefix) {
		u.Spy = true
		rest = rest[len(SpyPrefix):]
	}
	if !strings.HasPrefix(rest, Prefix) {
		return u, &Error{Kind: NoPrefix}
	}
	rest = rest[len(Prefix):]
	media, query, hasQuery := strings.Cut(rest, "?")
	if strings.ContainsAny(media, ":|=") {
		return u, &Error{Kind: ReservedInMedia, Media: media}
	}
	if media != MediaIPC && media != MediaUDP {
		return u, &Error{Kind: UnknownMedia, Media: media}
	}
	u.Media = media
	if hasQuery {
		for _, kv := range strings.Split(query, "|") {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				return u, &Error{Kind: NoValue, Param: kv}
			}
			if k == "" {
				return u, &Error{Kind: EmptyKey, Param: kv}
			}
			u.Params = append(u.Params, [2]string{k, v})
		}
	}
	return u, nil
}

// Get returns the last value given for key.
func (u *URI) Get(key string) (string, bool) {
	for i := len(u.Params) - 1; i >= 0; i-- {
		if u.Params[i][0] == key {
			return u.Params[i][1], true
		}
	}
	return "", false
}

// ErrSize is ParseSize's refusal.
var ErrSize = errors.New("not a size")

// ParseSize reads a size: a non-negative decimal number with an optional
// k, m or g suffix (either case; powers of 1024), as SystemUtil.parseSize
// does. It refuses, wrapping ErrSize, an empty value, anything else, and a
// size over 2^62.
func ParseSize(v string) (int64, error) {
	if v == "" {
		return 0, fmt.Errorf("%w: empty", ErrSize)
	}
	mult := int64(1)
	switch v[len(v)-1] {
	case 'k', 'K':
		mult = 1 << 10
	case 'm', 'M':
		mult = 1 << 20
	case 'g', 'G':
		mult = 1 << 30
	}
	digits := v
	if mult != 1 {
		digits = v[:len(v)-1]
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || n < 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("%w: %q", ErrSize, v)
	}
	return n * mult, nil
}
