//go:build !linux

package javadriver

import "syscall"

// sysProcAttr puts the driver in its own process group.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
