package resp

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// checkHot asserts ReadHot's contract on buf under lim: it answers
// HotNone with nothing consumed, or exactly ReadCommand's arguments and
// length for a command ReadCommand accepts; and PeekHot's: ReadHot's
// answer, with nothing consumed.
func checkHot(t *testing.T, buf []byte, lim *Limits) Hot {
	t.Helper()
	var p Parser
	// PeekHot reads the same, consuming nothing; its key and value are
	// ReadHot's arguments after the name.
	ph, pk, pv, pn := p.PeekHot(buf, lim)
	if p.Examined() != 0 {
		t.Fatalf("PeekHot(%q) examined %d bytes", buf, p.Examined())
	}
	// PeekHotBulk reads the same where lim's HotBulk lets it read at all.
	if bh, bk, bv, bn := p.PeekHotBulk(buf, lim.HotBulk()); bh != HotNone && (bh != ph || bn != pn || !bytes.Equal(bk, pk) || !bytes.Equal(bv, pv)) ||
		bh == HotNone && ph != HotNone && lim.HotBulk() != 0 {
		t.Fatalf("PeekHotBulk(%q, %d) = %v %q %q %d; PeekHot = %v %q %q %d", buf, lim.HotBulk(), bh, bk, bv, bn, ph, pk, pv, pn)
	}
	hot, args, n := p.ReadHot(buf, make([][]byte, 0, 4), lim)
	if ph != hot || pn != n || hot >= HotGet && !bytes.Equal(pk, args[1]) || hot == HotSet && !bytes.Equal(pv, args[2]) {
		t.Fatalf("PeekHot(%q) = %v %q %q %d; ReadHot = %v %q %d", buf, ph, pk, pv, pn, hot, args, n)
	}
	if hot == HotNone {
		if n != 0 || p.Examined() != 0 {
			t.Fatalf("ReadHot(%q) answered none but consumed %d, examined %d", buf, n, p.Examined())
		}
		return hot
	}
	want, wn, err := ReadCommand(buf, nil, lim)
	if err != nil || wn != n || len(want) != len(args) {
		t.Fatalf("ReadHot(%q) = %v %q %d; ReadCommand = %q %d %v", buf, hot, args, n, want, wn, err)
	}
	for i := range want {
		if !bytes.Equal(want[i], args[i]) {
			t.Fatalf("ReadHot(%q) argument %d is %q, ReadCommand's %q", buf, i, args[i], want[i])
		}
	}
	if p.Examined() != uint64(n) {
		t.Fatalf("ReadHot(%q) examined %d of %d bytes", buf, p.Examined(), n)
	}
	if wantName := map[Hot]string{HotPing: "PING", HotGet: "GET", HotSet: "SET"}[hot]; !strings.EqualFold(string(args[0]), wantName) {
		t.Fatalf("ReadHot(%q) answered %v for the command %q", buf, hot, args[0])
	}
	return hot
}

