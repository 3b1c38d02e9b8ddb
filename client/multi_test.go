package client

import (
	"errors"
	"testing"

	"github.com/goblin-kv/goblin/internal/testkit/testproc"
)

// checkSetIn checks, through admin, that key = val is in database want
// (0 or 1) and not in the other.
func checkSetIn(t *testing.T, admin *Client, key, val string, want int) {
	t.Helper()
	ctx := ctxT(t)
	for _, db := range []int{0, 1} {
		if _, err := admin.Do(ctx, "SELECT", db); err != nil {
			t.Fatal(err)
		}
		v, err := admin.Do(ctx, "GET", key)
		if err != nil && v.Kind != KindNil {
			t.Fatal(err)
		}
		if got := string(v.Str) == val; got != (db == want) {
			t.Errorf("after the redial, %s in database %d = %v; want the SET in database %d only", key, db, v, want)
		}
	}
	if _, err := admin.Do(ctx, "SELECT", 0); err != nil {
		t.Fatal(err)
	}
}

// TestMultiSelectKeptAfterRedial: a SELECT queued inside a MULTI sent
// with Do, or inside a plain Pipeline, takes effect when EXEC runs it, so
// the next redial selects that database again; DISCARD and a failed WATCH
// leave the database as it was.
func TestMultiSelectKeptAfterRedial(t *testing.T) {
	targets := testproc.StartGoblinServer(t)
	ctx := ctxT(t)
	admin := dialT(t, targets["uds/resp"])
	cases := []struct {
		name   string
		wantDB int
		run    func(t *testing.T, c *Client, other *Client)
	}{
		{"Do/EXEC", 1, func(t *testing.T, c, _ *Client) {
			for _, cmd := range [][]any{{"MULTI"}, {"SET", "m:x", "1"}, {"SELECT", "1"}} {
				if _, err := c.Do(ctx, cmd...); err != nil {
					t.Fatalf("%v: %v", cmd, err)
				}
			}
			if v, err := c.Do(ctx, "EXEC"); err != nil || len(v.Array) != 2 {
				t.Fatalf("EXEC = %v, %v", v, err)
			}
		}},
		{"Pipeline/EXEC", 1, func(t *testing.T, c, _ *Client) {
			if _, err := c.Pipeline().Do("MULTI").Do("PING").Do("SELECT", 1).Do("EXEC").Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}},
		{"Do/MULTI,Pipeline/EXEC", 1, func(t *testing.T, c, _ *Client) {
			if _, err := c.Do(ctx, "MULTI"); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Pipeline().Do("SELECT", 1).Do("EXEC").Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}},
		{"Do/DISCARD", 0, func(t *testing.T, c, _ *Client) {
			for _, cmd := range [][]any{{"MULTI"}, {"SELECT", "1"}, {"DISCARD"}} {
				if _, err := c.Do(ctx, cmd...); err != nil {
					t.Fatalf("%v: %v", cmd, err)
				}
			}
		}},
		{"Pipeline/DISCARD", 0, func(t *testing.T, c, _ *Client) {
			if _, err := c.Pipeline().Do("MULTI").Do("SELECT", 1).Do("DISCARD").Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}},
		{"Do/WATCH failed", 0, func(t *testing.T, c, other *Client) {
			for _, cmd := range [][]any{{"WATCH", "m:w"}, {"MULTI"}, {"SELECT", "1"}} {
				if _, err := c.Do(ctx, cmd...); err != nil {
					t.Fatalf("%v: %v", cmd, err)
				}
			}
			if _, err := other.Do(ctx, "SET", "m:w", "changed"); err != nil {
				t.Fatal(err)
			}
			if v, err := c.Do(ctx, "EXEC"); err != nil || v.Kind != KindNil {
				t.Fatalf("EXEC after the watched key changed = %v, %v; want nil", v, err)
			}
		}},
		{"Pipeline/EXECABORT", 0, func(t *testing.T, c, _ *Client) {
			vals, err := c.Pipeline().Do("MULTI").Do("SELECT", 1).Do("NOSUCHCOMMAND").Do("EXEC").Exec(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if vals[3].Kind != KindError {
				t.Fatalf("EXEC after a refused command = %v; want EXECABORT", vals[3])
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := dialT(t, targets["uds/resp"])
			tc.run(t, c, admin)
			if c.DB() != tc.wantDB {
				t.Errorf("DB() = %d; want %d", c.DB(), tc.wantDB)
			}
			key := "m:" + tc.name
			killConn(t, c, admin)
			doAfterKill(t, c, "SET", key, "v")
			checkSetIn(t, admin, key, "v", tc.wantDB)
		})
	}
}

// TestMultiLostOnRedial: when the connection a MULTI was opened on is
// lost, the transaction is gone with it: the next command (here EXEC) is
// ErrMultiLost, not sent, rather than a silent success, and the client
// works normally after it.
func TestMultiLostOnRedial(t *testing.T) {
	targets := testproc.StartGoblinServer(t)
	ctx := ctxT(t)
	admin := dialT(t, targets["uds/resp"])
	for _, how := range []string{"Do", "Pipeline"} {
		t.Run(how, func(t *testing.T) {
			c := dialT(t, targets["uds/resp"])
			id, err := c.Do(ctx, "CLIENT", "ID") // inside MULTI it would only be queued
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Do(ctx, "MULTI"); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Do(ctx, "SELECT", 1); err != nil {
				t.Fatal(err)
			}
			if v, err := admin.Do(ctx, "CLIENT", "KILL", "ID", id.Int); err != nil || v.Int != 1 {
				t.Fatalf("CLIENT KILL ID %d: %v %v", id.Int, v, err)
			}
			// The first command on the killed connection sees it closed.
			var ce *ConnError
			if _, err := c.Do(ctx, "PING"); !errors.As(err, &ce) {
				t.Fatalf("PING on the killed connection: %v; want a *ConnError", err)
			}
			var execErr error
			if how == "Do" {
				_, execErr = c.Do(ctx, "EXEC")
			} else {
				_, execErr = c.Pipeline().Do("EXEC").Exec(ctx)
			}
			if !errors.Is(execErr, ErrMultiLost) {
				t.Fatalf("EXEC after the connection was lost inside MULTI: %v; want ErrMultiLost", execErr)
			}
			if c.DB() != 0 {
				t.Errorf("DB() = %d after a lost transaction; want 0", c.DB())
			}
			if v, err := c.Do(ctx, "PING"); err != nil || string(v.Str) != "PONG" {
				t.Errorf("PING after ErrMultiLost = %v, %v", v, err)
			}
		})
	}
}
