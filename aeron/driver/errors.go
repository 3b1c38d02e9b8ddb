package driver

import (
	"errors"
	"fmt"

	"github.com/goblin-kv/goblin/aeron"
)

// ErrActiveDriver means a live media driver already uses the Aeron
// directory (its CnC heartbeat is younger than the driver timeout).
var ErrActiveDriver = errors.New("aeron driver: active media driver detected")

// ErrClosed is returned by Start's Wait and by calls on a closed driver.
var ErrClosed = errors.New("aeron driver: closed")

// commandError is a refused command: the ON_ERROR code and text the client
// gets, as the Java driver words them. kind is empty for control protocol
// errors (text "ERROR - <msg>") and names the Java exception class of a
// generic error (text "<class> : <msg>"), so a client's exception reads
// the same with either driver.
type commandError struct {
	code aeron.ErrorCode
	kind string
	msg  string
}

func (e *commandError) Error() string {
	if e.kind != "" {
		return e.kind + " : " + e.msg
	}
	return "ERROR - " + e.msg
}

// Java exception classes whose names generic errors carry.
const (
	illegalState    = "java.lang.IllegalStateException"
	illegalArgument = "java.lang.IllegalArgumentException"
	numberFormat    = "java.lang.NumberFormatException"
	configuration   = "io.aeron.exceptions.ConfigurationException"
	aeronException  = "io.aeron.exceptions.AeronException"
)

func protocolError(code aeron.ErrorCode, format string, a ...any) error {
	return &commandError{code: code, msg: fmt.Sprintf(format, a...)}
}

func invalidChannel(format string, a ...any) error {
	return protocolError(aeron.ErrorCodeInvalidChannel, format, a...)
}

func genericError(kind, format string, a ...any) error {
	return &commandError{code: aeron.ErrorCodeGenericError, kind: kind, msg: fmt.Sprintf(format, a...)}
}

// Java classes of control protocol errors, for the error log.
const (
	invalidChannelException  = "io.aeron.driver.exceptions.InvalidChannelException"
	controlProtocolException = "io.aeron.exceptions.ControlProtocolException"
	storageSpaceException    = "io.aeron.exceptions.StorageSpaceException"
	ioException              = "java.io.IOException"
)

// errorCodeOf maps an error to the code and text the client gets
// (ClientCommandAdapter.onError), and to the line the CnC error log
// records, "<exception class>: <message>" as the first line of the Java
// driver's entry reads (the Java driver adds its stack trace).
func errorCodeOf(err error) (code aeron.ErrorCode, text, logged string) {
	var ce *commandError
	switch {
	case errors.As(err, &ce) && ce.kind != "":
		return ce.code, ce.Error(), ce.kind + ": " + ce.msg
	case errors.As(err, &ce) && ce.code == aeron.ErrorCodeInvalidChannel:
		return ce.code, ce.Error(), invalidChannelException + ": " + ce.Error()
	case errors.As(err, &ce):
		return ce.code, ce.Error(), controlProtocolException + ": " + ce.Error()
	case errors.Is(err, errStorageSpace):
		return aeron.ErrorCodeStorageSpace, "ERROR - " + err.Error(), storageSpaceException + ": ERROR - " + err.Error()
	}
	return aeron.ErrorCodeGenericError, ioException + " : " + err.Error(), ioException + ": " + err.Error()
}
