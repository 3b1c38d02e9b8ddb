/*
 * Pong echoes every message from channel=/stream= (default aeron:ipc, 1002)
 * back on pongChannel=/pongStream= (default the same channel, 1003), with
 * tryClaim for messages that fit one frame. It runs until stdin reaches EOF
 * (or count= messages when given).
 *
 * Lines: "READY" once subscribed and publishing, "RESULT echoed=N" at the
 * end. idle= picks the wait between polls (default spin).
 */
package dev.goblin.interop;

import io.aeron.Aeron;
import io.aeron.FragmentAssembler;
import io.aeron.Publication;
import io.aeron.Subscription;
import io.aeron.logbuffer.BufferClaim;
import io.aeron.logbuffer.FragmentHandler;
import org.agrona.concurrent.IdleStrategy;

public final class Pong
{
    private static long echoed;

    public static void main(final String[] argv)
    {
        final Common.Args args = new Common.Args(argv);
        final Common.PingPong streams = Common.PingPong.of(args);
        final long count = args.i64("count", Long.MAX_VALUE);
        final IdleStrategy idle = Common.idle(args.str("idle", "spin"));
        final IdleStrategy offerIdle = Common.idle(args.str("idle", "spin"));
        final var stdinClosed = Common.stdinClosed();

        try (Aeron aeron = Common.connect(args);
            Subscription sub = aeron.addSubscription(streams.channel(), streams.stream());
            Publication pub = aeron.addExclusivePublication(streams.pongChannel(), streams.pongStream()))
        {
            final BufferClaim claim = new BufferClaim();
            final FragmentHandler echo = (buffer, offset, length, header) ->
            {
                offerIdle.reset();
                if (length <= pub.maxPayloadLength())
                {
                    long r;
                    while ((r = pub.tryClaim(length, claim)) <= 0)
                    {
                        if (r == Publication.CLOSED || r == Publication.MAX_POSITION_EXCEEDED)
                        {
                            throw new IllegalStateException("pong publication " + Common.status(r));
                        }
                        offerIdle.idle();
                    }
                    claim.buffer().putBytes(claim.offset(), buffer, offset, length);
                    claim.commit();
                }
                else
                {
                    long r;
                    while ((r = pub.offer(buffer, offset, length)) <= 0)
                    {
                        if (r == Publication.CLOSED || r == Publication.MAX_POSITION_EXCEEDED)
                        {
                            throw new IllegalStateException("pong publication " + Common.status(r));
                        }
                        offerIdle.idle();
                    }
                }
                echoed++;
            };
            final FragmentAssembler assembler = new FragmentAssembler(echo);
            Common.line("READY");
            int polls = 0;
            while (echoed < count)
            {
                final int n = sub.poll(assembler, 16);
                if ((++polls & 0xfff) == 0 && stdinClosed.get())
                {
                    break;
                }
                idle.idle(n);
            }
        }
        Common.line("RESULT echoed=" + echoed);
    }
}
