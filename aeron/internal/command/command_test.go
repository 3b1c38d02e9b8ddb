package command

import (
	"bytes"
	"errors"
	"testing"
)

func TestCommandsRoundTrip(t *testing.T) {
	b := AppendPublicationMessage(nil, 7, 8, 1001, "aeron:ipc")
	if len(b) != 24+len("aeron:ipc") {
		t.Fatalf("publication message of %d bytes", len(b))
	}
	p := PublicationMessage(b)
	if err := p.Validate(AddPublication); err != nil || Correlated(b).ClientID() != 7 ||
		Correlated(b).CorrelationID() != 8 || p.StreamID() != 1001 || string(p.Channel()) != "aeron:ipc" {
		t.Fatalf("%v %x", err, b)
	}
	s := SubscriptionMessage(AppendSubscriptionMessage(nil, 1, 2, 3, "aeron:udp?endpoint=x:1"))
	if s.Validate(AddSubscription) != nil || s.StreamID() != 3 || string(s.Channel()) != "aeron:udp?endpoint=x:1" {
		t.Fatal("subscription message")
	}
	c := CounterMessage(AppendCounterMessage(nil, 1, 2, 1001, []byte{1, 2, 3, 4, 5}, "label"))
	if c.Validate(AddCounter) != nil || c.TypeID() != 1001 || !bytes.Equal(c.Key(), []byte{1, 2, 3, 4, 5}) ||
		string(c.Label()) != "label" || len(c) != 24+8+4+5 {
		t.Fatalf("counter message %x", []byte(c))
	}
	sc := StaticCounterMessage(AppendStaticCounterMessage(nil, 1, 2, 99, 12, nil, "static"))
	if sc.Validate(AddStaticCounter) != nil || sc.RegistrationID() != 99 || sc.TypeID() != 12 || len(sc.Key()) != 0 ||
		string(sc.Label()) != "static" {
		t.Fatal("static counter message")
	}
	rp := RemovePublicationMessage(AppendRemovePublication(nil, 1, 2, 42, true))
	if rp.RegistrationID() != 42 || !rp.Revoke() || RemovePublicationMessage(rp[:24]).Revoke() {
		t.Fatal("remove publication flags")
	}
	ri := RejectImageMessage(AppendRejectImage(nil, 1, 2, 3, 4096, "bad"))
	if ri.Validate(RejectImage) != nil || ri.ImageCorrelationID() != 3 || ri.Position() != 4096 || string(ri.Reason()) != "bad" {
		t.Fatal("reject image")
	}
	td := TerminateDriverMessage(AppendTerminateDriver(nil, 1, []byte("tok")))
	if td.Validate(TerminateDriver) != nil || Correlated(td).CorrelationID() != -1 || string(td.Token()) != "tok" {
		t.Fatal("terminate driver")
	}
}

func TestResponsesRoundTrip(t *testing.T) {
	r := PublicationBuffersReady(AppendPublicationBuffersReady(nil, 5, 4, -3, 1001, 7, -1, "/dev/shm/a/publications/4.logbuffer"))
	if r.CorrelationID() != 5 || r.RegistrationID() != 4 || r.SessionID() != -3 || r.StreamID() != 1001 ||
		r.PublicationLimitCounterID() != 7 || r.ChannelStatusIndicatorID() != -1 || r.LogFileName() != "/dev/shm/a/publications/4.logbuffer" {
		t.Fatalf("%x", []byte(r))
	}
	// The source identity starts at the next multiple of 4 after the log
	// file name (a 5-byte name pads by 3).
	i := ImageBuffersReady(AppendImageBuffersReady(nil, 9, 1, 2, 3, 4, "/x/y1", "aeron:ipc"))
	if i.CorrelationID() != 9 || i.SessionID() != 1 || i.StreamID() != 2 || i.SubscriptionRegistrationID() != 3 ||
		i.SubscriberPositionID() != 4 || i.LogFileName() != "/x/y1" || i.SourceIdentity() != "aeron:ipc" || len(i) != 32+8+4+9 {
		t.Fatalf("%x", []byte(i))
	}
	e := ErrorResponse(AppendErrorResponse(nil, 12, 3, "unknown publication"))
	if e.OffendingCorrelationID() != 12 || e.Code() != 3 || e.Message() != "unknown publication" {
		t.Fatal("error response")
	}
	u := ImageMessage(AppendImageMessage(nil, 1, 2, 3, "aeron:ipc"))
	if u.CorrelationID() != 1 || u.SubscriptionRegistrationID() != 2 || u.StreamID() != 3 || u.Channel() != "aeron:ipc" {
		t.Fatal("image message")
	}
	cu := CounterUpdate(AppendCounterUpdate(nil, 77, 5))
	if len(cu) != CounterUpdateLength || cu.CorrelationID() != 77 || cu.Value() != 5 {
		t.Fatal("counter update")
	}
	pe := PublicationErrorFrame(AppendPublicationErrorFrame(nil, 8, -1, 1, 2, -1, -1, []byte{127, 0, 0, 1}, 0, 13, "rejected"))
	if len(pe) != PublicationErrorMinLength+8 || pe.RegistrationID() != 8 || pe.Code() != 13 || pe.Message() != "rejected" {
		t.Fatalf("%x", []byte(pe))
	}
}

func TestValidateRefusesTruncatedCommands(t *testing.T) {
	full := AppendPublicationMessage(nil, 1, 2, 3, "aeron:ipc")
	for _, n := range []int{0, 16, 23, len(full) - 1} {
		if err := PublicationMessage(full[:n]).Validate(AddPublication); !errors.Is(err, ErrMalformed) {
			t.Errorf("%d of %d bytes: %v", n, len(full), err)
		}
	}
	neg := AppendInt32(AppendCorrelated(nil, 1, 2), 3)
	neg = AppendInt32(neg, -5)
	if PublicationMessage(neg).Validate(AddPublication) == nil {
		t.Error("negative channel length accepted")
	}
	c := AppendCounterMessage(nil, 1, 2, 3, []byte{1, 2}, "label")
	for _, n := range []int{20, 27, len(c) - 1} {
		if err := CounterMessage(c[:n]).Validate(AddCounter); !errors.Is(err, ErrMalformed) {
			t.Errorf("counter of %d bytes: %v", n, err)
		}
	}
	if err := Correlated(make([]byte, 15)).Validate(ClientKeepalive); err == nil || err.Error() != "command=6 too short: length=15" {
		t.Errorf("message %v", err)
	}
}
