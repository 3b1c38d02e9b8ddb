package runner

import "github.com/goblin-kv/goblin/benchmarks/harness"

// DefaultProviders is the whole matrix: goblin on every transport, Redis on
// a Unix socket and TCP, the raw Aeron ping-pong on IPC and UDP (Java
// drivers, and on UDP also goblin's Go drivers in-process), and the raw
// shared-memory and UDP socket floors. Providers whose piece is missing report it per case.
func DefaultProviders() []harness.Provider {
	return []harness.Provider{
		NewGoblin(harness.TRing),
		NewGoblin(harness.TAeronIPC),
		NewGoblin(harness.TUDS),
		NewGoblin(harness.TTCP),
		NewGoblin(harness.TAeronUDP),
		NewRedis(harness.TUDS),
		NewRedis(harness.TTCP),
		NewAeronRaw(harness.TAeronIPC),
		NewAeronRaw(harness.TAeronUDP),
		NewAeronGo(),
		NewUDPFloor(),
		NewShmFloor(),
	}
}
