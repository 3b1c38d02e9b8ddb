/*
 * Subscriber receives count= messages on channel=/stream= and checks every
 * byte: message k must be size= bytes long (if size= is given) and carry
 * Common.pattern for sequence number k. Fragmented messages are reassembled.
 *
 * Lines: "READY registration=R" once subscribed, "IMAGE session=S
 * source=..." when a publisher connects, and
 * "RESULT received=N bytes=B errors=E" at the end. Exit status 0 when all
 * messages arrived intact, 2 on corrupt data, 3 on timeout (timeoutMs=).
 */
package dev.goblin.interop;

import io.aeron.Aeron;
import io.aeron.FragmentAssembler;
import io.aeron.Subscription;
import io.aeron.logbuffer.FragmentHandler;
import org.agrona.concurrent.IdleStrategy;

public final class Subscriber
{
    private static long received;
    private static long bytes;
    private static long errors;

    public static void main(final String[] argv)
    {
        final Common.Args args = new Common.Args(argv);
        final String channel = args.str("channel", "aeron:ipc");
        final int stream = args.i32("stream", 1001);
        final long count = args.i64("count", 1000);
        final int size = args.i32("size", -1);
        final int[] sizes = Common.sizes(args, size);
        final long timeoutMs = args.i64("timeoutMs", 60_000);
        final IdleStrategy idle = Common.idle(args.str("idle", "backoff"));

        final FragmentHandler check = (buffer, offset, length, header) ->
        {
            final long seq = received++;
            bytes += length;
            final int want = Common.sizeOf(seq, sizes[0], sizes[1]);
            if (want >= 0 && length != want)
            {
                if (errors++ < 10)
                {
                    System.err.println("message " + seq + ": length " + length + ", want " + want);
                }
                return;
            }
            final int bad = Common.check(buffer, offset, length, seq);
            if (bad >= 0 && errors++ < 10)
            {
                System.err.println("message " + seq + ": byte " + bad + " breaks the pattern");
            }
        };
        final FragmentAssembler assembler = new FragmentAssembler(check);

        try (Aeron aeron = Common.connect(args);
            Subscription sub = aeron.addSubscription(channel, stream,
                image -> Common.line("IMAGE session=" + image.sessionId() + " source=" + image.sourceIdentity()),
                image -> {}))
        {
            Common.line("READY registration=" + sub.registrationId());
            final long deadline = Common.deadline(timeoutMs);
            while (received < count)
            {
                final int n = sub.poll(assembler, 256);
                if (0 == n && Common.past(deadline))
                {
                    break;
                }
                idle.idle(n);
            }
        }
        Common.line("RESULT received=" + received + " bytes=" + bytes + " errors=" + errors);
        System.exit(errors > 0 ? 2 : received < count ? 3 : 0);
    }
}
