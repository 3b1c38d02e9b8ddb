package command

import "github.com/goblin-kv/goblin/internal/shm"

// Correlated is the 16-byte header of every command
// (CorrelatedMessageFlyweight); CLIENT_KEEPALIVE and CLIENT_CLOSE are only
// this header.
type Correlated []byte

// Correlated field offsets.
const (
	ClientIDOffset      = 0
	CorrelationIDOffset = 8
	CorrelatedLength    = 16
)

// ClientID is the sending client's id.
func (m Correlated) ClientID() int64 { return shm.GetInt64(m, ClientIDOffset) }

// CorrelationID is the command's correlation id.
func (m Correlated) CorrelationID() int64 { return shm.GetInt64(m, CorrelationIDOffset) }

// Validate checks the length.
func (m Correlated) Validate(typeID int32) error {
	if len(m) < CorrelatedLength {
		return tooShort(typeID, "", len(m))
	}
	return nil
}

// AppendCorrelated encodes the header.
func AppendCorrelated(b []byte, clientID, correlationID int64) []byte {
	return AppendInt64(AppendInt64(b, clientID), correlationID)
}

// PublicationMessage is ADD_PUBLICATION and ADD_EXCLUSIVE_PUBLICATION
// (PublicationMessageFlyweight).
type PublicationMessage []byte

// PublicationMessage field offsets.
const (
	publicationStreamIDOffset = 16
	publicationChannelOffset  = 20
	publicationMinLength      = 24
)

// StreamID is the stream id.
func (m PublicationMessage) StreamID() int32 { return shm.GetInt32(m, publicationStreamIDOffset) }

// Channel is the channel URI's bytes (a view).
func (m PublicationMessage) Channel() []byte {
	s, _, _ := ascii(m, publicationChannelOffset)
	return s
}

// Validate checks the length and the channel's.
func (m PublicationMessage) Validate(typeID int32) error {
	if len(m) < publicationMinLength {
		return tooShort(typeID, "", len(m))
	}
	if _, _, ok := ascii(m, publicationChannelOffset); !ok {
		return tooShort(typeID, " for channel", len(m))
	}
	return nil
}

// AppendPublicationMessage encodes ADD_(EXCLUSIVE_)PUBLICATION.
func AppendPublicationMessage(b []byte, clientID, correlationID int64, streamID int32, channel string) []byte {
	b = AppendCorrelated(b, clientID, correlationID)
	return AppendString(AppendInt32(b, streamID), channel)
}

// RemovePublicationMessage is REMOVE_PUBLICATION (RemovePublicationFlyweight):
// 24 bytes, or 32 with flags since 1.48.
type RemovePublicationMessage []byte

// RemovePublicationMessage field offsets and flags.
const (
	removeRegistrationIDOffset = 16
	removePublicationFlags     = 24
	removeMessageLength        = 24
	// FlagRevoke asks the driver to revoke the publication.
	FlagRevoke int64 = 0x1
)

// RegistrationID is the publication's registration id.
func (m RemovePublicationMessage) RegistrationID() int64 {
	return shm.GetInt64(m, removeRegistrationIDOffset)
}

// Revoke reports the revoke flag (false for a 24-byte message).
func (m RemovePublicationMessage) Revoke() bool {
	return len(m) >= removePublicationFlags+8 && shm.GetInt64(m, removePublicationFlags)&FlagRevoke != 0
}

// AppendRemovePublication encodes REMOVE_PUBLICATION with flags.
func AppendRemovePublication(b []byte, clientID, correlationID, registrationID int64, revoke bool) []byte {
	flags := int64(0)
	if revoke {
		flags = FlagRevoke
	}
	return AppendInt64(AppendInt64(AppendCorrelated(b, clientID, correlationID), registrationID), flags)
}

// RemoveMessage is REMOVE_SUBSCRIPTION and REMOVE_COUNTER
// (RemoveMessageFlyweight).
type RemoveMessage []byte

