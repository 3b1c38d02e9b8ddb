package command

import "github.com/goblin-kv/goblin/internal/shm"

// ErrorResponse is ON_ERROR (ErrorResponseFlyweight).
type ErrorResponse []byte

const (
	errorOffendingCorrelationOffset = 0
	errorCodeOffset                 = 8
	errorMessageOffset              = 12
	ErrorResponseMinLength          = 16
)

// OffendingCorrelationID is the failed command's correlation id (for
// CHANNEL_ENDPOINT_ERROR, the channel status counter id).
func (m ErrorResponse) OffendingCorrelationID() int64 {
	return shm.GetInt64(m, errorOffendingCorrelationOffset)
}

// Code is the error code (io.aeron.ErrorCode).
func (m ErrorResponse) Code() int32 { return shm.GetInt32(m, errorCodeOffset) }

// Message is the error text.
func (m ErrorResponse) Message() string { return String(m, errorMessageOffset) }

// AppendErrorResponse encodes ON_ERROR.
func AppendErrorResponse(b []byte, offendingCorrelationID int64, code int32, message string) []byte {
	return AppendString(AppendInt32(AppendInt64(b, offendingCorrelationID), code), message)
}

// PublicationBuffersReady is ON_PUBLICATION_READY and
// ON_EXCLUSIVE_PUBLICATION_READY (PublicationBuffersReadyFlyweight).
type PublicationBuffersReady []byte

const (
	pubReadyCorrelationOffset        = 0
	pubReadyRegistrationOffset       = 8
	pubReadySessionIDOffset          = 16
	pubReadyStreamIDOffset           = 20
	pubReadyLimitCounterOffset       = 24
	pubReadyStatusCounterOffset      = 28
	pubReadyLogFileOffset            = 32
	PublicationBuffersReadyMinLength = 36
)

// CorrelationID is the add command's correlation id.
func (m PublicationBuffersReady) CorrelationID() int64 {
	return shm.GetInt64(m, pubReadyCorrelationOffset)
}

// RegistrationID is the publication's registration id (for a shared
// concurrent publication, the first add's correlation id).
func (m PublicationBuffersReady) RegistrationID() int64 {
	return shm.GetInt64(m, pubReadyRegistrationOffset)
}

// SessionID is the publication's session id.
func (m PublicationBuffersReady) SessionID() int32 { return shm.GetInt32(m, pubReadySessionIDOffset) }

// StreamID is the publication's stream id.
func (m PublicationBuffersReady) StreamID() int32 { return shm.GetInt32(m, pubReadyStreamIDOffset) }

// PublicationLimitCounterID is the pub-lmt counter's id.
func (m PublicationBuffersReady) PublicationLimitCounterID() int32 {
	return shm.GetInt32(m, pubReadyLimitCounterOffset)
}

// ChannelStatusIndicatorID is the channel status counter's id (−1 for IPC).
func (m PublicationBuffersReady) ChannelStatusIndicatorID() int32 {
	return shm.GetInt32(m, pubReadyStatusCounterOffset)
}

// LogFileName is the log buffer's path.
func (m PublicationBuffersReady) LogFileName() string { return String(m, pubReadyLogFileOffset) }

// AppendPublicationBuffersReady encodes a publication-ready response.
func AppendPublicationBuffersReady(b []byte, correlationID, registrationID int64, sessionID, streamID,
	limitCounterID, statusCounterID int32, logFileName string) []byte {
	b = AppendInt64(AppendInt64(b, correlationID), registrationID)
	b = AppendInt32(AppendInt32(b, sessionID), streamID)
	b = AppendInt32(AppendInt32(b, limitCounterID), statusCounterID)
	return AppendString(b, logFileName)
}

// ImageBuffersReady is ON_AVAILABLE_IMAGE (ImageBuffersReadyFlyweight).
type ImageBuffersReady []byte

