package javadriver

import "syscall"

// sysProcAttr puts the driver in its own process group (a terminal's Ctrl-C
// reaches the Go process, which then stops the driver in order) and asks the
// kernel to send it SIGTERM if the thread that started it dies, so a crashed
// server or test binary leaves no driver behind, nor its directory: Aeron
// shuts down on SIGTERM and deletes the directory (delete-on-shutdown). If
// the driver does not go, the next Claim of the directory kills it.
// (Pdeathsig follows the starting OS thread; Go only ends threads whose
// goroutine exits while locked to them.)
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
