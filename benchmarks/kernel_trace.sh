#!/usr/bin/env bash
# Records what the kernel did while a command ran, for lining slow round
# trips up with it (goblin-bench matrix -timeline, then goblin-bench tails; docs/benchmarks.md,
# "Tails on this VM"):
#
#   benchmarks/kernel_trace.sh OUT.trace -- COMMAND [ARGS…]
#
# Context switches, wake-ups, migrations, timer and device interrupts,
# inter-processor interrupts, softirqs and user page faults on every CPU,
# stamped with CLOCK_MONOTONIC (trace_clock mono, the clock of the
# timeline's start_mono_ns), into a tracefs instance of its own (so the
# global trace and other users' instances are untouched), written to OUT
# as text when COMMAND ends, and the instance removed. Needs root and
# tracefs; it only observes. BUFFER_KB (per CPU, default 98304) bounds the
# trace: the oldest events go first, and an "overrun" above 0 on stderr
# says some went.
set -euo pipefail
if [[ $# -lt 3 || $2 != -- ]]; then
	echo "usage: $0 OUT.trace -- COMMAND [ARGS…]" >&2
	exit 2
fi
out=$1
shift 2
tracefs=/sys/kernel/tracing
if [[ ! -w $tracefs/instances ]]; then
	echo "kernel_trace: $tracefs/instances is not writable (needs root and tracefs mounted)" >&2
	exit 2
fi
inst=$tracefs/instances/goblin-tails-$$
mkdir "$inst"
cleanup() {
	echo 0 >"$inst/tracing_on" 2>/dev/null || true
	rmdir "$inst" 2>/dev/null || true
}
trap cleanup EXIT INT TERM
echo mono >"$inst/trace_clock"
echo "${BUFFER_KB:-98304}" >"$inst/buffer_size_kb"
for e in sched/sched_switch sched/sched_wakeup sched/sched_migrate_task \
	irq_vectors/local_timer_entry irq_vectors/local_timer_exit irq_vectors/reschedule_entry \
	irq_vectors/call_function_entry irq_vectors/call_function_single_entry irq_vectors/irq_work_entry \
	irq/irq_handler_entry irq/irq_handler_exit irq/softirq_entry irq/softirq_exit \
	timer/hrtimer_expire_entry exceptions/page_fault_user; do
	if [[ -e $inst/events/$e/enable ]]; then
		echo 1 >"$inst/events/$e/enable"
	else
		echo "kernel_trace: this kernel has no $e event; traced without it" >&2
	fi
done
echo 1 >"$inst/tracing_on"
rc=0
"$@" || rc=$?
echo 0 >"$inst/tracing_on"
for c in "$inst"/per_cpu/cpu*; do
	echo "kernel_trace: ${c##*/}: $(grep -E '^overrun' "$c/stats")" >&2
done
cat "$inst/trace" >"$out"
echo 0 >"$inst/events/enable"
exit $rc
