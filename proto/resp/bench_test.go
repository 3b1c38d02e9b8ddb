package resp

import "testing"

// benchCommands are the commands the parser benchmarks read.
var benchCommands = []struct{ name, in string }{
	{"PING", "*1\r\n$4\r\nPING\r\n"},
	{"PING_INLINE", "PING\r\n"},
	{"SET", "*3\r\n$3\r\nSET\r\n$16\r\nkey:000000000042\r\n$16\r\n0123456789abcdef\r\n"},
}

// BenchmarkReadCommand is the stateless reader (message transports).
func BenchmarkReadCommand(b *testing.B) {
	for _, c := range benchCommands {
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

// BenchmarkParser is a connection's resumable Parser (stream transports).
func BenchmarkParser(b *testing.B) {
	for _, c := range benchCommands {
		b.Run(c.name, func(b *testing.B) {
			in := []byte(c.in)
			args := make([][]byte, 0, 8)
			var p Parser
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				args, _, _ = p.ReadCommand(in, args, nil)
			}
		})
	}
}
