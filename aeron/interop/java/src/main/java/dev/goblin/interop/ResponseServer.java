/*
 * ResponseServer answers each client on its own response channel, the way
 * goblin's Aeron transport does. It subscribes to channel=/stream= (the
 * request channel, default aeron:ipc, 1005); for every client image it adds
 * an exclusive publication on respChannel=/respStream= (default
 * aeron:ipc?control-mode=response, 1006) with
 * response-correlation-id=<image correlation id>, and replies to each
 * request with its bitwise complement (so a reply proves the server read
 * every byte). For UDP: channel=aeron:udp?endpoint=HOST:REQ_PORT and
 * respChannel=aeron:udp?control-mode=response|control=HOST:RESP_PORT, HOST
 * being the server's own address.
 *
 * Lines: "READY registration=R", "CLIENT session=S correlation=C" per new
 * client, "RESULT requests=N clients=M" at the end. It runs until stdin
 * reaches EOF, or count= requests when given.
 */
package dev.goblin.interop;

import io.aeron.Aeron;
import io.aeron.ExclusivePublication;
import io.aeron.FragmentAssembler;
import io.aeron.Image;
import io.aeron.Subscription;
import io.aeron.logbuffer.FragmentHandler;
import org.agrona.ExpandableDirectByteBuffer;
import org.agrona.collections.Int2ObjectHashMap;
import org.agrona.concurrent.IdleStrategy;

import java.util.concurrent.ConcurrentLinkedQueue;

public final class ResponseServer
{
    private static Aeron aeron;
    private static String respChannel;
    private static int respStream;
    private static long requests;
    private static long clients;
    private static final Int2ObjectHashMap<ExclusivePublication> REPLIES = new Int2ObjectHashMap<>();
    private static final ConcurrentLinkedQueue<Image> ARRIVED = new ConcurrentLinkedQueue<>();
    private static final ConcurrentLinkedQueue<Image> LEFT = new ConcurrentLinkedQueue<>();

    public static void main(final String[] argv)
    {
        final Common.Args args = new Common.Args(argv);
        final String channel = args.str("channel", "aeron:ipc");
        final int stream = args.i32("stream", 1005);
        respChannel = args.str("respChannel", "aeron:ipc?control-mode=response");
        respStream = args.i32("respStream", 1006);
        final long count = args.i64("count", Long.MAX_VALUE);
        final long timeoutMs = args.i64("timeoutMs", 30_000);
        final IdleStrategy idle = Common.idle(args.str("idle", "backoff"));
        final IdleStrategy offerIdle = Common.idle(args.str("idle", "backoff"));
        final var stdinClosed = Common.stdinClosed();
        final ExpandableDirectByteBuffer reply = new ExpandableDirectByteBuffer(4096);

        final FragmentHandler onRequest = (buffer, offset, length, header) ->
        {
            ExclusivePublication pub = REPLIES.get(header.sessionId());
            if (null == pub)
            {
                addArrivals(); // the image handler may not have been drained yet
                pub = REPLIES.get(header.sessionId());
                if (null == pub)
                {
                    System.err.println("request from unknown session " + header.sessionId());
                    return;
                }
            }
            for (int j = 0; j < length; j++)
            {
                reply.putByte(j, (byte)~buffer.getByte(offset + j));
            }
            final long r = Common.offer(pub, reply, length, offerIdle, Common.deadline(timeoutMs));
            if (r < 0)
            {
                System.err.println("reply to session " + header.sessionId() + " failed: " + Common.status(r));
            }
            requests++;
        };
        final FragmentAssembler assembler = new FragmentAssembler(onRequest);

        try (Aeron a = Common.connect(args);
            Subscription sub = a.addSubscription(channel, stream, ARRIVED::add, LEFT::add))
        {
            aeron = a;
            Common.line("READY registration=" + sub.registrationId());
            int polls = 0;
            while (requests < count)
            {
                addArrivals();
                Image gone;
                while (null != (gone = LEFT.poll()))
                {
                    final ExclusivePublication pub = REPLIES.remove(gone.sessionId());
                    if (null != pub)
                    {
                        pub.close();
                    }
                }
                final int n = sub.poll(assembler, 16);
                if ((++polls & 0xff) == 0 && stdinClosed.get())
                {
                    break;
                }
                idle.idle(n);
            }
            REPLIES.values().forEach(ExclusivePublication::close);
        }
        Common.line("RESULT requests=" + requests + " clients=" + clients);
    }

    private static void addArrivals()
    {
        Image image;
        while (null != (image = ARRIVED.poll()))
        {
            final String ch = Common.withParam(respChannel, "response-correlation-id",
                Long.toString(image.correlationId()));
            final ExclusivePublication pub = aeron.addExclusivePublication(ch, respStream);
            REPLIES.put(image.sessionId(), pub);
            clients++;
            Common.line("CLIENT session=" + image.sessionId() + " correlation=" + image.correlationId());
        }
    }
}
