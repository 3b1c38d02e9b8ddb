package harness

// DefaultProviders is the whole matrix: goblin on every transport, Redis on
// a Unix socket and TCP, the raw Aeron ping-pong on IPC and UDP (Java
// drivers, and on UDP also goblin's Go drivers in-process), and the raw
// shared-memory and UDP socket floors. Providers whose piece is missing report it per case.
func DefaultProviders() []Provider {
	return []Provider{
		NewGoblin(TRing),
		NewGoblin(TAeronIPC),
		NewGoblin(TUDS),
		NewGoblin(TTCP),
		NewGoblin(TAeronUDP),
		NewRedis(TUDS),
		NewRedis(TTCP),
		NewAeronRaw(TAeronIPC),
		NewAeronRaw(TAeronUDP),
		NewAeronGo(),
		NewUDPFloor(),
		NewShmFloor(),
	}
}
