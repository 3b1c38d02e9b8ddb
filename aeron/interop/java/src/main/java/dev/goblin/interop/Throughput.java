/*
 * Throughput measures one publisher's message rate: a publisher thread
 * offers size=-byte messages (default 32) as fast as the publication takes
 * them on channel=/stream= (default aeron:ipc, 1004) while a subscriber
 * thread in the same JVM polls them and checks that the sequence number in
 * the first 8 bytes goes up by one each time. After warmupMs= (default 1000)
 * it counts messages received for durationMs= (default 3000).
 *
 * Lines: "READY" when connected, then
 * "RESULT size=S msgs_per_sec=R bytes_per_sec=B messages=N seconds=T
 * back_pressured=P errors=E cpus=C". idle= picks the subscriber's and
 * publisher's wait (default spin). exclusive= picks an exclusive
 * publication (default true, as the Aeron samples measure). pubDir= puts
 * the publisher on the media driver in that Aeron directory (the
 * subscriber stays on the one of the aeron.dir property): two drivers,
 * e.g. two hosts over UDP.
 *
 * cpus= is the CPU time the publisher and subscriber threads got during
 * the counted part over its elapsed time, in CPUs: about 2 when each has a
 * CPU to itself, about 1 when both share one, less when something else
 * took their CPU.
 *
 * threads=true prints "THREADS publisher=TID subscriber=TID" (the Linux
 * thread ids of the publisher thread and of the polling main thread, read
 * from the /proc/thread-self link) before any message is sent, then waits
 * for a line on stdin, so a harness can bind the two threads to CPUs
 * before the warm-up. intervalMs=N (default 0: none) prints
 * "INTERVAL ms=T msgs=N" for every N ms of the counted part: how the rate
 * moved within the run.
 */
package dev.goblin.interop;

import io.aeron.Aeron;
import io.aeron.Publication;
import io.aeron.Subscription;
import io.aeron.logbuffer.FragmentHandler;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.SleepingMillisIdleStrategy;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

public final class Throughput
{
    public static void main(final String[] argv) throws Exception
    {
        final Common.Args args = new Common.Args(argv);
        final String channel = args.str("channel", "aeron:ipc");
        final int stream = args.i32("stream", 1004);
        final int size = Math.max(8, args.i32("size", 32));
        final long warmupMs = args.i64("warmupMs", 1000);
        final long durationMs = args.i64("durationMs", 3000);
        final String idleName = args.str("idle", "spin");
        final boolean exclusive = args.bool("exclusive", true);
        final String pubDir = args.str("pubDir", null);
        final boolean threads = args.bool("threads", false);
        final long intervalNs = args.i64("intervalMs", 0) * 1_000_000L;

        try (Aeron aeron = Common.connect(args);
            Aeron pubDriver = null == pubDir ? null : Aeron.connect(new Aeron.Context().aeronDirectoryName(pubDir));
            Subscription sub = aeron.addSubscription(channel, stream);
            Publication pub = exclusive ?
                (null == pubDriver ? aeron : pubDriver).addExclusivePublication(channel, stream) :
                (null == pubDriver ? aeron : pubDriver).addPublication(channel, stream))
        {
            Common.awaitConnected(pub, Common.deadline(60_000), "publication");
            final AtomicBoolean running = new AtomicBoolean(true);
            final AtomicLong backPressured = new AtomicLong();
            final AtomicLong publisherTid = new AtomicLong();
            final AtomicBoolean go = new AtomicBoolean(!threads);
            final Thread publisher = new Thread(() ->
            {
                publisherTid.set(threadId());
                while (!go.get())
                {
                    Thread.onSpinWait();
                }
                final IdleStrategy idle = Common.idle(idleName);
                final UnsafeBuffer buf = Common.buffer(size);
                Common.fill(buf, 0, 0, size);
                long seq = 0;
                long bp = 0;
                while (running.get())
                {
                    buf.putLong(0, seq);
                    final long r = pub.offer(buf, 0, size);
                    if (r > 0)
                    {
                        seq++;
                        idle.reset();
                    }
                    else if (r == Publication.CLOSED || r == Publication.MAX_POSITION_EXCEEDED)
                    {
                        break;
                    }
                    else
                    {
                        bp++;
                        idle.idle();
                    }
                }
                backPressured.set(bp);
            }, "publisher");

            final long[] state = new long[2]; // [0] next expected sequence, [1] errors
            final FragmentHandler onMessage = (buffer, offset, length, header) ->
            {
                if (buffer.getLong(offset) != state[0] || length != size)
                {
                    state[1]++;
                    state[0] = buffer.getLong(offset);
                }
                state[0]++;
            };
            Common.line("READY");
            publisher.start();
            if (threads)
            {
                while (0 == publisherTid.get())
                {
                    Thread.onSpinWait();
                }
                Common.line("THREADS publisher=" + publisherTid.get() + " subscriber=" + threadId());
                new BufferedReader(new InputStreamReader(System.in)).readLine();
                go.set(true);
            }

            final IdleStrategy idle = Common.idle(idleName);
            final long warmEnd = System.nanoTime() + warmupMs * 1_000_000L;
            while (System.nanoTime() < warmEnd)
            {
                idle.idle(sub.poll(onMessage, 256));
            }
            final ThreadMXBean cpuClock = ManagementFactory.getThreadMXBean();
            final long cpuStart = cpuClock.getCurrentThreadCpuTime() + cpuClock.getThreadCpuTime(publisher.getId());
            final long start = System.nanoTime();
            final long startCount = state[0];
            final long end = start + durationMs * 1_000_000L;
            long now;
            long nextInterval = 0 == intervalNs ? Long.MAX_VALUE : start + intervalNs;
            long intervalCount = startCount;
            while ((now = System.nanoTime()) < end)
            {
                idle.idle(sub.poll(onMessage, 256));
                if (now >= nextInterval)
                {
                    Common.line("INTERVAL ms=" + (now - start) / 1_000_000 + " msgs=" + (state[0] - intervalCount));
                    intervalCount = state[0];
                    nextInterval += intervalNs;
                }
            }
            final long messages = state[0] - startCount;
            final long cpuEnd = cpuClock.getCurrentThreadCpuTime() + cpuClock.getThreadCpuTime(publisher.getId());
            running.set(false);
            publisher.join();
            final double seconds = (now - start) / 1e9;
            final IdleStrategy drain = new SleepingMillisIdleStrategy(1);
            for (int i = 0; i < 10; i++)
            {
                drain.idle(sub.poll(onMessage, 1024));
            }
            Common.line(String.format(
                "RESULT size=%d msgs_per_sec=%.0f bytes_per_sec=%.0f messages=%d seconds=%.3f back_pressured=%d errors=%d cpus=%.3f",
                size, messages / seconds, messages * size / seconds, messages, seconds, backPressured.get(), state[1],
                (cpuEnd - cpuStart) / 1e9 / seconds));
            if (state[1] > 0)
            {
                System.exit(2);
            }
        }
    }

    /** The calling thread's Linux thread id: /proc/thread-self links to PID/task/TID. */
    private static long threadId()
    {
        try
        {
            final Path link = Files.readSymbolicLink(Path.of("/proc/thread-self"));
            return Long.parseLong(link.getFileName().toString());
        }
        catch (final IOException | UnsupportedOperationException | NumberFormatException ex)
        {
            throw new IllegalStateException("cannot read this thread's id from /proc/thread-self", ex);
        }
    }
}
