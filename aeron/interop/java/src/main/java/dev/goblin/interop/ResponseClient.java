/*
 * ResponseClient is the client half of a response-channel pair: it first
 * subscribes to respChannel=/respStream= (default
 * aeron:ipc?control-mode=response, 1006), then publishes requests on
 * channel=/stream= (default aeron:ipc, 1005) with
 * response-correlation-id=<that subscription's registration id>, so the
 * server's driver can route replies back to it. For UDP:
 * respChannel=aeron:udp?control-mode=response|control=SERVER:RESP_PORT and
 * channel=aeron:udp?endpoint=SERVER:REQ_PORT.
 *
 * It sends count= requests of size= bytes (Common.pattern, sequence i), one
 * at a time, and checks that each reply is the request's bitwise
 * complement. Lines: "READY" when both directions are connected, then
 * "RESULT requests=N errors=E". Exit status 0, 2 on a bad reply, 3 on
 * timeout (timeoutMs=).
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

public final class ResponseClient
{
    private static long seq;
    private static long replied;
    private static long errors;

    public static void main(final String[] argv)
    {
        final Common.Args args = new Common.Args(argv);
        final String channel = args.str("channel", "aeron:ipc");
        final int stream = args.i32("stream", 1005);
        final String respChannel = args.str("respChannel", "aeron:ipc?control-mode=response");
        final int respStream = args.i32("respStream", 1006);
        final long count = args.i64("count", 100);
        final int size = args.i32("size", 32);
        final int[] sizes = Common.sizes(args, size);
        final long timeoutMs = args.i64("timeoutMs", 30_000);
        final IdleStrategy idle = Common.idle(args.str("idle", "backoff"));

        final int window = args.i32("window", 1);
        final FragmentHandler onReply = (buffer, offset, length, header) ->
        {
            final long r = replied++;
            boolean ok = length == Common.sizeOf(r, sizes[0], sizes[1]);
            for (int j = 0; ok && j < length; j++)
            {
                ok = buffer.getByte(offset + j) == (byte)~Common.pattern(r, j);
            }
            if (!ok && errors++ < 10)
            {
                System.err.println("reply " + r + " (length " + length + ") is not the request's complement");
            }
        };
        final FragmentAssembler assembler = new FragmentAssembler(onReply);

        try (Aeron aeron = Common.connect(args);
            Subscription sub = aeron.addSubscription(respChannel, respStream);
            ExclusivePublication pub = aeron.addExclusivePublication(
                Common.withParam(channel, "response-correlation-id", Long.toString(sub.registrationId())), stream))
        {
            final long deadline = Common.deadline(timeoutMs);
            Common.awaitConnected(pub, deadline, "request publication");
            final IdleStrategy wait = new SleepingMillisIdleStrategy(1);
            while (!sub.isConnected())
            {
                if (Common.past(deadline))
                {
                    System.err.println("timed out waiting for the response channel");
                    Common.line("RESULT requests=0 errors=" + errors);
                    System.exit(3);
                }
                wait.idle();
            }
            Common.line("READY");
            // Up to window= requests in flight; replies come back in order.
            final UnsafeBuffer buf = Common.buffer(sizes[1]);
            long progressDeadline = Common.deadline(timeoutMs);
            while (replied < count)
            {
                int work = 0;
                while (seq < count && seq - replied < window)
                {
                    final int length = Common.sizeOf(seq, sizes[0], sizes[1]);
                    Common.fill(buf, 0, seq, length);
                    final long r = pub.offer(buf, 0, length);
                    if (r < 0)
                    {
                        if (r == io.aeron.Publication.CLOSED || r == io.aeron.Publication.MAX_POSITION_EXCEEDED)
                        {
                            System.err.println("request " + seq + " failed: " + Common.status(r));
                            System.exit(1);
                        }
                        break;
                    }
                    seq++;
                    work++;
                }
                final int n = sub.poll(assembler, 64);
                if (n + work > 0)
                {
                    progressDeadline = Common.deadline(timeoutMs);
                }
                else if (Common.past(progressDeadline))
                {
                    System.err.println("no progress: " + seq + " requests sent, " + replied + " replies");
                    Common.line("RESULT requests=" + replied + " errors=" + errors);
                    System.exit(3);
                }
                idle.idle(n + work);
            }
        }
        Common.line("RESULT requests=" + count + " errors=" + errors);
        System.exit(errors > 0 ? 2 : 0);
    }
}
