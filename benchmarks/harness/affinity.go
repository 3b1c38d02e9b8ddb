package harness

import (
	"fmt"
	"runtime"

	"golang.org/x/sys/unix"
)

// PinThread locks the calling goroutine to its OS thread and, when cpus is
// not empty, restricts that thread to those CPUs. The returned function
// restores the thread's previous CPU set and unlocks it; it must be called
// on the same goroutine.
func PinThread(cpus string) (restore func(), err error) {
	runtime.LockOSThread()
	list, err := ParseCPUList(cpus)
	if err != nil || len(list) == 0 {
		return runtime.UnlockOSThread, err
	}
	var old, set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		runtime.UnlockOSThread()
		return nil, fmt.Errorf("sched_getaffinity: %w", err)
	}
	for _, c := range list {
		set.Set(c)
	}
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		runtime.UnlockOSThread()
		return nil, fmt.Errorf("pin the measuring thread to CPU %s: %w", cpus, err)
	}
	return func() {
		_ = unix.SchedSetaffinity(0, &old)
		runtime.UnlockOSThread()
	}, nil
}

// ThreadAffinity reads the calling thread's CPU list, for the archive.
func ThreadAffinity() string {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return "unknown"
	}
	var cpus []int
	for i := 0; i < 1024; i++ {
		if set.IsSet(i) {
			cpus = append(cpus, i)
		}
	}
	return formatCPUList(cpus)
}

// formatCPUList writes CPUs as a Linux CPU list ("0-3,6").
func formatCPUList(cpus []int) string {
	s := ""
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if s != "" {
			s += ","
		}
		if j == i {
			s += fmt.Sprint(cpus[i])
		} else {
			s += fmt.Sprintf("%d-%d", cpus[i], cpus[j])
		}
		i = j + 1
	}
	return s
}