// RegistrationID is the resource's registration id.
func (m RemoveMessage) RegistrationID() int64 { return shm.GetInt64(m, removeRegistrationIDOffset) }

// Validate checks the length.
func (m RemoveMessage) Validate(typeID int32) error {
	if len(m) < removeMessageLength {
		return tooShort(typeID, "", len(m))
	}
	return nil
}

// AppendRemove encodes REMOVE_SUBSCRIPTION or REMOVE_COUNTER.
func AppendRemove(b []byte, clientID, correlationID, registrationID int64) []byte {
	return AppendInt64(AppendCorrelated(b, clientID, correlationID), registrationID)
}

// SubscriptionMessage is ADD_SUBSCRIPTION (SubscriptionMessageFlyweight).
type SubscriptionMessage []byte

// SubscriptionMessage field offsets.
const (
	subscriptionRegistrationOffset = 16 // clients send −1
	subscriptionStreamIDOffset     = 24
	subscriptionChannelOffset      = 28
	subscriptionMinLength          = 32
)

// StreamID is the stream id.
func (m SubscriptionMessage) StreamID() int32 { return shm.GetInt32(m, subscriptionStreamIDOffset) }

// Channel is the channel URI's bytes (a view).
func (m SubscriptionMessage) Channel() []byte {
	s, _, _ := ascii(m, subscriptionChannelOffset)
	return s
}

// Validate checks the length and the channel's.
func (m SubscriptionMessage) Validate(typeID int32) error {
	if len(m) < subscriptionMinLength {
		return tooShort(typeID, "", len(m))
	}
	if _, _, ok := ascii(m, subscriptionChannelOffset); !ok {
		return tooShort(typeID, " for channel", len(m))
	}
	return nil
}

// AppendSubscriptionMessage encodes ADD_SUBSCRIPTION.
func AppendSubscriptionMessage(b []byte, clientID, correlationID int64, streamID int32, channel string) []byte {
	b = AppendInt64(AppendCorrelated(b, clientID, correlationID), -1)
	return AppendString(AppendInt32(b, streamID), channel)
}

// DestinationMessage is ADD/REMOVE_(RCV_)DESTINATION
// (DestinationMessageFlyweight).
type DestinationMessage []byte

// DestinationMessage field offsets.
const (
	destinationRegistrationOffset = 16
	destinationChannelOffset      = 24
	destinationMinLength          = 28
)

// RegistrationID is the publication's or subscription's registration id.
func (m DestinationMessage) RegistrationID() int64 {
	return shm.GetInt64(m, destinationRegistrationOffset)
}

// Channel is the destination URI's bytes (a view).
func (m DestinationMessage) Channel() []byte {
	s, _, _ := ascii(m, destinationChannelOffset)
	return s
}

// Validate checks the length and the channel's.
func (m DestinationMessage) Validate(typeID int32) error {
	if len(m) < destinationMinLength {
		return tooShort(typeID, "", len(m))
	}
	if _, _, ok := ascii(m, destinationChannelOffset); !ok {
		return tooShort(typeID, " for channel", len(m))
	}
	return nil
}

// AppendDestination encodes a destination command.
func AppendDestination(b []byte, clientID, correlationID, registrationID int64, channel string) []byte {
	return AppendString(AppendInt64(AppendCorrelated(b, clientID, correlationID), registrationID), channel)
}

// DestinationByIDMessage is REMOVE_DESTINATION_BY_ID
// (DestinationByIdMessageFlyweight).
type DestinationByIDMessage []byte

const (
	destinationByIDResourceOffset    = 16
	destinationByIDDestinationOffset = 24
	destinationByIDLength            = 32
)

// ResourceRegistrationID is the publication's registration id.
func (m DestinationByIDMessage) ResourceRegistrationID() int64 {
	return shm.GetInt64(m, destinationByIDResourceOffset)
}

// DestinationRegistrationID is the destination's registration id.
func (m DestinationByIDMessage) DestinationRegistrationID() int64 {
	return shm.GetInt64(m, destinationByIDDestinationOffset)
}

