package interop

import "syscall"

// procAttr: own process group, and SIGKILL if the starting thread dies, so
// a crashed test binary leaves no Java program spinning.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
