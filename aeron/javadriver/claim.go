package javadriver

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// ErrInUse means a live media driver owns the directory a driver was to
// start in. Aeron's driver, told to delete its directory on start (as this
// package always does), would delete a live driver's files, so Start
// refuses instead. Claim, which also clears the way for goblin's Go
// driver, returns it too: its text names no package, since the driver
// refused may be either.
var ErrInUse = errors.New("a live media driver owns the directory")

// supervisorProperty marks the drivers this package starts with the pid of
// the process that started them (-Dgoblin.javadriver.supervisor=PID), so a
// later Claim can tell a driver whose supervisor died (an orphan, on its
// way out) from one that another process still runs.
const supervisorProperty = "goblin.javadriver.supervisor"

// orphanWait bounds how long Claim waits for a killed orphan to go.
const orphanWait = 5 * time.Second

// Claim gets dir ready for a new driver, Java or Go. It returns nil when
// no live driver owns dir: there is no CnC file, or its heartbeat is older
// than timeout or says the driver shut down, or the driver process named
// in it is gone — a zombie or a reused pid counts as gone, however fresh
// the heartbeat. A driver this package started whose supervising process
// has died (say a server killed with SIGKILL, whose driver got SIGTERM as
// its parent died and is still shutting down) is killed and waited for.
// When the heartbeat was fresh and the driver is dead, Claim removes dir,
// the dead driver's files, so the next driver starts at once rather than
// taking them for a live driver's until the heartbeat ages (goblin's Go
// driver checks the heartbeat only; Aeron's Java driver deletes the
// directory itself). Any other live driver makes Claim fail with ErrInUse
// naming its pid.
//
// The process checks read /proc and assume the driver runs in this pid
// namespace; a driver in another one (a container sharing the directory)
// looks gone while its heartbeat is fresh. Share such a driver as an
// external one instead of starting a driver in its directory.
func Claim(dir string, timeout time.Duration) error {
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	st, err := readCnC(dir)
	switch {
	case err != nil, st.heartbeatMs <= 0: // no CnC, not ready, or shut down cleanly
		return nil
	case time.Since(time.UnixMilli(st.heartbeatMs)) > timeout:
		return nil
	}
	age := time.Since(time.UnixMilli(st.heartbeatMs)).Round(time.Millisecond)
	p := inspect(int(st.pid), st.startMs)
	switch {
	case !p.alive:
	case p.exiting:
		// Killed, its memory already gone: wait for it to finish.
		err = awaitGone(dir, p, st.startMs, "exiting")
	case p.supervisor > 0 && (p.ppid != p.supervisor || !inspect(p.supervisor, 0).alive):
		// Started by this package for a process that is gone (the driver
		// was reparented, or its parent is a zombie): nobody serves it;
		// end it now.
		_ = syscall.Kill(p.pid, syscall.SIGKILL)
		err = awaitGone(dir, p, st.startMs, fmt.Sprintf("orphaned (its supervisor %d is gone), killed", p.supervisor))
	default:
		return fmt.Errorf("%w: %s: driver pid %d, heartbeat %v old", ErrInUse, dir, p.pid, age)
	}
	if err != nil {
		return err
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("remove the dead media driver's directory %s: %w", dir, err)
	}
	return nil
}

// awaitGone waits up to orphanWait for a driver that is on its way out.
func awaitGone(dir string, p process, startMs int64, what string) error {
	deadline := time.Now().Add(orphanWait)
	for inspect(p.pid, startMs).alive {
		if time.Now().After(deadline) {
			return fmt.Errorf("%w: %s: driver pid %d, %s, still runs after %v", ErrInUse, dir, p.pid, what, orphanWait)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return nil
}

// process is what /proc says of a driver's pid.
type process struct {
	pid        int
	alive      bool // running (not a zombie), and started before its CnC file
	exiting    bool // alive, but without a command line: its memory is gone, it is exiting
	ppid       int
	supervisor int // from the command line's supervisorProperty, or 0
}

// clockTick is the unit of /proc/PID/stat's start time: USER_HZ, which
// Linux fixes at 100 for that interface.
const clockTick = 10 * time.Millisecond

// inspect looks the driver pid up. startMs is the start time its CnC file
// records: a process that started later is another one that got the pid.
func inspect(pid int, startMs int64) process {
	p := process{pid: pid}
	if pid <= 0 {
		return p
	}
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			if _, err := os.Stat("/proc/self/stat"); err == nil {
				return p // gone
			}
		}
		// No /proc here: all a signal can tell is whether the pid exists.
		p.alive = syscall.Kill(pid, 0) != syscall.ESRCH
		return p
	}
	state, ppid, started, ok := parseStat(stat)
	if !ok || state == 'Z' || state == 'X' {
		return p
	}
	if boot, ok := bootTime(); ok && startMs > 0 {
		if began := boot.Add(time.Duration(started) * clockTick); began.After(time.UnixMilli(startMs).Add(2 * time.Second)) {
			return p // the pid was reused after the driver died
		}
	}
	p.alive, p.ppid = true, ppid
	if cmd, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline")); err == nil {
		p.supervisor = supervisorOf(cmd)
		p.exiting = len(cmd) == 0 // a JVM always has one until it releases its memory
	}
	return p
}

// parseStat reads the state, the parent pid and the start time (clock
// ticks after boot) from /proc/PID/stat. The command name, in parentheses,
// may hold spaces and parentheses: the fields start after the last ')'.
func parseStat(b []byte) (state byte, ppid int, start uint64, ok bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, 0, false
	}
	f := bytes.Fields(b[i+1:])
	// f[0] is field 3 (state), f[1] field 4 (ppid), f[19] field 22 (starttime).
	if len(f) < 20 || len(f[0]) != 1 {
		return 0, 0, 0, false
	}
	pp, err1 := strconv.Atoi(string(f[1]))
	st, err2 := strconv.ParseUint(string(f[19]), 10, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, 0, false
	}
	return f[0][0], pp, st, true
}

// bootTime is /proc/stat's btime.
func bootTime() (time.Time, bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return time.Time{}, false
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		if f := bytes.Fields(line); len(f) == 2 && string(f[0]) == "btime" {
			if s, err := strconv.ParseInt(string(f[1]), 10, 64); err == nil {
				return time.Unix(s, 0), true
			}
		}
	}
	return time.Time{}, false
}

// supervisorOf finds -Dgoblin.javadriver.supervisor=PID in a NUL-separated
// command line.
func supervisorOf(cmdline []byte) int {
	want := []byte("-D" + supervisorProperty + "=")
	for _, arg := range bytes.Split(cmdline, []byte{0}) {
		if v, ok := bytes.CutPrefix(arg, want); ok {
			if pid, err := strconv.Atoi(string(v)); err == nil {
				return pid
			}
		}
	}
	return 0
}
