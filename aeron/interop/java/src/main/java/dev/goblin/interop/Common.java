/*
 * Shared plumbing for goblin's Aeron interop programs: key=value arguments,
 * the checkable payload pattern, idle strategies and the line protocol the Go
 * tests read (READY ..., RESULT ..., one line each on stdout).
 */
package dev.goblin.interop;

import io.aeron.Aeron;
import io.aeron.ChannelUri;
import io.aeron.Publication;
import org.agrona.BufferUtil;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.BusySpinIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.NoOpIdleStrategy;
import org.agrona.concurrent.SleepingMillisIdleStrategy;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.YieldingIdleStrategy;

import java.io.IOException;
import java.io.InputStream;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

final class Common
{
    private Common()
    {
    }

    /** Parsed key=value command-line arguments. */
    static final class Args
    {
        private final Map<String, String> values = new HashMap<>();

        Args(final String[] argv)
        {
            for (final String a : argv)
            {
                final int eq = a.indexOf('=');
                if (eq <= 0)
                {
                    throw new IllegalArgumentException("argument is not key=value: " + a);
                }
                values.put(a.substring(0, eq), a.substring(eq + 1));
            }
        }

        String str(final String key, final String dflt)
        {
            return values.getOrDefault(key, dflt);
        }

        int i32(final String key, final int dflt)
        {
            final String v = values.get(key);
            return null == v ? dflt : Integer.parseInt(v);
        }

        long i64(final String key, final long dflt)
        {
            final String v = values.get(key);
            return null == v ? dflt : Long.parseLong(v);
        }

        boolean bool(final String key, final boolean dflt)
        {
            final String v = values.get(key);
            return null == v ? dflt : Boolean.parseBoolean(v);
        }
    }

    /**
     * The two streams of Ping and Pong: pings on channel=/stream= (default
     * aeron:ipc, 1002), pongs on pongChannel=/pongStream= (default the same
     * channel, 1003).
     */
    record PingPong(String channel, int stream, String pongChannel, int pongStream)
    {
        static PingPong of(final Args args)
        {
            final String channel = args.str("channel", "aeron:ipc");
            return new PingPong(channel, args.i32("stream", 1002),
                args.str("pongChannel", channel), args.i32("pongStream", 1003));
        }
    }

    /**
     * Connects to the driver in dir= (else the aeron.dir system property, else
     * Aeron's default directory).
     */
    static Aeron connect(final Args args)
    {
        final Aeron.Context ctx = new Aeron.Context()
            .errorHandler(t -> System.err.println("aeron error: " + t))
            .driverTimeoutMs(args.i64("driverTimeoutMs", 10_000));
        final String dir = args.str("dir", null);
        if (null != dir)
        {
            ctx.aeronDirectoryName(dir);
        }
        return Aeron.connect(ctx);
    }

    /**
     * The payload pattern every program and the Go tests agree on: byte j of
     * message seq is (seq*131 + j*7 + (j>>8)*13) mod 256. It depends on the
     * message's sequence number and on each byte's position, so a lost,
     * repeated, reordered or mis-assembled fragment shows up.
     */
    static byte pattern(final long seq, final int j)
    {
        return (byte)(seq * 131 + j * 7L + (j >>> 8) * 13L);
    }

    /**
     * The length of message seq when a program is given sizes=MIN-MAX: a
     * deterministic mix that both sides compute alike (the Go side's
     * interop.SizeOf), seven in eight within 256 bytes of MIN, the rest
     * anywhere up to MAX.
     */
    static int sizeOf(final long seq, final int min, final int max)
    {
        if (max <= min)
        {
            return min;
        }
        final long span = (long)max - min + 1;
        final long h = (seq * 7919L) ^ (seq >>> 3) * 104729L;
        return min + (int)(h % (0 == h % 8 ? span : Math.min(256, span)));
    }

    /** Parses sizes=MIN-MAX into {min, max}, or {size, size} when absent. */
    static int[] sizes(final Args args, final int size)
    {
        final String v = args.str("sizes", null);
        if (null == v)
        {
            return new int[]{ size, size };
        }
        final int dash = v.indexOf('-');
        return new int[]{ Integer.parseInt(v.substring(0, dash)), Integer.parseInt(v.substring(dash + 1)) };
    }

