// Package deploy holds what an operator installs goblin-server with, and
// the tests that keep it honest: the systemd unit and its configuration
// (systemd/), the container image definition (container/), a Grafana
// dashboard (grafana/) and Prometheus alerting rules (prometheus/).
// docs/deploy.md explains each; this package has no code of its own.
package deploy