func TestReadHotShapes(t *testing.T) {
	long := strings.Repeat("v", 10000)
	for _, c := range []struct {
		in   string
		lim  Limits
		want Hot
	}{
		{in: "*1\r\n$4\r\nPING\r\n", want: HotPing},
		{in: "*1\r\n$4\r\npInG\r\n*1\r\n$4\r\nPING\r\n", want: HotPing},
		{in: "*2\r\n$3\r\nGET\r\n$3\r\nkey\r\n", want: HotGet},
		{in: "*2\r\n$3\r\nget\r\n$16\r\nkey:000000000042\r\n", want: HotGet},
		{in: "*2\r\n$3\r\nGET\r\n$10\r\n" + long[:10] + "\r\n", want: HotGet}, // two digits: PeekHotBulk's own read
		{in: "*2\r\n$3\r\nGET\r\n$99\r\n" + long[:99] + "\r\n", want: HotGet},
		{in: "*2\r\n$3\r\nGET\r\n$16\r\nkey:000000000042\r\n", lim: Limits{MaxBulkLen: 15}},
		{in: "*2\r\n$3\r\nGET\r\n$16\r\nkey:000000000042\r"},  // partial
		{in: "*2\r\n$3\r\nGET\r\n$16\r\nkey:00000000004\r\n"}, // short: a CRLF inside the key's 16 bytes
		{in: "*2\r\n$3\r\nGET\r\n$16\rXkey:000000000042\r\n"},
		{in: "*2\r\n$3\r\nGET\r\n$1a\r\nkey:000000000042\r\n"},
		{in: "*2\r\n$3\r\nGET\r\n$09\r\nkey:00000\r\n"}, // a leading zero
		{in: "*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nvalue\r\n", want: HotSet},
		{in: "*3\r\n$3\r\nsEt\r\n$1\r\nk\r\n$9999\r\n" + long[:9999] + "\r\n", want: HotSet},
		// Everything else is ReadCommand's.
		{in: "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$10000\r\n" + long + "\r\n"}, // five digits
		{in: "*1\r\n$4\r\nPING\r"},                                       // partial
		{in: "*2\r\n$3\r\nGET\r\n$3\r\nkey\r"},                           // partial
		{in: "*2\r\n$3\r\nGET\r\n$3\r\nkeyX\r\n"},                        // bad terminator: ReadCommand's error
		{in: "*2\r\n$3\r\nGET\r\n$0\r\n\r\n"},                            // empty key, length 0
		{in: "*2\r\n$3\r\nGET\r\n$03\r\nkey\r\n"},                        // a leading zero
		{in: "*2\r\n$3\r\nGE-\r\n$3\r\nkey\r\n"},                         // '-' where the CR is
		{in: "*2\r\n$3\r\nGET-\n$3\r\nkey\r\n"},                          // not a CRLF
		{in: "*1\r\n$4\r\nPINGS\r\n"},                                    // another word
		{in: "*1\r\n$4\r\nP@NG\r\n"},                                     // '@'|0x20 is '`', not 'i'
		{in: "*2\r\n$4\r\nPING\r\n$2\r\nhi\r\n"},                         // PING with a message
		{in: "*3\r\n$3\r\nGET\r\n$1\r\na\r\n$1\r\nb\r\n"},                // GET of three words
		{in: "PING\r\n"},                                                 // inline
		{in: "*2\r\n$3\r\nGET\r\n$3\r\nkey\r\n", lim: Limits{MaxBulkLen: 2}},
		{in: "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n", lim: Limits{MaxArgs: 2}},
		{in: "*2\r\n$3\r\nGET\r\n$3\r\nkey\r\n", lim: Limits{MaxArgs: 1}},
		{in: "*1\r\n$4\r\nPING\r\n", lim: Limits{MaxInlineLen: 1}},
		{in: "*1\r\n$4\r\nPING\r\n", lim: Limits{MaxBulkLen: 3}},
		{in: "*2\r\n$3\r\nGET\r\n$100\r\n" + long[:100] + "\r\n", lim: Limits{MaxInlineLen: 3}},
	} {
		t.Run(fmt.Sprintf("%.30q", c.in), func(t *testing.T) {
			if got := checkHot(t, []byte(c.in), &c.lim); got != c.want {
				t.Errorf("ReadHot(%q) = %v, want %v", c.in, got, c.want)
			}
		})
	}
	// After a partial command the parser resumes it: ReadHot must leave it be.
	var p Parser
	if _, n, err := p.ReadCommand([]byte("*2\r\n$3\r\nGET\r\n$3\r\nke"), nil, nil); n != 0 || err != nil {
		t.Fatalf("partial GET: %d %v", n, err)
	}
	if hot, _, n := p.ReadHot([]byte("*1\r\n$4\r\nPING\r\n"), nil, nil); hot != HotNone || n != 0 {
		t.Errorf("ReadHot read %v (%d bytes) while a command was half parsed", hot, n)
	}
}

// FuzzReadHot: on any bytes ReadHot agrees with ReadCommand or declines.
func FuzzReadHot(f *testing.F) {
	for _, s := range []string{"*1\r\n$4\r\nPING\r\n", "*2\r\n$3\r\nGET\r\n$3\r\nkey\r\n", "*2\r\n$3\r\nGET\r\n$16\r\nkey:000000000042\r\n",
		"*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nvalue\r\n", "*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nvalu\r\n"} {
		f.Add([]byte(s), 0)
	}
	f.Fuzz(func(t *testing.T, b []byte, maxBulk int) {
		checkHot(t, b, &Limits{MaxBulkLen: maxBulk % 64})
	})
}
