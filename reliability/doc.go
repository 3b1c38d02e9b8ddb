// Package reliability holds goblin's hostile-client and crash tests: each
// test starts real goblin-server processes (and media drivers, clients,
// second Unix users where the attack needs one), attacks them the way an
// adversarial local user or an unlucky operator would, and asserts that the
// server and its other clients go on. Each test logs the figure it measures
// (other clients' PING p99 under the attack, RSS before and after, time to
// recover), so a CI log shows how close to its limit every defence ran.
//
// The package has no non-test code beyond this comment; the tests run in CI
// with the rest of `go test ./...`.
package reliability
