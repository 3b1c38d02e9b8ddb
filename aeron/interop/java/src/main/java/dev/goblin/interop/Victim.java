/*
 * Victim holds every kind of resource a client can own — a subscription, a
 * counter and a concurrent publication — and publishes on it until it is
 * killed, so the Go tests can SIGKILL it mid-publication and watch the
 * driver clean up after it.
 *
 * Arguments: stream= (publication), subStream= (subscription), size=.
 * Lines: "READY client=C counter=K publication=P subscription=S" once
 * everything is added and the publication is connected.
 */
package dev.goblin.interop;

import io.aeron.Aeron;
import io.aeron.Counter;
import io.aeron.Publication;
import io.aeron.Subscription;
import org.agrona.concurrent.UnsafeBuffer;

public final class Victim
{
    public static void main(final String[] argv)
    {
        final Common.Args args = new Common.Args(argv);
        final int stream = args.i32("stream", 1001);
        final int subStream = args.i32("subStream", 1002);
        final int size = args.i32("size", 64);
        final Aeron aeron = Common.connect(args);
        final Subscription sub = aeron.addSubscription("aeron:ipc?term-length=64k", subStream);
        final Counter counter = aeron.addCounter(1001, "victim counter");
        final Publication pub = aeron.addPublication("aeron:ipc?term-length=64k", stream);
        Common.awaitConnected(pub, Common.deadline(60_000), "victim publication");
        Common.line("READY client=" + aeron.clientId() + " counter=" + counter.id() + " publication=" +
            pub.registrationId() + " subscription=" + sub.registrationId());
        final UnsafeBuffer buf = Common.buffer(size);
        for (long seq = 0; ; seq++)
        {
            Common.fill(buf, 0, seq, size);
            while (pub.offer(buf, 0, size) < 0)
            {
                Thread.onSpinWait();
            }
            counter.increment();
            sub.poll((b, o, l, h) -> { }, 10);
        }
    }
}
