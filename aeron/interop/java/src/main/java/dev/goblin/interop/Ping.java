/*
 * Ping measures round-trip time against Pong: it sends a size=-byte message
 * (default 32; the first 8 bytes carry System.nanoTime()) on
 * channel=/stream= (default aeron:ipc, 1002), waits for the echo on
 * pongChannel=/pongStream= (default the same channel, 1003), and repeats:
 * warmup= round trips (default 10,000) unrecorded, then count= (default
 * 100,000) recorded. One message is in flight at a time.
 *
 * Lines: "READY" once both directions are connected, then
 * "RESULT rtt_ns count=N min=.. p50=.. p90=.. p99=.. p999=.. max=.. mean=..".
 * The percentiles come from the sorted samples (exact, no histogram
 * bucketing). idle= picks the wait between polls (default spin).
 */
package dev.goblin.interop;

import io.aeron.Aeron;
import io.aeron.Publication;
import io.aeron.Subscription;
import io.aeron.logbuffer.FragmentHandler;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.SleepingMillisIdleStrategy;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.Arrays;

public final class Ping
{
    private static long lastRtt;
    private static boolean got;
    private static long badReplies;

    public static void main(final String[] argv)
    {
        final Common.Args args = new Common.Args(argv);
        final Common.PingPong streams = Common.PingPong.of(args);
        final int warmup = args.i32("warmup", 10_000);
        final int count = args.i32("count", 100_000);
        final int size = Math.max(8, args.i32("size", 32));
        final long timeoutMs = args.i64("timeoutMs", 60_000);
        final IdleStrategy idle = Common.idle(args.str("idle", "spin"));

        final FragmentHandler onPong = (buffer, offset, length, header) ->
        {
            if (length != size)
            {
                badReplies++;
            }
            lastRtt = System.nanoTime() - buffer.getLong(offset);
            got = true;
        };

        try (Aeron aeron = Common.connect(args);
            Subscription sub = aeron.addSubscription(streams.pongChannel(), streams.pongStream());
            Publication pub = aeron.addExclusivePublication(streams.channel(), streams.stream()))
        {
            final long deadline = Common.deadline(timeoutMs);
            Common.awaitConnected(pub, deadline, "ping publication");
            final IdleStrategy wait = new SleepingMillisIdleStrategy(1);
            while (!sub.isConnected())
            {
                if (Common.past(deadline))
                {
                    throw new IllegalStateException("timed out waiting for the pong stream");
                }
                wait.idle();
            }
            Common.line("READY");

            final UnsafeBuffer buf = Common.buffer(size);
            Common.fill(buf, 0, 0, size);
            final long[] samples = new long[count];
            for (int i = -warmup; i < count; i++)
            {
                got = false;
                buf.putLong(0, System.nanoTime());
                final long r = Common.offer(pub, buf, size, idle, Common.deadline(timeoutMs));
                if (r < 0)
                {
                    System.err.println("ping offer failed: " + Common.status(r));
                    System.exit(1);
                }
                final long replyDeadline = Common.deadline(timeoutMs);
                idle.reset();
                while (!got)
                {
                    final int n = sub.poll(onPong, 1);
                    if (0 == n && Common.past(replyDeadline))
                    {
                        System.err.println("no pong for round trip " + i);
                        System.exit(1);
                    }
                    idle.idle(n);
                }
                if (i >= 0)
                {
                    samples[i] = lastRtt;
                }
            }
            if (badReplies > 0)
            {
                System.err.println(badReplies + " replies had the wrong length");
                System.exit(2);
            }
            Arrays.sort(samples);
            long sum = 0;
            for (final long s : samples)
            {
                sum += s;
            }
            Common.line("RESULT rtt_ns count=" + count +
                " min=" + samples[0] +
                " p50=" + pct(samples, 0.50) +
                " p90=" + pct(samples, 0.90) +
                " p99=" + pct(samples, 0.99) +
                " p999=" + pct(samples, 0.999) +
                " max=" + samples[count - 1] +
                " mean=" + (sum / count));
        }
    }

    /** The nearest-rank percentile of sorted samples. */
    static long pct(final long[] sorted, final double q)
    {
        int rank = (int)Math.ceil(q * sorted.length) - 1;
        rank = Math.max(0, Math.min(sorted.length - 1, rank));
        return sorted[rank];
    }
}
