package driver

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestEventLogParse: AERON_EVENT_LOG and _DISABLE pick events as the C
// agent does, and an unknown name stops the driver naming the variable.
func TestEventLogParse(t *testing.T) {
	on := func(events, disable string) map[string]bool {
		t.Helper()
		en, _, err := parseEventLog(events, disable)
		if err != nil {
			t.Fatalf("%q/%q: %v", events, disable, err)
		}
		m := map[string]bool{}
		for id, e := range en {
			if e {
				m[agentEventNames[id]] = true
			}
		}
		return m
	}
	admin := on("admin", "")
	if !admin["CMD_IN_ADD_PUBLICATION"] || !admin["NAK_SENT"] || !admin["CMD_OUT_ERROR"] || admin["FRAME_IN"] || admin["FRAME_OUT"] {
		t.Errorf("admin enables %v", admin)
	}
	if all := on("all", ""); !all["FRAME_IN"] || !all["DYNAMIC_DISSECTOR_EVENT"] {
		t.Errorf("all enables %v", all)
	}
	if m := on("admin", "CMD_IN_KEEPALIVE_CLIENT,SEND_NAK_MESSAGE"); m["CMD_IN_KEEPALIVE_CLIENT"] || m["NAK_SENT"] || !m["RESEND"] {
		t.Errorf("admin less keepalive and NAKs enables %v", m)
	}
	if m := on("admin", ""); len(m) != len(admin) {
		t.Errorf("an empty AERON_EVENT_LOG_DISABLE changed admin: %v", m)
	}
	if m := on("0x1", ""); !m["CMD_IN_ADD_SUBSCRIPTION"] || m["CMD_OUT_ERROR"] || m["FRAME_IN"] {
		t.Errorf("mask 0x1 enables %v", m)
	}
	if m := on("3,FRAME_OUT", ""); len(m) != 2 || !m["CMD_IN_ADD_PUBLICATION"] || !m["FRAME_OUT"] {
		t.Errorf("3,FRAME_OUT enables %v", m)
	}
	if _, anyOn, err := parseEventLog("", ""); err != nil || anyOn {
		t.Errorf("no AERON_EVENT_LOG: %v %v", anyOn, err)
	}
	_, err := (Properties{"AERON_EVENT_LOG": "admin,NOPE"}).Options()
	if !errors.Is(err, ErrBadProperty) || !strings.Contains(err.Error(), "AERON_EVENT_LOG") || !strings.Contains(err.Error(), "NOPE") {
		t.Fatalf("properties with an unknown event: %v", err)
	}
	o := testOptions(t)
	o.EventLog = "admin,NOPE"
	if _, err := New(o); !errors.Is(err, ErrInvalidOptions) || !strings.Contains(err.Error(), "AERON_EVENT_LOG: unknown event code: 'NOPE'") {
		t.Errorf("driver with an unknown event: %v", err)
	}
}

// TestEventLogWritesCommands: the enabled command and response events are
// written in the C agent's form with their fields; others are not.
func TestEventLogWritesCommands(t *testing.T) {
	var out bytes.Buffer
	o := testOptions(t)
	o.EventLog, o.EventLogDisable, o.EventLogOutput = "admin", "CMD_OUT_PUBLICATION_READY", &out
	m := newManualDriver(t, o)
	c := newRawClient(m)
	corr := c.addPublication("aeron:ipc?term-length=64k", 1001, false)
	c.take()
	bad := c.addSubscription("aeron:nonsense", 7)
	c.take()
	log := out.String()
	lines := strings.Split(strings.TrimSpace(log), "\n")
	if !strings.Contains(lines[0], "log started") || !strings.Contains(lines[0], "{DRIVER: version=") {
		t.Errorf("first line %q", lines[0])
	}
	for _, want := range []string{
		"] DRIVER: CMD_IN_ADD_PUBLICATION [",
		fmt.Sprintf(": streamId=1001 clientId=%d correlationId=%d channel=aeron:ipc?term-length=64k", c.id, corr),
		"] DRIVER: CMD_IN_ADD_SUBSCRIPTION [",
		"] DRIVER: CMD_OUT_ERROR [",
		fmt.Sprintf(": offendingCorrelationId=%d errorCode=", bad),
	} {
		if !strings.Contains(log, want) {
			t.Errorf("event log lacks %q:\n%s", want, log)
		}
	}
	if strings.Contains(log, "CMD_OUT_PUBLICATION_READY") {
		t.Errorf("a disabled event was written:\n%s", log)
	}
}

// TestNameResolverTiming: resolutions update the max-time counter, count
// against AERON_DRIVER_NAME_RESOLVER_THRESHOLD, whose value the label shows.
func TestNameResolverTiming(t *testing.T) {
	o := testOptions(t)
	o.NameResolverThreshold = time.Nanosecond
	m := newManualDriver(t, o)
	if got, want := m.counters.Label(sysNameResolverThresholdExceeded), "NameResolver exceeded threshold count: threshold=1ns"; got != want {
		t.Errorf("label %q, want %q", got, want)
	}
	if _, err := m.conductor.resolveHostPort("endpoint", "localhost:40123"); err != nil {
		t.Fatal(err)
	}
	if m.counters.Value(sysNameResolverMaxTime) <= 0 || m.counters.Value(sysNameResolverThresholdExceeded) != 1 {
		t.Errorf("after one resolution: max time %d, exceeded %d", m.counters.Value(sysNameResolverMaxTime),
			m.counters.Value(sysNameResolverThresholdExceeded))
	}
	p, err := (Properties{"AERON_DRIVER_NAME_RESOLVER_THRESHOLD": "250ms", "AERON_DRIVER_RESOLVER_NEIGHBOR_TIMEOUT": "3s"}).Options()
	if err != nil || p.NameResolverThreshold != 250*time.Millisecond || p.ResolverNeighborTimeout != 3*time.Second {
		t.Errorf("properties: %v %v %v", p.NameResolverThreshold, p.ResolverNeighborTimeout, err)
	}
}
