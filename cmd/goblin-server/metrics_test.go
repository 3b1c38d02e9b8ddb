package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/client"
	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/transport"
)

// TestMetricsEveryTransport starts goblin-server with all four local
// listeners (Unix socket, TCP, the shared-memory ring, Aeron IPC with its
// in-process Go driver), drives each with a real client (requests, an
// error, a client that goes), scrapes /metrics and checks that every
// listener exports every family, with the values it must have: one
// vocabulary whatever the transport.
func TestMetricsEveryTransport(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ring := "ring://" + filepath.Join(dir, "ring") + "?proto=sbe"
	ipc := "aeron:ipc?proto=sbe|dir=" + filepath.Join(dir, "aeron")
	s := startServer(t, "--listen", ring, "--listen", ipc)
	const sets = 100
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	type listener struct{ transport, protocol, target string }
	listeners := []listener{
		{"uds", "resp", "uds://" + s.sock},
		{"tcp", "resp", "tcp://" + s.tcp},
		{"ring", "sbe", ring},
		{"aeron-ipc", "sbe", ipc},
	}
	for _, l := range listeners {
		c, err := client.Dial(ctx, l.target)
		if err != nil {
			t.Fatalf("%s: %v", l.target, err)
		}
		for i := range sets {
			if err := c.Set(ctx, fmt.Sprint(l.transport, i), []byte("value"), client.SetOptions{}); err != nil {
				t.Fatalf("%s SET: %v", l.transport, err)
			}
		}
		if _, err := c.Do(ctx, "INCR", l.transport+"0"); err == nil {
			t.Fatalf("%s: INCR of a string did not fail", l.transport)
		}
		c.Close() // a client that goes: disconnects_total{reason="client_gone"}
	}

	labels := func(l listener, extra string) string {
		return `{` + extra + `protocol="` + l.protocol + `",transport="` + l.transport + `"}`
	}
	disconnects := func(l listener, reason string) string {
		return `goblin_disconnects_total{protocol="` + l.protocol + `",reason="` + reason + `",transport="` + l.transport + `"}`
	}
	testkit.Eventually(t, 60*time.Second, "every listener's requests and departed client in /metrics", func() (bool, string) {
		m, err := scrapeMap(s)
		if err != nil {
			return false, ""
		}
		for _, l := range listeners {
			if m[`goblin_requests_total`+labels(l, `command="set",`)] != sets ||
				m[disconnects(l, "client_gone")] < 1 {
				return false, ""
			}
		}
		return true, ""
	})
	m := scrapeAll(t, s)
	for _, l := range listeners {
		want := map[string]func(float64) bool{
			`goblin_connected_clients` + labels(l, ""):             func(v float64) bool { return v == 0 },
			`goblin_accepted_clients_total` + labels(l, ""):        func(v float64) bool { return v >= 1 },
			`goblin_rejected_clients_total` + labels(l, ""):        func(v float64) bool { return v == 0 },
			`goblin_received_bytes_total` + labels(l, ""):          func(v float64) bool { return v >= float64(sets*len("SETuds0value")) },
			`goblin_sent_bytes_total` + labels(l, ""):              func(v float64) bool { return v >= sets },
			`goblin_client_buffer_bytes` + labels(l, ""):           func(v float64) bool { return v == 0 },
			`goblin_errors_total` + labels(l, ""):                  func(v float64) bool { return v == 1 },
			`goblin_requests_total` + labels(l, `command="incr",`): func(v float64) bool { return v == 1 },
			`goblin_requests_total` + labels(l, `command="set",`):  func(v float64) bool { return v == sets },
			`goblin_protocol_errors_total` + labels(l, ""):         func(v float64) bool { return v == 0 },
		}
		for r := range transport.NumDisconnectReasons {
			reason := transport.DisconnectReason(r).String()
			key := disconnects(l, reason)
			if reason == "client_gone" {
				want[key] = func(v float64) bool { return v == 1 }
			} else {
				want[key] = func(v float64) bool { return v == 0 }
			}
		}
		for series, ok := range want {
			v, found := m[series]
			if !found {
				t.Errorf("%s: no series %s", l.transport, series)
			} else if !ok(v) {
				t.Errorf("%s = %v", series, v)
			}
		}
	}
	var info []string
	for k, v := range m {
		if strings.HasPrefix(k, "goblin_build_info{") && v == 1 && strings.Contains(k, `goversion="go`) {
			info = append(info, k)
		}
	}
	if len(info) != 1 {
		t.Errorf("goblin_build_info: %v", info)
	}
	// One SET in command.LatencySampling is timed: 4 × 100 SETs give 6.
	if n := m[`goblin_command_duration_seconds_count{command="set"}`]; n < 4 {
		t.Errorf("goblin_command_duration_seconds_count{command=\"set\"} = %v", n)
	}
	if n := m[`goblin_command_duration_seconds_bucket{command="set",le="+Inf"}`]; n != m[`goblin_command_duration_seconds_count{command="set"}`] {
		t.Errorf("the +Inf bucket (%v) is not the count", n)
	}
}
