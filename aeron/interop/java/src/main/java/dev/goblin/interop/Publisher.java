/*
 * Publisher sends count= messages of size= bytes on channel=/stream=, each
 * filled with Common.pattern for its sequence number (messages larger than
 * the publication's max payload are fragmented by the client).
 *
 * Lines: "READY session=S maxPayload=P" once the publication is added,
 * "RESULT sent=N bytes=B position=P" when every message is offered. It then
 * keeps the publication open until stdin reaches EOF (await=stdin, the
 * default, so the Go test decides when the data has been read) or for
 * linger= milliseconds (await=linger). Exit status 0, or 1 on failure.
 */
package dev.goblin.interop;

import io.aeron.Aeron;
import io.aeron.Publication;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.SleepingMillisIdleStrategy;
import org.agrona.concurrent.UnsafeBuffer;

public final class Publisher
{
    public static void main(final String[] argv) throws Exception
    {
        final Common.Args args = new Common.Args(argv);
        final String channel = args.str("channel", "aeron:ipc");
        final int stream = args.i32("stream", 1001);
        final long count = args.i64("count", 1000);
        final int size = args.i32("size", 32);
        final int[] sizes = Common.sizes(args, size);
        final boolean exclusive = args.bool("exclusive", false);
        final long timeoutMs = args.i64("timeoutMs", 60_000);
        final IdleStrategy idle = Common.idle(args.str("idle", "backoff"));

        try (Aeron aeron = Common.connect(args);
            Publication pub = exclusive ?
                aeron.addExclusivePublication(channel, stream) : aeron.addPublication(channel, stream))
        {
            Common.line("READY session=" + pub.sessionId() + " maxPayload=" + pub.maxPayloadLength() +
                " maxMessage=" + pub.maxMessageLength());
            Common.awaitConnected(pub, Common.deadline(timeoutMs), "publication");

            final UnsafeBuffer buf = Common.buffer(sizes[1]);
            long bytes = 0;
            long position = 0;
            for (long seq = 0; seq < count; seq++)
            {
                final int length = Common.sizeOf(seq, sizes[0], sizes[1]);
                Common.fill(buf, 0, seq, length);
                position = Common.offer(pub, buf, length, idle, Common.deadline(timeoutMs));
                if (position < 0)
                {
                    System.err.println("offer of message " + seq + " failed: " + Common.status(position));
                    System.exit(1);
                }
                bytes += length;
            }
            Common.line("RESULT sent=" + count + " bytes=" + bytes + " position=" + position);

            if ("linger".equals(args.str("await", "stdin")))
            {
                Thread.sleep(args.i64("linger", 1000));
            }
            else
            {
                final var closed = Common.stdinClosed();
                final IdleStrategy wait = new SleepingMillisIdleStrategy(1);
                while (!closed.get())
                {
                    wait.idle();
                }
            }
        }
    }
}