const (
	imageReadyCorrelationOffset  = 0
	imageReadySessionIDOffset    = 8
	imageReadyStreamIDOffset     = 12
	imageReadySubscriptionOffset = 16
	imageReadyPositionOffset     = 24
	imageReadyLogFileOffset      = 28
	ImageBuffersReadyMinLength   = 32
)

// CorrelationID is the image's correlation id (for IPC, the publication's
// registration id).
func (m ImageBuffersReady) CorrelationID() int64 { return shm.GetInt64(m, imageReadyCorrelationOffset) }

// SessionID is the image's session id.
func (m ImageBuffersReady) SessionID() int32 { return shm.GetInt32(m, imageReadySessionIDOffset) }

// StreamID is the image's stream id.
func (m ImageBuffersReady) StreamID() int32 { return shm.GetInt32(m, imageReadyStreamIDOffset) }

// SubscriptionRegistrationID is the subscription the image joins.
func (m ImageBuffersReady) SubscriptionRegistrationID() int64 {
	return shm.GetInt64(m, imageReadySubscriptionOffset)
}

// SubscriberPositionID is the sub-pos counter's id.
func (m ImageBuffersReady) SubscriberPositionID() int32 {
	return shm.GetInt32(m, imageReadyPositionOffset)
}

// LogFileName is the log buffer's path.
func (m ImageBuffersReady) LogFileName() string { return String(m, imageReadyLogFileOffset) }

// SourceIdentity is where the image comes from ("aeron:ipc", or the
// sender's host:port).
func (m ImageBuffersReady) SourceIdentity() string {
	_, next, ok := ascii(m, imageReadyLogFileOffset)
	if !ok {
		return ""
	}
	return String(m, imageReadyLogFileOffset+shm.Align(next-imageReadyLogFileOffset-4, 4)+4)
}

// AppendImageBuffersReady encodes ON_AVAILABLE_IMAGE.
func AppendImageBuffersReady(b []byte, correlationID int64, sessionID, streamID int32, subscriptionRegistrationID int64,
	subscriberPositionID int32, logFileName, sourceIdentity string) []byte {
	b = AppendInt32(AppendInt32(AppendInt64(b, correlationID), sessionID), streamID)
	b = AppendInt32(AppendInt64(b, subscriptionRegistrationID), subscriberPositionID)
	start := len(b) + 4
	b = pad4(AppendString(b, logFileName), start)
	return AppendString(b, sourceIdentity)
}

// OperationSucceeded is ON_OPERATION_SUCCESS; ClientTimeout is
// ON_CLIENT_TIMEOUT: one int64 each.
type OperationSucceeded []byte

// CorrelationID is the succeeded command's correlation id.
func (m OperationSucceeded) CorrelationID() int64 { return shm.GetInt64(m, 0) }

// CorrelatedResponseLength is the length of the one-int64 responses.
const CorrelatedResponseLength = 8

// ClientTimeout is ON_CLIENT_TIMEOUT.
type ClientTimeout []byte

// ClientID is the timed-out client.
func (m ClientTimeout) ClientID() int64 { return shm.GetInt64(m, 0) }

// ImageMessage is ON_UNAVAILABLE_IMAGE (ImageMessageFlyweight).
type ImageMessage []byte

const (
	imageMsgCorrelationOffset  = 0
	imageMsgSubscriptionOffset = 8
	imageMsgStreamIDOffset     = 16
	imageMsgChannelOffset      = 20
	ImageMessageMinLength      = 24
)

// CorrelationID is the image's correlation id.
func (m ImageMessage) CorrelationID() int64 { return shm.GetInt64(m, imageMsgCorrelationOffset) }

// SubscriptionRegistrationID is the subscription losing the image.
func (m ImageMessage) SubscriptionRegistrationID() int64 {
	return shm.GetInt64(m, imageMsgSubscriptionOffset)
}

// StreamID is the stream id.
func (m ImageMessage) StreamID() int32 { return shm.GetInt32(m, imageMsgStreamIDOffset) }

