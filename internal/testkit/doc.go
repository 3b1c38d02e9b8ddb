// Package testkit is goblin's test kit: helpers shared by the tests and
// benchmarks of many packages, and nothing else (no production code imports
// anything under internal/testkit). Its subpackages run real processes
// (testproc), build network namespaces (netns), record latencies (latency),
// hold the transports' wire fixtures (wiretest) and check what another Unix
// user can see (accesstest). This package holds the small helpers:
//
// FuzzReader hands out a fuzz input one byte at a time, the way the fuzz
// targets that decode a stream of operations from their input (the arena's,
// the store's, the engine's bit commands') read it:
//
//	in := testkit.NewFuzzReader(data)
//	for in.Len() > 0 {
//		switch in.Next() % 4 { … }
//	}
//
// HasPointers tells whether a Go type holds pointers, that is, whether the
// garbage collector must scan memory of that type. The arena and the store
// keep their metadata pointer-free so that millions of keys cost the
// collector nothing; their tests check it:
//
//	if testkit.HasPointers(reflect.TypeFor[slot]()) { t.Error("the GC would scan every key") }
//
// ReadHexFile reads test fixtures stored as hex text: the recorded version-1
// SBE messages in proto/sbe/testdata/v1, which both the codec's and the
// engine's tests replay:
//
//	msg := testkit.ReadHexFile(t, "testdata/v1/request-get.hex")
//
// RaceEnabled is true when the tests were built with -race: a test that
// loops over many keys or megabytes scales its size down under the race
// detector, which checks concurrency, not size, and costs tenfold there:
//
//	n := 1_000_000
//	if testkit.RaceEnabled {
//		n = 100_000
//	}
package testkit
