package resp

import "testing"

func BenchmarkReadCommand(b *testing.B) {
	for _, c := range []struct{ name, in string }{
		{"PING", "*1\r\n$4\r\nPING\r\n"},
		{"PING_INLINE", "PING\r\n"},
		{"SET", "*3\r\n$3\r\nSET\r\n$16\r\nkey:000000000042\r\n$16\r\n0123456789abcdef\r\n"},
	} {
		b.Run(c.name, func(b *testing.B) {
			in := []byte(c.in)
			args := make([][]byte, 0, 8)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				args, _, _ = ReadCommand(in, args, nil)
			}
		})
	}
}
