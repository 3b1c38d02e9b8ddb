// Package replbench measures replication with real processes, goblin-server
// beside redis-server 7.0 in the same run (docs/replication.md,
// "Benchmarks"):
//
//   - BenchmarkReplicationLag: primary write → visible on the replica,
//     p50/p99, at a steady 20 000 writes/s, over loopback and across two
//     network namespaces joined by a veth pair; goblin→goblin beside
//     redis→redis.
//   - BenchmarkPrimaryWithReplicas: the primary's SET throughput and p99
//     with 0, 1 and 4 replicas of its own kind.
//   - BenchmarkFullSync: a fresh replica's full sync of a large keyspace
//     (REPL_BENCH_KEYS, default 1 000 000), goblin of goblin beside redis
//     of redis.
//   - BenchmarkReplicaRingGet: GET over the shared-memory ring served by a
//     replica beside the same GET served by its primary.
//
// Each prints a table (go test -v shows it). The tests of the package
// (TestTCPReplicationAcrossNamespaces and a short run of each harness) are
// what CI runs.
package replbench
