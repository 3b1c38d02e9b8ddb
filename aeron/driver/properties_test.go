package driver

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/aeron"
	"golang.org/x/sys/unix"
)

func TestPropertiesLayers(t *testing.T) {
	p := PropertiesFromEnv([]string{"AERON_DIR=/from/env", "AERON_CLIENT_LIVENESS_TIMEOUT=5s", "HOME=/x"})
	if _, ok := p["HOME"]; ok {
		t.Fatal("non-Aeron variable taken")
	}
	for _, def := range []string{"aeron.dir=/from/define", "aeron.timer.interval : 500ms", "AERON_CLIENT_LIVENESS_TIMEOUT="} {
		if err := p.Define(def); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Define("=x"); !errors.Is(err, ErrBadProperty) {
		t.Fatalf("malformed define: %v", err)
	}
	o, err := p.Options()
	if err != nil {
		t.Fatal(err)
	}
	if o.Dir != "/from/define" || o.TimerInterval != 500*time.Millisecond || o.ClientLivenessTimeout != 0 {
		t.Fatalf("options %+v", o)
	}
	p.Set("aeron.ipc.term.buffer.length", "2m")
	p.Set("aeron.term.buffer.sparse.file", "false")
	p.Set("aeron.shared.idle.strategy", "spin")
	p.Set("aeron.driver.termination.validator", "allow")
	p.Set("aeron.driver.timeout", "2500")
	if o, err = p.Options(); err != nil {
		t.Fatal(err)
	}
	if o.IPCTermLength != 2<<20 || !o.DenseLogs || o.Idle != (aeron.SpinIdle{}) || o.TerminationValidator == nil ||
		o.DriverTimeout != 2500*time.Millisecond {
		t.Fatalf("options %+v", o)
	}
	p.Set("aeron.client.liveness.timeout", "ten seconds")
	if _, err := p.Options(); !errors.Is(err, ErrBadProperty) {
		t.Fatalf("bad duration: %v", err)
	}
}

func TestParseSizeAndDuration(t *testing.T) {
	for v, want := range map[string]int64{"64k": 64 << 10, "16M": 16 << 20, "1g": 1 << 30, "4096": 4096} {
		if n, err := parseSize("x", v); err != nil || n != want {
			t.Errorf("parseSize(%q) = %d, %v", v, n, err)
		}
	}
	for v, want := range map[string]time.Duration{"5s": 5 * time.Second, "7ms": 7 * time.Millisecond, "3us": 3 * time.Microsecond,
		"100ns": 100, "250": 250} {
		if n, err := parseDuration("x", v); err != nil || time.Duration(n) != want {
			t.Errorf("parseDuration(%q) = %d, %v", v, n, err)
		}
	}
	for _, v := range []string{"", "k", "-1", "10x"} {
		if _, err := parseSize("x", v); err == nil {
			t.Errorf("parseSize(%q) accepted", v)
		}
	}
	if _, err := parseDuration("x", "5 minutes"); err == nil {
		t.Error("bad duration accepted")
	}
	if formatDuration(100*time.Millisecond) != "100ms" || formatDuration(5*time.Second) != "5s" || formatDuration(1500*time.Nanosecond) != "1500ns" {
		t.Error("formatDuration")
	}
}

// TestImageLimitProperties: the limits on what senders can make the
// receiver allocate come from AERON_* variables as the other options do,
// default to documented values, and bad values are refused by name.
func TestImageLimitProperties(t *testing.T) {
	var o Options
	o.EnsureDefaults()
	if o.MaxImageTermLength != 64<<20 || o.MaxImagesLength != 1<<30 || o.StreamSessionLimit != 1024 {
		t.Fatalf("defaults: image term %d, images %d, sessions %d; want 64 MiB, 1 GiB, 1024",
			o.MaxImageTermLength, o.MaxImagesLength, o.StreamSessionLimit)
	}
	p := PropertiesFromEnv([]string{"AERON_IMAGE_TERM_BUFFER_MAX_LENGTH=1m", "AERON_IMAGE_BUFFERS_MAX_LENGTH=4g",
		"AERON_DRIVER_STREAM_SESSION_LIMIT=16"})
	o, err := p.Options()
	if err != nil {
		t.Fatal(err)
	}
	if o.MaxImageTermLength != 1<<20 || o.MaxImagesLength != 4<<30 || o.StreamSessionLimit != 16 {
		t.Fatalf("from the environment: image term %d, images %d, sessions %d", o.MaxImageTermLength,
			o.MaxImagesLength, o.StreamSessionLimit)
	}
	keep := Options{Dir: "/kept", TermLength: 1 << 20}
	p.Set("aeron.dir", "/not/taken")
	if err := p.ApplyImageLimits(&keep); err != nil {
		t.Fatal(err)
	}
	if keep.Dir != "/kept" || keep.TermLength != 1<<20 || keep.MaxImageTermLength != 1<<20 ||
		keep.MaxImagesLength != 4<<30 || keep.StreamSessionLimit != 16 {
		t.Fatalf("ApplyImageLimits: %+v", keep)
	}
	p.Set("aeron.driver.stream.session.limit", "0")
	if err := p.ApplyImageLimits(&keep); !errors.Is(err, ErrBadProperty) {
		t.Fatalf("ApplyImageLimits with session limit 0: %v, want ErrBadProperty", err)
	}
	if _, err := p.Options(); !errors.Is(err, ErrBadProperty) {
		t.Fatalf("session limit 0: %v, want ErrBadProperty", err)
	}
	o = Options{MaxImageTermLength: 100 << 10}
	o.EnsureDefaults()
	if err := o.Validate(); !errors.Is(err, ErrInvalidOptions) || !strings.Contains(err.Error(), "aeron.image.term.buffer.max.length") {
		t.Fatalf("image term ceiling of 100 KiB: %v, want an error naming aeron.image.term.buffer.max.length", err)
	}
}

// TestEveryCDriverVariableAppliedOrRefused: each environment variable the
// C aeronmd 1.51 reads is either one this driver applies (a property) or
// one it refuses at start with an error naming it, never both and never
// neither; docs/aeron.md lists them with the same status.
func TestEveryCDriverVariableAppliedOrRefused(t *testing.T) {
	applied := map[string]bool{}
	for _, p := range properties {
		applied[EnvName(p.name)] = true
	}
	inList := map[string]bool{}
	for _, name := range CDriverVariables {
		inList[name] = true
		_, refused := refusedVariables[name]
		switch {
		case applied[name] && refused:
			t.Errorf("%s is both applied and refused", name)
		case !applied[name] && !refused:
			t.Errorf("%s is neither applied nor refused", name)
		case refused:
			p := Properties{name: "1"}
			_, err := p.Options()
			if !errors.Is(err, ErrBadProperty) || !strings.Contains(err.Error(), name+": not supported by this driver") {
				t.Errorf("%s=1: %v, want %q", name, err, name+": not supported by this driver")
			}
		}
	}
	for name := range refusedVariables {
		if !inList[name] {
			t.Errorf("refused %s is not a C driver variable", name)
		}
	}
	if len(CDriverVariables) != 122 {
		t.Errorf("%d C driver variables, want the 122 of aeron 1.51.0", len(CDriverVariables))
	}
	doc, err := os.ReadFile("../../docs/aeron.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range CDriverVariables {
		status := "applied"
		if _, ok := refusedVariables[name]; ok {
			status = "refused"
		}
		if !strings.Contains(string(doc), "| `"+name+"` | "+status+" |") {
			t.Errorf("docs/aeron.md has no row \"| `%s` | %s |\"", name, status)
		}
	}
}

// TestCDriverVariablesApplied: the C driver's flow control supplier
// names, flow control group settings, agent cycle thresholds, affinity and
// the one-value variables are applied, and values this driver cannot
// honour are refused by name.
func TestCDriverVariablesApplied(t *testing.T) {
	p := Properties{
		"AERON_MULTICAST_FLOWCONTROL_SUPPLIER":  "aeron_tagged_flow_control_strategy_supplier",
		"AERON_UNICAST_FLOWCONTROL_SUPPLIER":    "multicast_min",
		"AERON_FLOW_CONTROL_GROUP_TAG":          "99",
		"AERON_FLOW_CONTROL_GROUP_MIN_SIZE":     "3",
		"AERON_FLOW_CONTROL_RECEIVER_TIMEOUT":   "2s",
		"AERON_DRIVER_SENDER_CYCLE_THRESHOLD":   "7ms",
		"AERON_DRIVER_RECEIVER_CYCLE_THRESHOLD": "9ms",
		"AERON_CONDUCTOR_CPU_AFFINITY":          "0",
		"AERON_SENDER_CPU_AFFINITY":             "0",
		"AERON_RECEIVER_IDLE_STRATEGY":          "backoff",
		"AERON_DRIVER_ASYNC_EXECUTOR_ENABLED":   "false",
		"AERON_ENABLE_EXPERIMENTAL_FEATURES":    "true",
	}
	o, err := p.Options()
	if err != nil {
		t.Fatal(err)
	}
	if o.MulticastFlowControl != FlowControlTagged || o.UnicastFlowControl != FlowControlMin || o.FlowControlGroupTag == nil ||
		*o.FlowControlGroupTag != 99 || o.FlowControlGroupMinSize != 3 || o.FlowControlReceiverTimeout != 2*time.Second ||
		o.SenderCycleThreshold != 7*time.Millisecond || o.ReceiverCycleThreshold != 9*time.Millisecond ||
		len(o.CPUAffinity) != 1 || o.CPUAffinity[0] != 0 {
		t.Fatalf("options %+v", o)
	}
	for name, v := range map[string]string{
		"AERON_SENDER_CPU_AFFINITY":            "1",
		"AERON_DRIVER_ASYNC_EXECUTOR_ENABLED":  "yes",
		"AERON_MULTICAST_FLOWCONTROL_SUPPLIER": "cubic",
		"AERON_CONGESTIONCONTROL_SUPPLIER":     "aeron_cubic_congestion_control_strategy_supplier",
		"AERON_RECEIVER_IDLE_STRATEGY":         "nonsense",
	} {
		q := Properties{"AERON_CONDUCTOR_CPU_AFFINITY": "0", name: v}
		if _, err := q.Options(); !errors.Is(err, ErrBadProperty) || !strings.Contains(err.Error(), name) {
			t.Errorf("%s=%s: %v", name, v, err)
		}
	}
	// The supplier is what a multicast channel without fc= gets.
	m := newManualDriver(t, Options{})
	m.opts.MulticastFlowControl, m.opts.FlowControlGroupTag, m.opts.FlowControlGroupMinSize = FlowControlTagged, o.FlowControlGroupTag, 3
	u, err := parseURI("aeron:udp?endpoint=224.0.1.1:40456|interface=127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	ch, err := m.parseUDPChannel(u, false)
	if err != nil {
		t.Fatal(err)
	}
	fc, err := m.newFlowControl(ch, 1, 1, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	if mf, ok := fc.(*minFlowControl); !ok || !mf.tagged || mf.groupTag != 99 || mf.groupMinSize != 3 || mf.hasRequiredReceivers() {
		t.Fatalf("multicast flow control without fc= under the tagged supplier: %#v", fc)
	}
}

// TestAgentCycleLabels: the sender's and receiver's duty-cycle counters
// carry their own thresholds, and an INVOKER driver says INVOKER.
func TestAgentCycleLabels(t *testing.T) {
	o := testOptions(t)
	o.ThreadingMode = Invoker
	o.SenderCycleThreshold, o.ReceiverCycleThreshold = 7*time.Millisecond, 9*time.Millisecond
	d := startDriver(t, o)
	for id, want := range map[int32]string{
		sysConductorCycleThresholdExceeded: "Conductor work cycle exceeded threshold count: threshold=100ms INVOKER",
		sysSenderCycleThresholdExceeded:    "Sender work cycle exceeded threshold count: threshold=7ms INVOKER",
		sysReceiverCycleThresholdExceeded:  "Receiver work cycle exceeded threshold count: threshold=9ms INVOKER",
		sysSenderMaxCycleTime:              "Sender max cycle time doing its work in ns: INVOKER",
	} {
		if got := d.counters.Label(id); got != want {
			t.Errorf("counter %d label %q, want %q", id, got, want)
		}
	}
}

// TestCPUAffinityPinsTheDriverThread: AERON_CONDUCTOR_CPU_AFFINITY pins
// the thread Start runs the driver on, and only that thread.
func TestCPUAffinityPinsTheDriverThread(t *testing.T) {
	var allowed unix.CPUSet
	if err := unix.SchedGetaffinity(0, &allowed); err != nil {
		t.Fatal(err)
	}
	cpu := -1
	for c := range 1024 {
		if allowed.IsSet(c) {
			cpu = c
		}
	}
	if allowed.Count() < 2 {
		t.Skipf("one CPU allowed: pinning to it changes nothing to see")
	}
	pinnedThreads := func() int {
		tasks, _ := os.ReadDir("/proc/self/task")
		n := 0
		for _, task := range tasks {
			tid, err := strconv.Atoi(task.Name())
			if err != nil {
				continue
			}
			var set unix.CPUSet
			if unix.SchedGetaffinity(tid, &set) == nil && set.Count() == 1 && set.IsSet(cpu) {
				n++
			}
		}
		return n
	}
	before := pinnedThreads()
	o := testOptions(t)
	o.CPUAffinity = []int{cpu}
	startDriver(t, o)
	if after := pinnedThreads(); after != before+1 {
		t.Fatalf("threads pinned to CPU %d: %d before the driver started, %d after; want one more", cpu, before, after)
	}
}
