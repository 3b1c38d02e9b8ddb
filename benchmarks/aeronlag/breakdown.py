#!/usr/bin/env python3
"""Follows each lag probe of BenchmarkAeronReplicationLag thread by thread.

    AERON_LAG_TRACE=DIR go test -run '^$' -bench AeronReplicationLag -benchtime 1x ./cmd/goblin-server/
    python3 benchmarks/aeronlag/breakdown.py DIR/mdc

reads DIR/mdc.{perf.data,probes,pids} (the bench writes them for its first
round) and prints, per hop, the median and p90 time from the probe's start
(the SET written on the primary's Unix socket) to:

  primary woken     the kernel wakes a thread of the primary (its store loop,
                    parked in epoll: the SET came)
  primary running   that thread is switched in
  driver woken      a thread of the primary woken by a thread of the primary
                    (the loop's Driver.Wake rings the media driver's eventfd)
  driver running    it is switched in (it then sends the datagram)
  replica rx woken  a thread of the replica woken by anything but the bench
                    (the datagram wakes its media driver's receiver)
  replica rx running
  replica loop woken  the replica's loop woken by the replica's driver (WorkFD),
                    if it was parked (the probe's ring GETs keep it busy too)
  end               the probe read the value on the replica's ring

and, between the hops, how long each woken thread waited to run (run-queue
delay): what the machine's load adds. Needs perf.
"""
import collections
import re
import statistics
import subprocess
import sys

base = sys.argv[1]
roles = {}
for line in open(base + ".pids"):
    f = line.split()
    roles[f[0]] = set(int(x) for x in f[2:])
probes = [tuple(int(x) for x in l.split()) for l in open(base + ".probes")]
out = subprocess.run(["perf", "script", "--ns", "-i", base + ".perf.data", "-F", "tid,time,event,trace"],
                     capture_output=True, text=True).stdout
wake_re = re.compile(r"^\s*(\d+)\s+([\d.]+):\s+sched:sched_wakeup:.*? pid=(\d+)")
sw_re = re.compile(r"^\s*(\d+)\s+([\d.]+):\s+sched:sched_switch:.*?prev_pid=(\d+).*?prev_state=(\S+).*?next_pid=(\d+)")
events = []  # (t, kind, waker/prev, target/next)
for line in out.splitlines():
    m = wake_re.match(line)
    if m:
        events.append((int(round(float(m.group(2)) * 1e9)), "w", int(m.group(1)), int(m.group(3))))
        continue
    m = sw_re.match(line)
    if m:
        events.append((int(round(float(m.group(2)) * 1e9)), "s", int(m.group(3)), int(m.group(5))))
events.sort()
P, R, B = roles["primary"], roles["replica"], roles["bench"]
times = [e[0] for e in events]
import bisect

hops = collections.defaultdict(list)
loops = collections.Counter()
for t0, t1 in probes:
    i = bisect.bisect_left(times, t0)
    j = bisect.bisect_right(times, t1)
    win = events[i:j]
    h = {}
    ploop = None
    for t, k, a, b in win:
        if "primary woken" not in h and k == "w" and b in P:
            h["primary woken"], ploop = t, b
        elif "primary woken" in h and "primary running" not in h and k == "s" and b == ploop:
            h["primary running"] = t
        elif "primary running" in h and "driver woken" not in h and k == "w" and b in P and a in P and b != ploop:
            h["driver woken"], drv = t, b
        elif "driver woken" in h and "driver running" not in h and k == "s" and b == drv:
            h["driver running"] = t
        elif "driver woken" in h and "replica rx woken" not in h and k == "w" and b in R and a not in B:
            h["replica rx woken"], rx = t, b
        elif "replica rx woken" in h and "replica rx running" not in h and k == "s" and b == rx:
            h["replica rx running"] = t
        elif "replica rx running" in h and "replica loop woken" not in h and k == "w" and b in R and a == rx:
            h["replica loop woken"] = t
    if "primary woken" not in h:
        loops["primary loop not parked (no wake-up seen)"] += 1
    for k, v in h.items():
        hops[k].append(v - t0)
    hops["end"].append(t1 - t0)

order = ["primary woken", "primary running", "driver woken", "driver running", "replica rx woken",
         "replica rx running", "replica loop woken", "end"]
print(f"{len(probes)} probes; µs from the SET's write (median, p90; probes that showed the hop)")
for k in order:
    v = hops.get(k, [])
    if v:
        v.sort()
        print(f"  {k:20s} {statistics.median(v)/1e3:9.1f} {v[int(len(v)*0.9)]/1e3:9.1f}   ({len(v)})")
for k, n in loops.items():
    print(f"  {k}: {n}")
