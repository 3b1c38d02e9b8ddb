// Package remote runs the harness across two hosts over ssh. ConnectHosts
// stages the build (goblin-bench, goblin-server, the media driver) on the
// server and client hosts, checks every staged file's hash from both
// sides, and starts `goblin-bench agent` on each host; the hosts it
// returns are harness.Hosts, through which the runner starts, pins, reads
// and stops processes there. ServeAgent is the agent: it answers the
// controller's requests on its standard input and output and stops every
// process it started when the controller goes.
package remote
