package transport_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/goblin-kv/goblin/transport"
)

// This program links neither transport/ring nor transport/aeron, so their
// schemes have no dialer, and the error says which import adds one.
func ExampleLookupDialer() {
	_, err := transport.LookupDialer(transport.Aeron)
	fmt.Println(err)
	fmt.Println(errors.Is(err, transport.ErrNoDialer))
	// Output:
	// transport: no dialer for scheme "aeron" in this program: add import _ "github.com/goblin-kv/goblin/transport/aeron"
	// true
}

func TestRegisterDialer(t *testing.T) {
	const s = transport.Scheme("test-register")
	if _, err := transport.LookupDialer(s); !errors.Is(err, transport.ErrNoDialer) {
		t.Fatalf("LookupDialer of an unregistered scheme = %v, want ErrNoDialer", err)
	}
	if _, err := transport.LookupDialer(transport.Ring); err == nil || !errors.Is(err, transport.ErrNoDialer) {
		t.Fatalf("LookupDialer(ring) in a program without transport/ring = %v, want ErrNoDialer", err)
	}
	errDial := errors.New("dialed")
	transport.RegisterDialer(s, transport.Dialer{Message: true, Dial: func(context.Context, transport.Target) (transport.Conn, error) {
		return nil, errDial
	}})
	d, err := transport.LookupDialer(s)
	if err != nil || !d.Message {
		t.Fatalf("LookupDialer after RegisterDialer = %+v, %v", d, err)
	}
	if _, err := d.Dial(context.Background(), transport.Target{Scheme: s}); err != errDial {
		t.Fatalf("the registered Dial was not the one returned: %v", err)
	}
	for name, d := range map[string]transport.Dialer{
		"twice":    d,
		"nil Dial": {},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("RegisterDialer %s did not panic", name)
				}
			}()
			transport.RegisterDialer(s, d)
		}()
	}
}