// Validate checks the length.
func (m DestinationByIDMessage) Validate(typeID int32) error {
	if len(m) < destinationByIDLength {
		return tooShort(typeID, "", len(m))
	}
	return nil
}

// CounterMessage is ADD_COUNTER (CounterMessageFlyweight).
type CounterMessage []byte

const (
	counterTypeIDOffset    = 16
	counterKeyLengthOffset = 20
	counterMinLength       = 24
)

// TypeID is the counter's type id.
func (m CounterMessage) TypeID() int32 { return shm.GetInt32(m, counterTypeIDOffset) }

// Key is the key bytes (a view).
func (m CounterMessage) Key() []byte { return counterKey(m, counterKeyLengthOffset) }

// Label is the label's bytes (a view).
func (m CounterMessage) Label() []byte { return counterLabel(m, counterKeyLengthOffset) }

// Validate checks the length and the key's and label's.
func (m CounterMessage) Validate(typeID int32) error {
	return validateCounter(m, typeID, counterMinLength, counterKeyLengthOffset)
}

// AppendCounterMessage encodes ADD_COUNTER.
func AppendCounterMessage(b []byte, clientID, correlationID int64, typeID int32, key []byte, label string) []byte {
	b = AppendInt32(AppendCorrelated(b, clientID, correlationID), typeID)
	return appendKeyAndLabel(b, key, label)
}

// StaticCounterMessage is ADD_STATIC_COUNTER (StaticCounterMessageFlyweight).
type StaticCounterMessage []byte

const (
	staticCounterRegistrationOffset = 16
	staticCounterTypeIDOffset       = 24
	staticCounterKeyLengthOffset    = 28
	staticCounterMinLength          = 32
)

// RegistrationID is the counter's caller-chosen registration id.
func (m StaticCounterMessage) RegistrationID() int64 {
	return shm.GetInt64(m, staticCounterRegistrationOffset)
}

// TypeID is the counter's type id.
func (m StaticCounterMessage) TypeID() int32 { return shm.GetInt32(m, staticCounterTypeIDOffset) }

// Key is the key bytes (a view).
func (m StaticCounterMessage) Key() []byte { return counterKey(m, staticCounterKeyLengthOffset) }

// Label is the label's bytes (a view).
func (m StaticCounterMessage) Label() []byte { return counterLabel(m, staticCounterKeyLengthOffset) }

// Validate checks the length and the key's and label's.
func (m StaticCounterMessage) Validate(typeID int32) error {
	return validateCounter(m, typeID, staticCounterMinLength, staticCounterKeyLengthOffset)
}

// AppendStaticCounterMessage encodes ADD_STATIC_COUNTER.
func AppendStaticCounterMessage(b []byte, clientID, correlationID, registrationID int64, typeID int32, key []byte, label string) []byte {
	b = AppendInt32(AppendInt64(AppendCorrelated(b, clientID, correlationID), registrationID), typeID)
	return appendKeyAndLabel(b, key, label)
}

func appendKeyAndLabel(b []byte, key []byte, label string) []byte {
	b = AppendInt32(b, int32(len(key)))
	start := len(b)
	b = pad4(append(b, key...), start)
	return AppendString(b, label)
}

// labelLengthOffset is where the label's length sits: after the key,
// padded to 4. −1 when the key length is bad.
func labelLengthOffset(m []byte, keyLengthOffset int) int {
	k := int(shm.GetInt32(m, keyLengthOffset))
	if k < 0 || k > len(m) {
		return -1
	}
	return keyLengthOffset + 4 + shm.Align(k, 4)
}

func counterKey(m []byte, keyLengthOffset int) []byte {
	k := int(shm.GetInt32(m, keyLengthOffset))
	return m[keyLengthOffset+4 : keyLengthOffset+4+k]
}

func counterLabel(m []byte, keyLengthOffset int) []byte {
	s, _, _ := ascii(m, labelLengthOffset(m, keyLengthOffset))
	return s
}

