package javadriver

import "syscall"

// sysProcAttr puts the driver in its own process group (a terminal's Ctrl-C
// reaches the Go process, which then stops the driver in order) and asks the
// kernel to SIGKILL it if the thread that started it dies, so a crashed test
// binary leaves no driver behind. (Pdeathsig follows the starting OS thread;
// Go only ends threads whose goroutine exits while locked to them.)
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