// Channel is the subscription's channel.
func (m ImageMessage) Channel() string { return String(m, imageMsgChannelOffset) }

// AppendImageMessage encodes ON_UNAVAILABLE_IMAGE.
func AppendImageMessage(b []byte, correlationID, subscriptionRegistrationID int64, streamID int32, channel string) []byte {
	b = AppendInt32(AppendInt64(AppendInt64(b, correlationID), subscriptionRegistrationID), streamID)
	return AppendString(b, channel)
}

// CounterUpdate is ON_SUBSCRIPTION_READY, ON_COUNTER_READY,
// ON_UNAVAILABLE_COUNTER, ON_STATIC_COUNTER and
// ON_NEXT_AVAILABLE_SESSION_ID: an int64 id then an int32 (a counter id or
// a session id).
type CounterUpdate []byte

// CounterUpdateLength is the length of those responses.
const CounterUpdateLength = 12

// CorrelationID is the command's correlation id (for
// ON_UNAVAILABLE_COUNTER, the counter's registration id; for the client
// heartbeat's ON_COUNTER_READY, the client id).
func (m CounterUpdate) CorrelationID() int64 { return shm.GetInt64(m, 0) }

// Value is the counter id (ON_SUBSCRIPTION_READY: the channel status
// counter id; ON_NEXT_AVAILABLE_SESSION_ID: the session id).
func (m CounterUpdate) Value() int32 { return shm.GetInt32(m, 8) }

// AppendCounterUpdate encodes one of the CounterUpdate responses.
func AppendCounterUpdate(b []byte, correlationID int64, value int32) []byte {
	return AppendInt32(AppendInt64(b, correlationID), value)
}

// PublicationErrorFrame is ON_PUBLICATION_ERROR
// (PublicationErrorFrameFlyweight).
type PublicationErrorFrame []byte

const (
	pubErrRegistrationOffset  = 0
	pubErrDestinationOffset   = 8
	pubErrSessionIDOffset     = 16
	pubErrStreamIDOffset      = 20
	pubErrReceiverIDOffset    = 24
	pubErrGroupTagOffset      = 32
	pubErrAddressTypeOffset   = 40
	pubErrPortOffset          = 42
	pubErrAddressOffset       = 44
	pubErrCodeOffset          = 60
	pubErrMessageOffset       = 64
	PublicationErrorMinLength = 68

	// AddressTypeIPv4 and AddressTypeIPv6 are the address types.
	AddressTypeIPv4 = 1
	AddressTypeIPv6 = 2
)

// RegistrationID is the publication's registration id.
func (m PublicationErrorFrame) RegistrationID() int64 {
	return shm.GetInt64(m, pubErrRegistrationOffset)
}

// Code is the error code.
func (m PublicationErrorFrame) Code() int32 { return shm.GetInt32(m, pubErrCodeOffset) }

// Message is the error text.
func (m PublicationErrorFrame) Message() string { return String(m, pubErrMessageOffset) }

// AppendPublicationErrorFrame encodes ON_PUBLICATION_ERROR; address is 4
// (IPv4) or 16 (IPv6) bytes.
func AppendPublicationErrorFrame(b []byte, registrationID, destinationRegistrationID int64, sessionID, streamID int32,
	receiverID, groupTag int64, address []byte, port uint16, code int32, message string) []byte {
	b = AppendInt64(AppendInt64(b, registrationID), destinationRegistrationID)
	b = AppendInt64(AppendInt64(AppendInt32(AppendInt32(b, sessionID), streamID), receiverID), groupTag)
	addrType := int16(AddressTypeIPv4)
	if len(address) == 16 {
		addrType = AddressTypeIPv6
	}
	b = append(b, byte(addrType), byte(addrType>>8), byte(port), byte(port>>8))
	var addr [16]byte
	copy(addr[:], address)
	b = append(b, addr[:]...)
	return AppendString(AppendInt32(b, code), message)
}