func validateCounter(m []byte, typeID int32, minLength, keyLengthOffset int) error {
	if len(m) < minLength {
		return tooShort(typeID, "", len(m))
	}
	l := labelLengthOffset(m, keyLengthOffset)
	if l < 0 || len(m)-l < 4 {
		return tooShort(typeID, " for key", len(m))
	}
	if _, _, ok := ascii(m, l); !ok {
		return tooShort(typeID, " for label", len(m))
	}
	return nil
}

// TerminateDriverMessage is TERMINATE_DRIVER (TerminateDriverFlyweight).
type TerminateDriverMessage []byte

const (
	terminateTokenOffset = 16
	terminateMinLength   = 20
)

// Token is the token bytes (a view).
func (m TerminateDriverMessage) Token() []byte {
	s, _, _ := ascii(m, terminateTokenOffset)
	return s
}

// Validate checks the length and the token's.
func (m TerminateDriverMessage) Validate(typeID int32) error {
	if len(m) < terminateMinLength {
		return tooShort(typeID, "", len(m))
	}
	if _, _, ok := ascii(m, terminateTokenOffset); !ok {
		return tooShort(typeID, " for token buffer", len(m))
	}
	return nil
}

// AppendTerminateDriver encodes TERMINATE_DRIVER (correlation id −1).
func AppendTerminateDriver(b []byte, clientID int64, token []byte) []byte {
	return AppendBytes(AppendCorrelated(b, clientID, -1), token)
}

// RejectImageMessage is REJECT_IMAGE (RejectImageFlyweight).
type RejectImageMessage []byte

const (
	rejectImageCorrelationOffset = 16
	rejectPositionOffset         = 24
	rejectReasonOffset           = 32
	rejectMinLength              = 36
)

// ImageCorrelationID is the image's correlation id.
func (m RejectImageMessage) ImageCorrelationID() int64 {
	return shm.GetInt64(m, rejectImageCorrelationOffset)
}

// Position is the position the image was rejected at.
func (m RejectImageMessage) Position() int64 { return shm.GetInt64(m, rejectPositionOffset) }

// Reason is the reason's bytes (a view).
func (m RejectImageMessage) Reason() []byte {
	s, _, _ := ascii(m, rejectReasonOffset)
	return s
}

// Validate checks the length and the reason's.
func (m RejectImageMessage) Validate(typeID int32) error {
	if len(m) < rejectMinLength {
		return tooShort(typeID, "", len(m))
	}
	if _, _, ok := ascii(m, rejectReasonOffset); !ok {
		return tooShort(typeID, "", len(m))
	}
	return nil
}

// AppendRejectImage encodes REJECT_IMAGE.
func AppendRejectImage(b []byte, clientID, correlationID, imageCorrelationID, position int64, reason string) []byte {
	b = AppendInt64(AppendInt64(AppendCorrelated(b, clientID, correlationID), imageCorrelationID), position)
	return AppendString(b, reason)
}

// GetNextSessionIDMessage is GET_NEXT_AVAILABLE_SESSION_ID
// (GetNextAvailableSessionIdMessageFlyweight).
type GetNextSessionIDMessage []byte

const (
	nextSessionStreamIDOffset = 16
	nextSessionLength         = 20
)

// StreamID is the stream id.
func (m GetNextSessionIDMessage) StreamID() int32 { return shm.GetInt32(m, nextSessionStreamIDOffset) }

// Validate checks the length.
func (m GetNextSessionIDMessage) Validate(typeID int32) error {
	if len(m) < nextSessionLength {
		return tooShort(typeID, "", len(m))
	}
	return nil
}

// AppendGetNextSessionID encodes GET_NEXT_AVAILABLE_SESSION_ID.
func AppendGetNextSessionID(b []byte, clientID, correlationID int64, streamID int32) []byte {
	return AppendInt32(AppendCorrelated(b, clientID, correlationID), streamID)
}
