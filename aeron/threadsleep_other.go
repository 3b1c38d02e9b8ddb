//go:build !linux

package aeron

import "time"

// ThreadSleep is time.Sleep where nanosleep(2) is not used.
func ThreadSleep(d time.Duration) { time.Sleep(d) }
