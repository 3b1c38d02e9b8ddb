package counters

import (
	"errors"
	"strings"
	"testing"
)

func TestManagerAllocatesAndReaderReads(t *testing.T) {
	m := NewManager(make([]byte, 4*MetadataLength), make([]byte, 4*ValueLength), 1000)
	sys, err := m.Allocate(TypeSystem, []byte{0, 0, 0, 0}, []byte("Bytes sent"), 0)
	if err != nil || sys != 0 {
		t.Fatalf("first id %d, %v", sys, err)
	}
	hb, _ := m.Allocate(TypeClientHeartbeat, []byte{99}, []byte("client-heartbeat: id=99"), 0)
	m.SetRegistrationID(hb, 99)
	m.SetOwnerID(hb, 99)
	m.SetValue(hb, 5)
	m.AppendLabel(hb, []byte(" name=x"))
	var labels []string
	m.ForEach(func(c Info) bool { labels = append(labels, c.Label); return true })
	if len(labels) != 2 || labels[1] != "client-heartbeat: id=99 name=x" {
		t.Fatalf("%q", labels)
	}
	r := NewReader(m.meta, m.values)
	if id := r.FindByTypeAndRegistrationID(TypeClientHeartbeat, 99); id != hb || r.Value(id) != 5 || r.OwnerID(id) != 99 {
		t.Fatalf("find heartbeat: %d", id)
	}
	if r.Key(hb)[0] != 99 {
		t.Fatal("key not stored")
	}
	// A freed counter reads as reclaimed at once and keeps its id out of
	// use until the free-to-reuse deadline.
	if err := m.Free(hb, 10); err != nil {
		t.Fatal(err)
	}
	if r.State(hb) != StateReclaimed || r.FindByTypeAndRegistrationID(TypeClientHeartbeat, 99) != -1 || r.Key(hb)[0] != 0 {
		t.Fatal("freed counter still found")
	}
	if err := m.Free(hb, 10); err == nil {
		t.Fatal("double free accepted")
	}
	next, _ := m.Allocate(TypePublisherLimit, nil, []byte("pub-lmt"), 500)
	if next == hb {
		t.Fatal("reused an id before its free-to-reuse deadline")
	}
	reused, _ := m.Allocate(TypePublisherLimit, nil, []byte("pub-lmt"), 1010)
	if reused != hb || r.Value(reused) != 0 || r.RegistrationID(reused) != 0 || r.OwnerID(reused) != 0 {
		t.Fatalf("reuse: id %d value %d", reused, r.Value(reused))
	}
	if id, err := m.Allocate(TypePublisherLimit, nil, []byte("last"), 2000); err != nil || id != 3 {
		t.Fatalf("last id %d: %v", id, err)
	}
	if _, err := m.Allocate(TypePublisherLimit, nil, []byte("one too many"), 2000); !errors.Is(err, ErrFull) {
		t.Fatalf("full: %v", err)
	}
}

func TestManagerTruncatesKeyAndLabel(t *testing.T) {
	m := NewManager(make([]byte, MetadataLength), make([]byte, ValueLength), 0)
	id, err := m.Allocate(1, make([]byte, 200), []byte(strings.Repeat("x", 500)), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Label(id)) != MaxLabelLength || len(m.Key(id)) != MaxKeyLength {
		t.Fatalf("label %d", len(m.Label(id)))
	}
	m.AppendLabel(id, []byte("more"))
	if len(m.Label(id)) != MaxLabelLength {
		t.Fatal("append ran past the label's room")
	}
}
