package server

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestHealthAndReadiness: /healthz answers 200 while the loop cycles and
// 503 once it has stalled; /readyz answers 503 before the loop has run
// and during a shutdown, 200 in between.
func TestHealthAndReadiness(t *testing.T) {
	s, _ := newTestServer(t)
	get := func(h http.Handler) (int, string) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
		return rec.Code, strings.TrimSpace(rec.Body.String())
	}
	check := func(when string, h http.Handler, code int, body string) {
		t.Helper()
		if c, b := get(h); c != code || !strings.Contains(b, body) {
			t.Errorf("%s: %d %q, want %d %q", when, c, b, code, body)
		}
	}
	check("healthz before Run", s.HealthHandler(), 200, "starting")
	check("readyz before Run", s.ReadyHandler(), 503, "starting")
	s.lastPublish.Store(time.Now().Add(-time.Hour).UnixNano())
	check("healthz with the loop stalled", s.HealthHandler(), 503, "has not completed a cycle")
	check("readyz with the loop stalled", s.ReadyHandler(), 503, "has not completed a cycle")

	errc := make(chan error, 1)
	go func() { errc <- s.Run() }()
	deadline := time.Now().Add(30 * time.Second)
	for c, _ := get(s.ReadyHandler()); c != 200; c, _ = get(s.ReadyHandler()) {
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting for /readyz to answer 200 once the loop runs")
		}
		time.Sleep(10 * time.Millisecond)
	}
	check("healthz while running", s.HealthHandler(), 200, "ok")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	check("readyz after Shutdown", s.ReadyHandler(), 503, "shutting down")
	check("healthz after Shutdown", s.HealthHandler(), 200, "shutting down")
}
