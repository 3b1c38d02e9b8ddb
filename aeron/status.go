package aeron

import (
	"errors"
	"fmt"

	"github.com/goblin-kv/goblin/aeron/internal/broadcast"
	"github.com/goblin-kv/goblin/aeron/internal/ringbuffer"
)

// Results of Offer and TryClaim below zero. They have the same values and
// meanings as the Java and C clients' constants, so logs and tools agree.
const (
	// NotConnected: no subscriber is connected to the publication; the
	// message was not sent.
	NotConnected int64 = -1
	// BackPressured: subscribers are connected but the publication has
	// reached its position limit (flow control); retry later.
	BackPressured int64 = -2
	// AdminAction: the log rotated to its next term during the call (or a
	// rotation by another publisher was in progress); retry at once.
	AdminAction int64 = -3
	// Closed: the publication (or its client) is closed.
	Closed int64 = -4
	// MaxPositionExceeded: the stream reached its largest possible position
	// (term length × 2^31); the publication must be closed and re-added.
	MaxPositionExceeded int64 = -5
)

// StatusString names an Offer or TryClaim result: "NOT_CONNECTED" and so on
// for the negative statuses, "position N" otherwise.
func StatusString(result int64) string {
	switch result {
	case NotConnected:
		return "NOT_CONNECTED"
	case BackPressured:
		return "BACK_PRESSURED"
	case AdminAction:
		return "ADMIN_ACTION"
	case Closed:
		return "CLOSED"
	case MaxPositionExceeded:
		return "MAX_POSITION_EXCEEDED"
	}
	return fmt.Sprintf("position %d", result)
}

// Errors returned by the client. Test for them with errors.Is; the returned
// errors wrap them with detail.
var (
	// ErrDriverTimeout: no live media driver was found in the Aeron
	// directory, a command got no reply within the driver timeout, or the
	// driver's heartbeat stopped (driver lost).
	ErrDriverTimeout = errors.New("aeron: media driver timeout")
	// ErrDriverShutdown: the driver marked its CnC file as shut down.
	ErrDriverShutdown = errors.New("aeron: media driver has shut down")
	// ErrClientTimeout: the driver timed this client out (its heartbeat
	// counter went stale or was removed), or the client's own conductor was
	// starved for longer than the client liveness timeout.
	ErrClientTimeout = errors.New("aeron: client timed out")
	// ErrClientClosed: the client was closed (by Close or after a fatal
	// error, which the wrapped error names).
	ErrClientClosed = errors.New("aeron: client closed")
	// ErrCnCVersion: the driver's CnC file has an incompatible version.
	ErrCnCVersion = errors.New("aeron: incompatible CnC version")
	// ErrDriver: the driver rejected a command; the error is a *DriverError.
	ErrDriver = errors.New("aeron: driver error")
	// ErrMessageTooLong: the message exceeds the publication's maximum
	// message length (or maximum payload for TryClaim).
	ErrMessageTooLong = errors.New("aeron: message too long")
	// ErrInvalidChannel: a channel URI failed validation.
	ErrInvalidChannel = errors.New("aeron: invalid channel")
	// ErrRingFull: the to-driver ring buffer had no room for a command; the
	// driver is not keeping up or has stopped.
	ErrRingFull = ringbuffer.ErrFull
	// ErrBroadcastLapped: the driver overwrote driver events before this
	// client read them; the client resynchronises and the lost events (for
	// example an image becoming available) cannot be recovered.
	ErrBroadcastLapped = broadcast.ErrLapped
)

// ErrorCode is a driver error code, carried by ON_ERROR responses.
type ErrorCode int32

// Driver error codes (io.aeron.ErrorCode).
const (
	ErrorCodeUnused                         ErrorCode = 0
	ErrorCodeInvalidChannel                 ErrorCode = 1
	ErrorCodeUnknownSubscription            ErrorCode = 2
	ErrorCodeUnknownPublication             ErrorCode = 3
	ErrorCodeChannelEndpointError           ErrorCode = 4
	ErrorCodeUnknownCounter                 ErrorCode = 5
	ErrorCodeUnknownCommandTypeID           ErrorCode = 6
	ErrorCodeMalformedCommand               ErrorCode = 7
	ErrorCodeNotSupported                   ErrorCode = 8
	ErrorCodeUnknownHost                    ErrorCode = 9
	ErrorCodeResourceTemporarilyUnavailable ErrorCode = 10
	ErrorCodeGenericError                   ErrorCode = 11
	ErrorCodeStorageSpace                   ErrorCode = 12
	ErrorCodeImageRejected                  ErrorCode = 13
	ErrorCodePublicationRevoked             ErrorCode = 14
)

var errorCodeNames = [...]string{
	"UNUSED", "INVALID_CHANNEL", "UNKNOWN_SUBSCRIPTION", "UNKNOWN_PUBLICATION", "CHANNEL_ENDPOINT_ERROR",
	"UNKNOWN_COUNTER", "UNKNOWN_COMMAND_TYPE_ID", "MALFORMED_COMMAND", "NOT_SUPPORTED", "UNKNOWN_HOST",
	"RESOURCE_TEMPORARILY_UNAVAILABLE", "GENERIC_ERROR", "STORAGE_SPACE", "IMAGE_REJECTED", "PUBLICATION_REVOKED",
}

func (c ErrorCode) String() string {
	if c >= 0 && int(c) < len(errorCodeNames) {
		return errorCodeNames[c]
	}
	return fmt.Sprintf("ErrorCode(%d)", int32(c))
}

// DriverError is a command the driver refused (ON_ERROR), or an
// asynchronous channel-endpoint error. errors.Is(err, ErrDriver) holds.
type DriverError struct {
	Code    ErrorCode
	Message string
	// CorrelationID is the offending command's correlation id (for
	// CHANNEL_ENDPOINT_ERROR, the channel status counter id).
	CorrelationID int64
}

func (e *DriverError) Error() string {
	return fmt.Sprintf("aeron: driver error %s: %s", e.Code, e.Message)
}

// Unwrap lets errors.Is(err, ErrDriver) match.
func (e *DriverError) Unwrap() error { return ErrDriver }