    static void fill(final MutableDirectBuffer buf, final int offset, final long seq, final int length)
    {
        for (int j = 0; j < length; j++)
        {
            buf.putByte(offset + j, pattern(seq, j));
        }
    }

    /** Returns the index of the first byte that breaks the pattern, or -1. */
    static int check(final DirectBuffer buf, final int offset, final int length, final long seq)
    {
        for (int j = 0; j < length; j++)
        {
            if (buf.getByte(offset + j) != pattern(seq, j))
            {
                return j;
            }
        }
        return -1;
    }

    static UnsafeBuffer buffer(final int length)
    {
        return new UnsafeBuffer(BufferUtil.allocateDirectAligned(Math.max(64, org.agrona.BitUtil.align(length, 64)), 64));
    }

    static IdleStrategy idle(final String name)
    {
        return switch (name)
        {
            case "spin" -> new BusySpinIdleStrategy();
            case "noop" -> NoOpIdleStrategy.INSTANCE;
            case "yield" -> new YieldingIdleStrategy();
            case "backoff" -> new BackoffIdleStrategy();
            case "sleep" -> new SleepingMillisIdleStrategy(1);
            default -> throw new IllegalArgumentException("unknown idle strategy " + name);
        };
    }

    /** Adds key=value to an Aeron channel URI. */
    static String withParam(final String channel, final String key, final String value)
    {
        final ChannelUri uri = ChannelUri.parse(channel);
        uri.put(key, value);
        return uri.toString();
    }

    /** Prints one protocol line and flushes it at once: the Go side waits on it. */
    static void line(final String s)
    {
        System.out.println(s);
        System.out.flush();
    }

    static long deadline(final long millis)
    {
        return System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
    }

    static boolean past(final long deadlineNs)
    {
        return System.nanoTime() - deadlineNs > 0;
    }

    /**
     * Offers one message, retrying while back pressured, in an admin action
     * or not yet connected, until the deadline. Returns the new position or
     * the last (negative) status.
     */
    static long offer(
        final Publication pub, final DirectBuffer buf, final int length, final IdleStrategy idle, final long deadlineNs)
    {
        idle.reset();
        while (true)
        {
            final long r = pub.offer(buf, 0, length);
            if (r > 0)
            {
                return r;
            }
            if (r == Publication.CLOSED || r == Publication.MAX_POSITION_EXCEEDED || past(deadlineNs))
            {
                return r;
            }
            idle.idle();
        }
    }

    static void awaitConnected(final Publication pub, final long deadlineNs, final String what)
    {
        final IdleStrategy idle = new SleepingMillisIdleStrategy(1);
        while (!pub.isConnected())
        {
            if (past(deadlineNs))
            {
                throw new IllegalStateException("timed out waiting for " + what + " to connect: " + pub.channel());
            }
            idle.idle();
        }
    }

    /** A daemon thread that sets the returned flag when stdin reaches EOF. */
    static java.util.concurrent.atomic.AtomicBoolean stdinClosed()
    {
        final java.util.concurrent.atomic.AtomicBoolean closed = new java.util.concurrent.atomic.AtomicBoolean();
        final Thread t = new Thread(() ->
        {
            final InputStream in = System.in;
            final byte[] b = new byte[256];
            try
            {
                while (in.read(b) >= 0)
                {
                    Thread.onSpinWait();
                }
            }
            catch (final IOException ignore)
            {
            }
            closed.set(true);
        }, "stdin-watch");
        t.setDaemon(true);
        t.start();
        return closed;
    }

    static String status(final long r)
    {
        if (r == Publication.NOT_CONNECTED)
        {
            return "NOT_CONNECTED";
        }
        if (r == Publication.BACK_PRESSURED)
        {
            return "BACK_PRESSURED";
        }
        if (r == Publication.ADMIN_ACTION)
        {
            return "ADMIN_ACTION";
        }
        if (r == Publication.CLOSED)
        {
            return "CLOSED";
        }
        if (r == Publication.MAX_POSITION_EXCEEDED)
        {
            return "MAX_POSITION_EXCEEDED";
        }
        return Long.toString(r);
    }
}
