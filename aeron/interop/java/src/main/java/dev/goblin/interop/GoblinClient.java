/*
 * A goblin client written against the plain Aeron Java API: it speaks
 * goblin's Aeron transport (docs/transports.md) to a goblin-server over
 * two-driver UDP with response channels, RESP on the streams, and runs
 * rounds= rounds of PING, SET key value and GET key, checking every reply.
 *
 *   GoblinClient endpoint=HOST:PORT control=HOST:PORT [stream=1001]
 *       [replyStream=1002] [rounds=100] [timeoutMs=30000] [dir=...]
 *
 * The server's first message on the response stream is its hello (16
 * bytes: magic 0x416267A7 little-endian, kind 1, version, protocol 0 =
 * RESP). Prints READY once the hello came, RESULT ok=<replies checked>
 * errors=<n> at the end; exits 2 on a wrong reply, 3 on a timeout.
 */
package dev.goblin.interop;

import io.aeron.Aeron;
import io.aeron.ExclusivePublication;
import io.aeron.FragmentAssembler;
import io.aeron.Subscription;
import io.aeron.logbuffer.FragmentHandler;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.SleepingMillisIdleStrategy;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.charset.StandardCharsets;

public final class GoblinClient
{
    private static final int HELLO_MAGIC = 0x416267A7;
    private static String reply;

    public static void main(final String[] argv)
    {
        final Common.Args args = new Common.Args(argv);
        final String endpoint = args.str("endpoint", null);
        final String control = args.str("control", null);
        final int stream = args.i32("stream", 1001);
        final int replyStream = args.i32("replyStream", 1002);
        final long rounds = args.i64("rounds", 100);
        final long timeoutMs = args.i64("timeoutMs", 30_000);
        final IdleStrategy idle = Common.idle(args.str("idle", "backoff"));

        final FragmentHandler onReply = (buffer, offset, length, header) ->
        {
            final byte[] b = new byte[length];
            buffer.getBytes(offset, b);
            if (length >= 16 && buffer.getInt(offset, java.nio.ByteOrder.LITTLE_ENDIAN) == HELLO_MAGIC)
            {
                reply = "HELLO proto=" + buffer.getByte(offset + 6);
            }
            else
            {
                reply = new String(b, StandardCharsets.US_ASCII);
            }
        };
        final FragmentAssembler assembler = new FragmentAssembler(onReply);

        long ok = 0;
        long errors = 0;
        try (Aeron aeron = Common.connect(args);
            Subscription sub = aeron.addSubscription(
                "aeron:udp?control=" + control + "|control-mode=response", replyStream);
            ExclusivePublication pub = aeron.addExclusivePublication(
                "aeron:udp?endpoint=" + endpoint + "|response-correlation-id=" + sub.registrationId(), stream))
        {
            final long deadline = Common.deadline(timeoutMs);
            Common.awaitConnected(pub, deadline, "request publication");
            final String hello = await(sub, assembler, idle, deadline);
            if (null == hello || !hello.equals("HELLO proto=0"))
            {
                System.err.println("no RESP hello from the server: " + hello);
                Common.line("RESULT ok=0 errors=1");
                System.exit(3);
            }
            Common.line("READY");
            final UnsafeBuffer buf = Common.buffer(256);
            for (long i = 0; i < rounds; i++)
            {
                final String value = "value-" + i;
                final String[][] steps = {
                    { "*1\r\n$4\r\nPING\r\n", "+PONG\r\n" },
                    { resp("SET", "key", value), "+OK\r\n" },
                    { resp("GET", "key"), "$" + value.length() + "\r\n" + value + "\r\n" },
                };
                for (final String[] step : steps)
                {
                    final byte[] req = step[0].getBytes(StandardCharsets.US_ASCII);
                    buf.putBytes(0, req);
                    final long r = Common.offer(pub, buf, req.length, idle, Common.deadline(timeoutMs));
                    if (r < 0)
                    {
                        System.err.println("request failed: " + Common.status(r));
                        Common.line("RESULT ok=" + ok + " errors=" + (errors + 1));
                        System.exit(3);
                    }
                    final String got = await(sub, assembler, idle, Common.deadline(timeoutMs));
                    if (null == got)
                    {
                        System.err.println("no reply to " + step[0].replace("\r\n", " "));
                        Common.line("RESULT ok=" + ok + " errors=" + (errors + 1));
                        System.exit(3);
                    }
                    if (got.equals(step[1]))
                    {
                        ok++;
                    }
                    else if (errors++ < 10)
                    {
                        System.err.println("reply " + got.replace("\r\n", "\\r\\n") + ", want " +
                            step[1].replace("\r\n", "\\r\\n"));
                    }
                }
            }
        }
        Common.line("RESULT ok=" + ok + " errors=" + errors);
        System.exit(errors > 0 ? 2 : 0);
    }

    private static String resp(final String... parts)
    {
        final StringBuilder b = new StringBuilder("*" + parts.length + "\r\n");
        for (final String p : parts)
        {
            b.append('$').append(p.length()).append("\r\n").append(p).append("\r\n");
        }
        return b.toString();
    }

    private static String await(
        final Subscription sub, final FragmentAssembler assembler, final IdleStrategy idle, final long deadlineNs)
    {
        reply = null;
        final IdleStrategy wait = new SleepingMillisIdleStrategy(1);
        while (null == reply)
        {
            final int n = sub.poll(assembler, 1);
            if (0 == n && Common.past(deadlineNs))
            {
                return null;
            }
            if (0 == n && !sub.isConnected())
            {
                wait.idle();
            }
            else
            {
                idle.idle(n);
            }
        }
        return reply;
    }
}
