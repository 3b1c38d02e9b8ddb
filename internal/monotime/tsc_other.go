//go:build !amd64

package monotime

func rdtsc() uint64 { return 0 }

const haveTSC = false
