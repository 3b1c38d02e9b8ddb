/*
 * DriverScenarios exercises a media driver through the unchanged Java client,
 * one scenario after another in one JVM, and prints what it saw, so the Go
 * tests can run the same program against goblin's Go driver and against the
 * Java driver and demand the same results.
 *
 * Scenarios (all IPC): concurrent (two publishers sharing one concurrent
 * publication), exclusive, claim (tryClaim on both kinds), fragments (sizes
 * up to the max message length), controlled (controlled poll actions),
 * counters (client and static counters, the counters reader, the unavailable
 * counter handler), response (an IPC response channel), unavailable (the
 * image goes when its publisher closes), errors (error codes for refused
 * commands), session (explicit session ids, clashes, nextSessionId), and on
 * loopback UDP: busyport (a subscription on a port another socket holds fails
 * with "Address already in use", then succeeds once the port is free), tags
 * (a channel naming an endpoint's tag with another endpoint or control mode
 * is refused), sockbuf (so-rcvbuf equal to the driver's default, rcvbuf=,
 * matches an endpoint that took the default implicitly).
 *
 * Arguments: scenarios=a,b,... (default all), term=<term-length> (default
 * 64k), timeoutMs=. Lines: "PASS <name> <details>" or "FAIL <name> <reason>"
 * per scenario, then "RESULT pass=N fail=M". Exit status 0 when all passed.
 */
package dev.goblin.interop;

import io.aeron.Aeron;
import io.aeron.ConcurrentPublication;
import io.aeron.Counter;
import io.aeron.ErrorCode;
import io.aeron.ExclusivePublication;
import io.aeron.FragmentAssembler;
import io.aeron.Image;
import io.aeron.Publication;
import io.aeron.Subscription;
import io.aeron.driver.status.SystemCounterDescriptor;
import io.aeron.exceptions.RegistrationException;
import io.aeron.logbuffer.BufferClaim;
import io.aeron.logbuffer.ControlledFragmentHandler;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.SleepingMillisIdleStrategy;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.CountersReader;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

public final class DriverScenarios
{
    private static final ConcurrentLinkedQueue<String> EVENTS = new ConcurrentLinkedQueue<>();
    private static long timeoutMs;
    private static String term;
    private static String rcvbuf;
    private static int wildcardBase;
    private static int rejectPort;
    private static int nextStream = 2000;

    private static final class Failure extends RuntimeException
    {
        private static final long serialVersionUID = 1L;

        Failure(final String msg)
        {
            super(msg);
        }
    }

    private interface Scenario
    {
        String run(Aeron aeron) throws Exception;
    }

    public static void main(final String[] argv)
    {
        final Common.Args args = new Common.Args(argv);
        timeoutMs = args.i64("timeoutMs", 60_000);
        term = args.str("term", "64k");
        rcvbuf = args.str("rcvbuf", "128k");
        wildcardBase = args.i32("wildcardBase", 0);
        rejectPort = args.i32("rejectPort", 24341);
        final String only = args.str("scenarios",
            "concurrent,exclusive,claim,fragments,controlled,counters,response,unavailable,errors,session," +
            "busyport,tags,sockbuf,mds,timestamps,mergedmds");

        final Aeron.Context ctx = new Aeron.Context()
            .errorHandler(t -> EVENTS.add("error " + t))
            .availableCounterHandler((r, reg, id) -> EVENTS.add("counter-available " + reg + " " + id))
            .unavailableCounterHandler((r, reg, id) -> EVENTS.add("counter-unavailable " + reg + " " + id))
            .driverTimeoutMs(args.i64("driverTimeoutMs", 20_000));
        final String dir = args.str("dir", null);
        if (null != dir)
        {
            ctx.aeronDirectoryName(dir);
        }

        int pass = 0;
        int fail = 0;
        try (Aeron aeron = Aeron.connect(ctx))
        {
            Common.line("READY client=" + aeron.clientId());
            for (final String name : only.split(","))
            {
                final Scenario s = scenario(name);
                try
                {
                    final String details = s.run(aeron);
                    Common.line("PASS " + name + " " + details);
                    pass++;
                }
                catch (final Throwable t)
                {
                    Common.line("FAIL " + name + " " + t);
                    t.printStackTrace();
                    fail++;
                }
            }
        }
        Common.line("RESULT pass=" + pass + " fail=" + fail);
        System.exit(0 == fail ? 0 : 1);
    }

    private static Scenario scenario(final String name)
    {
        return switch (name)
        {
            case "concurrent" -> DriverScenarios::concurrent;
            case "exclusive" -> DriverScenarios::exclusive;
            case "claim" -> DriverScenarios::claim;
            case "fragments" -> DriverScenarios::fragments;
            case "controlled" -> DriverScenarios::controlled;
            case "counters" -> DriverScenarios::counters;
            case "response" -> DriverScenarios::response;
            case "unavailable" -> DriverScenarios::unavailable;
            case "errors" -> DriverScenarios::errors;
            case "session" -> DriverScenarios::session;
            case "busyport" -> DriverScenarios::busyPort;
            case "tags" -> DriverScenarios::tags;
            case "sockbuf" -> DriverScenarios::sockbuf;
            case "mds" -> DriverScenarios::mds;
            case "timestamps" -> DriverScenarios::timestamps;
            case "mediatimestamps" -> DriverScenarios::mediaTimestamps;
            case "wildcardports" -> DriverScenarios::wildcardPorts;
            case "mergedmds" -> DriverScenarios::mergedMds;
            case "rejectimage" -> DriverScenarios::rejectImage;
            default -> throw new IllegalArgumentException("unknown scenario " + name);
        };
    }

    private static String ipc()
    {
        return "aeron:ipc?term-length=" + term;
    }

    private static int stream()
    {
        return nextStream++;
    }

    private static void check(final boolean ok, final String what)
    {
        if (!ok)
        {
            throw new Failure(what);
        }
    }

    private static void await(final String what, final BooleanSupplier cond)
    {
        final long deadline = Common.deadline(timeoutMs);
        final IdleStrategy idle = new SleepingMillisIdleStrategy(1);
        while (!cond.getAsBoolean())
        {
            if (Common.past(deadline))
            {
                throw new Failure("timed out waiting for " + what);
            }
            idle.idle();
        }
    }

    private static long offer(final Publication pub, final DirectBuffer buf, final int length)
    {
        final long r = Common.offer(pub, buf, length, new SleepingMillisIdleStrategy(1), Common.deadline(timeoutMs));
        check(r > 0, "offer failed: " + Common.status(r));
        return r;
    }

    /** Receives count pattern messages of the given sizes (any order of sequence numbers per publisher). */
    private static final class Receiver
    {
        final List<Long> seqs = new ArrayList<>();
        long bytes;
        int corrupt;

        void onMessage(final DirectBuffer buffer, final int offset, final int length, final long seq)
        {
            if (Common.check(buffer, offset, length, seq) != -1)
            {
                corrupt++;
            }
            seqs.add(seq);
            bytes += length;
        }
    }

    /** Runs publish on its own thread while this thread receives, so back pressure cannot stall the test. */
    private static Receiver publishAndReceive(
        final Subscription sub, final int count, final int[] sizes, final Runnable publish)
    {
        final Throwable[] failed = new Throwable[1];
        final Thread t = new Thread(() ->
        {
            try
            {
                publish.run();
            }
            catch (final Throwable ex)
            {
                failed[0] = ex;
            }
        }, "publisher");
        t.start();
        try
        {
            return receive(sub, count, sizes);
        }
        finally
        {
            joinQuietly(t);
            if (null != failed[0])
            {
                throw new Failure("publisher: " + failed[0]);
            }
        }
    }

    private static Receiver receive(final Subscription sub, final int count, final int[] sizes)
    {
        final Receiver r = new Receiver();
        final FragmentAssembler assembler = new FragmentAssembler((buffer, offset, length, header) ->
        {
            // The first 8 bytes carry the sequence number; the pattern covers the rest.
            final long seq = buffer.getLong(offset);
            r.onMessage(buffer, offset + 8, length - 8, seq);
            if (null != sizes && length != sizes[(int)(seq % sizes.length)])
            {
                r.corrupt++;
            }
        });
        await(count + " messages", () ->
        {
            sub.poll(assembler, 100);
            return r.seqs.size() >= count;
        });
        check(0 == r.corrupt, r.corrupt + " corrupt messages");
        return r;
    }

    private static void fillMessage(final UnsafeBuffer buf, final long seq, final int length)
    {
        buf.putLong(0, seq);
        Common.fill(buf, 8, seq, length - 8);
    }

    private static String concurrent(final Aeron aeron)
    {
        final int stream = stream();
        try (Subscription sub = aeron.addSubscription(ipc(), stream);
            ConcurrentPublication a = aeron.addPublication(ipc(), stream);
            ConcurrentPublication b = aeron.addPublication(ipc(), stream))
        {
            check(a.sessionId() == b.sessionId(), "two concurrent adds got sessions " + a.sessionId() + " and " +
                b.sessionId());
            check(a.originalRegistrationId() == b.originalRegistrationId() &&
                a.registrationId() != b.registrationId(), "shared publication registration ids");
            await("image", () -> 1 == sub.imageCount());
            check(a.isConnected() && b.isConnected(), "publications not connected");
            final int count = 2000;
            final int[] sizes = {16, 100, 256};
            final Thread other = new Thread(() ->
            {
                final UnsafeBuffer ob = Common.buffer(256);
                for (int i = 1; i < count; i += 2)
                {
                    fillMessage(ob, i, sizes[i % 3]);
                    offer(b, ob, sizes[i % 3]);
                }
            });
            other.start();
            final Receiver r = publishAndReceive(sub, count, sizes, () ->
            {
                final UnsafeBuffer buf = Common.buffer(256);
                for (int i = 0; i < count; i += 2)
                {
                    fillMessage(buf, i, sizes[i % 3]);
                    offer(a, buf, sizes[i % 3]);
                }
            });
            joinQuietly(other);
            final boolean[] seen = new boolean[count];
            for (final long s : r.seqs)
            {
                check(!seen[(int)s], "message " + s + " twice");
                seen[(int)s] = true;
            }
            return "messages=" + r.seqs.size() + " bytes=" + r.bytes + " session-shared=true";
        }
    }

    private static void joinQuietly(final Thread t)
    {
        try
        {
            t.join();
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
    }

    private static String exclusive(final Aeron aeron)
    {
        final int stream = stream();
        try (Subscription sub = aeron.addSubscription(ipc(), stream);
            ExclusivePublication a = aeron.addExclusivePublication(ipc(), stream);
            ExclusivePublication b = aeron.addExclusivePublication(ipc(), stream))
        {
            check(a.sessionId() != b.sessionId(), "two exclusive publications share session " + a.sessionId());
            await("two images", () -> 2 == sub.imageCount());
            final int count = 3000;
            final Receiver r = publishAndReceive(sub, count, null, () ->
            {
                final UnsafeBuffer buf = Common.buffer(200);
                for (int i = 0; i < count; i++)
                {
                    fillMessage(buf, i, 8 + i % 190);
                    offer(0 == i % 2 ? a : b, buf, 8 + i % 190);
                }
            });
            return "messages=" + r.seqs.size() + " bytes=" + r.bytes + " images=2";
        }
    }

    private static String claim(final Aeron aeron)
    {
        final int stream = stream();
        try (Subscription sub = aeron.addSubscription(ipc(), stream);
            ConcurrentPublication c = aeron.addPublication(ipc(), stream);
            ExclusivePublication e = aeron.addExclusivePublication(ipc(), stream))
        {
            await("two images", () -> 2 == sub.imageCount());
            final int count = 1000;
            final int size = c.maxPayloadLength();
            final Receiver r = publishAndReceive(sub, count, null, () ->
            {
                final BufferClaim claim = new BufferClaim();
                for (int i = 0; i < count; i++)
                {
                    final Publication p = 0 == i % 2 ? c : e;
                    final int length = 0 == i % 3 ? size : 8 + i % 64;
                    final long deadline = Common.deadline(timeoutMs);
                    long res;
                    while ((res = p.tryClaim(length, claim)) < 0)
                    {
                        check(!Common.past(deadline) && res != Publication.CLOSED, "tryClaim: " + Common.status(res));
                        Thread.onSpinWait();
                    }
                    final var b = claim.buffer();
                    b.putLong(claim.offset(), i);
                    for (int j = 0; j < length - 8; j++)
                    {
                        b.putByte(claim.offset() + 8 + j, Common.pattern(i, j));
                    }
                    claim.commit();
                }
            });
            return "messages=" + r.seqs.size() + " bytes=" + r.bytes + " maxPayload=" + size;
        }
    }

    private static String fragments(final Aeron aeron)
    {
        final int stream = stream();
        try (Subscription sub = aeron.addSubscription(ipc(), stream);
            ExclusivePublication pub = aeron.addExclusivePublication(ipc(), stream))
        {
            await("image", () -> 1 == sub.imageCount());
            final int max = pub.maxMessageLength();
            final int payload = pub.maxPayloadLength();
            final int[] sizes = {payload, payload + 1, 2 * payload + 7, max - 1, max};
            final int count = 40;
            final Receiver r = publishAndReceive(sub, count, sizes, () ->
            {
                final UnsafeBuffer buf = Common.buffer(max);
                for (int i = 0; i < count; i++)
                {
                    fillMessage(buf, i, sizes[i % sizes.length]);
                    offer(pub, buf, sizes[i % sizes.length]);
                }
            });
            return "messages=" + r.seqs.size() + " bytes=" + r.bytes + " maxMessage=" + max;
        }
    }

    private static String controlled(final Aeron aeron)
    {
        final int stream = stream();
        try (Subscription sub = aeron.addSubscription(ipc(), stream);
            ExclusivePublication pub = aeron.addExclusivePublication(ipc(), stream))
        {
            await("image", () -> 1 == sub.imageCount());
            final UnsafeBuffer buf = Common.buffer(64);
            final int count = 10;
            for (int i = 0; i < count; i++)
            {
                fillMessage(buf, i, 32);
                offer(pub, buf, 32);
            }
            final Image image = sub.imageAtIndex(0);
            await("messages published", () -> pub.position() >= 10 * 64);
            final List<Long> seen = new ArrayList<>();
            final AtomicInteger aborts = new AtomicInteger();
            // ABORT the first delivery of message 3, BREAK after message 5,
            // COMMIT message 7, CONTINUE otherwise.
            final ControlledFragmentHandler handler = (buffer, offset, length, header) ->
            {
                final long seq = buffer.getLong(offset);
                if (3 == seq && 0 == aborts.getAndIncrement())
                {
                    return ControlledFragmentHandler.Action.ABORT;
                }
                seen.add(seq);
                if (5 == seq)
                {
                    return ControlledFragmentHandler.Action.BREAK;
                }
                return 7 == seq ? ControlledFragmentHandler.Action.COMMIT : ControlledFragmentHandler.Action.CONTINUE;
            };
            final int first = image.controlledPoll(handler, 100);
            check(3 == first && image.position() == 3 * 64, "after ABORT: fragments=" + first + " position=" +
                image.position());
            final int second = image.controlledPoll(handler, 100);
            check(3 == second && image.position() == 6 * 64, "after BREAK: fragments=" + second + " position=" +
                image.position());
            final int third = image.controlledPoll(handler, 100);
            check(4 == third && image.position() == 10 * 64, "rest: fragments=" + third);
            for (int i = 0; i < count; i++)
            {
                check(seen.get(i) == i, "order " + seen);
            }
            return "fragments=" + first + "," + second + "," + third;
        }
    }

    private static String counters(final Aeron aeron)
    {
        final CountersReader reader = aeron.countersReader();
        final UnsafeBuffer key = new UnsafeBuffer(new byte[8]);
        key.putLong(0, 0x0123456789ABCDEFL);
        final UnsafeBuffer label = new UnsafeBuffer("goblin test counter".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
        final long staticReg = 424242;
        final int counterId;
        final long counterReg;
        try (Counter c = aeron.addCounter(1001, key, 0, 8, label, 0, label.capacity());
            Counter s1 = aeron.addStaticCounter(1002, "goblin static counter", staticReg);
            Counter s2 = aeron.addStaticCounter(1002, "goblin static counter", staticReg))
        {
            counterId = c.id();
            counterReg = c.registrationId();
            c.set(77);
            c.increment();
            check(78 == reader.getCounterValue(c.id()), "value " + reader.getCounterValue(c.id()));
            check(1001 == reader.getCounterTypeId(c.id()), "type " + reader.getCounterTypeId(c.id()));
            check("goblin test counter".equals(reader.getCounterLabel(c.id())), "label " + reader.getCounterLabel(c.id()));
            check(0x0123456789ABCDEFL == reader.metaDataBuffer().getLong(CountersReader.metaDataOffset(c.id()) +
                CountersReader.KEY_OFFSET), "key");
            check(aeron.clientId() == reader.getCounterOwnerId(c.id()), "owner " + reader.getCounterOwnerId(c.id()));
            check(c.registrationId() == reader.getCounterRegistrationId(c.id()), "registration id");
            check(s1.id() == s2.id(), "static counters " + s1.id() + " and " + s2.id());
            check(staticReg == reader.getCounterRegistrationId(s1.id()) && Aeron.NULL_VALUE ==
                reader.getCounterOwnerId(s1.id()), "static counter ids");
            check(CountersReader.RECORD_ALLOCATED == reader.getCounterState(43) &&
                0x10000 == reader.getCounterValue(43), "control protocol version counter");
            check(aeron.clientId() == reader.getCounterRegistrationId(heartbeatId(reader, aeron.clientId())),
                "client heartbeat counter");
        }
        await("counter unavailable", () -> EVENTS.contains("counter-unavailable " + counterReg + " " + counterId));
        check(CountersReader.RECORD_ALLOCATED != reader.getCounterState(counterId), "counter still allocated");
        try (Counter s3 = aeron.addStaticCounter(1002, "goblin static counter", staticReg))
        {
            check(CountersReader.RECORD_ALLOCATED == reader.getCounterState(s3.id()), "static counter freed with its handle");
        }
        return "counter=" + counterId + " static=shared";
    }

    private static int heartbeatId(final CountersReader reader, final long clientId)
    {
        final int[] found = {-1};
        reader.forEach((counterId, typeId, keyBuffer, label) ->
        {
            if (11 == typeId && clientId == keyBuffer.getLong(0))
            {
                found[0] = counterId;
            }
        });
        check(-1 != found[0], "no heartbeat counter for client " + clientId);
        return found[0];
    }

    private static String response(final Aeron aeron) throws Exception
    {
        final int reqStream = stream();
        final int rspStream = stream();
        final List<Image> serverImages = new ArrayList<>();
        try (Subscription responses = aeron.addSubscription("aeron:ipc?control-mode=response", rspStream);
            Subscription requests = aeron.addSubscription("aeron:ipc", reqStream, serverImages::add, img -> { });
            Publication request = aeron.addPublication(
                "aeron:ipc?response-correlation-id=" + responses.registrationId(), reqStream))
        {
            await("request image", () -> 1 == requests.imageCount());
            final Image image = requests.imageAtIndex(0);
            check(image.correlationId() == request.originalRegistrationId(), "request image id");
            check(0 == responses.imageCount(), "response subscription matched before a response publication");
            try (Publication response = aeron.addPublication(
                "aeron:ipc?control-mode=response|response-correlation-id=" + image.correlationId(), rspStream))
            {
                await("response image", () -> 1 == responses.imageCount());
                check(responses.imageAtIndex(0).sessionId() == response.sessionId(), "response session");
                final UnsafeBuffer buf = Common.buffer(64);
                fillMessage(buf, 0, 40);
                offer(request, buf, 40);
                final Receiver req = receive(requests, 1, null);
                fillMessage(buf, 1, 48);
                offer(response, buf, 48);
                final Receiver rsp = receive(responses, 1, null);
                check(req.seqs.get(0) == 0 && rsp.seqs.get(0) == 1, "request/response");
                return "request=1 response=1 responseSession=" + response.sessionId();
            }
        }
    }

    private static String unavailable(final Aeron aeron)
    {
        final int stream = stream();
        // The client conductor removes the image, then calls the handler:
        // wait for the handler, not only for the image count.
        final List<Long> gone = new CopyOnWriteArrayList<>();
        try (Subscription sub = aeron.addSubscription(ipc(), stream, img -> { }, img -> gone.add(img.correlationId())))
        {
            final long reg;
            try (ExclusivePublication pub = aeron.addExclusivePublication(ipc(), stream))
            {
                reg = pub.registrationId();
                await("image", () -> 1 == sub.imageCount());
                final UnsafeBuffer buf = Common.buffer(64);
                fillMessage(buf, 0, 64);
                offer(pub, buf, 64);
            }
            final Receiver r = receive(sub, 1, null);
            await("image unavailable", () -> 0 == sub.imageCount() && !gone.isEmpty());
            check(1 == gone.size() && gone.get(0) == reg, "unavailable images " + gone);
            return "messages=" + r.seqs.size() + " unavailable=1";
        }
    }

    /**
     * A subscriber rejects a UDP image (Image.reject): its driver sends the publication an error frame, and the
     * publication's driver counts it (Error Frames sent, received, Images rejected), tells the publisher and records
     * it as an error in the errors counter (15) and the error log, as the Java and C drivers both do. The caller
     * runs it on a fresh driver, so the errors counter moves for no other reason.
     */
    private static String rejectImage(final Aeron aeron)
    {
        final int stream = stream();
        final String channel = "aeron:udp?endpoint=127.0.0.1:" + rejectPort + "|term-length=" + term;
        final CountersReader counters = aeron.countersReader();
        final long errors = counters.getCounterValue(SystemCounterDescriptor.ERRORS.id());
        final long rejected = counters.getCounterValue(SystemCounterDescriptor.IMAGES_REJECTED.id());
        final long sent = counters.getCounterValue(SystemCounterDescriptor.ERROR_FRAMES_SENT.id());
        final long received = counters.getCounterValue(SystemCounterDescriptor.ERROR_FRAMES_RECEIVED.id());
        try (Publication pub = aeron.addPublication(channel, stream);
            Subscription sub = aeron.addSubscription(channel, stream))
        {
            await("publication and subscription connected", () -> pub.isConnected() && 1 == sub.imageCount());
            final UnsafeBuffer buf = Common.buffer(64);
            fillMessage(buf, 0, 64);
            offer(pub, buf, 64);
            receive(sub, 1, null);
            sub.imageAtIndex(0).reject("goblin rejects the image");
            await("Images rejected to move", () ->
                counters.getCounterValue(SystemCounterDescriptor.IMAGES_REJECTED.id()) > rejected);
            await("Error Frames sent and received to move", () ->
                counters.getCounterValue(SystemCounterDescriptor.ERROR_FRAMES_SENT.id()) > sent &&
                counters.getCounterValue(SystemCounterDescriptor.ERROR_FRAMES_RECEIVED.id()) > received);
            await("the errors counter to move", () ->
                counters.getCounterValue(SystemCounterDescriptor.ERRORS.id()) > errors);
        }
        return "rejected";
    }

    private static String errors(final Aeron aeron)
    {
        final int stream = stream();
        final StringBuilder codes = new StringBuilder();
        expectError(aeron, () -> aeron.addPublication("aeron:ipc?term-length=" + term + "|init-term-id=5", stream),
            ErrorCode.INVALID_CHANNEL, codes);
        expectError(aeron, () -> aeron.addPublication("aeron:ipc?term-length=" + term + "|stream-id=1", stream),
            ErrorCode.INVALID_CHANNEL, codes);
        expectError(aeron, () -> aeron.addPublication("aeron:ipc?term-length=" + term + "|mtu=80000", stream),
            ErrorCode.GENERIC_ERROR, codes);
        try (Publication p = aeron.addPublication("aeron:ipc?term-length=" + term + "|mtu=1408", stream))
        {
            expectError(aeron, () -> aeron.addPublication("aeron:ipc?term-length=" + term + "|mtu=4096", stream),
                ErrorCode.GENERIC_ERROR, codes);
            expectError(aeron, () -> aeron.addPublication("aeron:ipc?term-length=128k", stream),
                ErrorCode.GENERIC_ERROR, codes);
            check(p.isOriginal(), "first publication is not the original");
        }
        return "codes=" + codes;
    }

    private static String busyPort(final Aeron aeron) throws Exception
    {
        final int stream = stream();
        final String channel;
        try (java.net.DatagramSocket holder = new java.net.DatagramSocket(
            new java.net.InetSocketAddress("127.0.0.1", 0)))
        {
            channel = "aeron:udp?endpoint=127.0.0.1:" + holder.getLocalPort();
            try (Subscription s = aeron.addSubscription(channel, stream))
            {
                throw new Failure("subscription on a busy port accepted: " + channel);
            }
            catch (final RegistrationException ex)
            {
                check(ex.getMessage().contains("Address already in use"),
                    "busy port error does not say \"Address already in use\": " + ex.getMessage());
            }
        }
        try (Subscription s = aeron.addSubscription(channel, stream))
        {
            check(s.registrationId() > 0, "no registration");
        }
        return "refused-then-bound";
    }

    private static String tags(final Aeron aeron) throws Exception
    {
        final int stream = stream();
        final long tag = 7_000_000L + stream;
        final String details;
        try (Publication p = aeron.addPublication("aeron:udp?endpoint=127.0.0.1:24325|tags=" + tag, stream);
            Publication same = aeron.addPublication("aeron:udp?tags=" + tag, stream))
        {
            check(p.registrationId() == same.registrationId() || p.channelStatusId() == same.channelStatusId(),
                "tag-only channel did not share the tagged endpoint");
            final String endpointError = expectMessage(() -> aeron.addPublication(
                "aeron:udp?endpoint=127.0.0.1:24326|tags=" + tag, stream + 1), "mismatched endpoint or control");
            final String modeError = expectMessage(() -> aeron.addPublication(
                "aeron:udp?control-mode=manual|tags=" + tag, stream + 1), "mismatched control-mode");
            details = "pub=" + endpointError + "," + modeError;
        }
        try (Subscription s = aeron.addSubscription("aeron:udp?endpoint=127.0.0.1:0|tags=" + (tag + 1), stream);
            Subscription same = aeron.addSubscription("aeron:udp?tags=" + (tag + 1), stream + 1))
        {
            check(s.channelStatusId() == same.channelStatusId(), "tag-only subscription did not share the endpoint");
            final String endpointError = expectMessage(() -> aeron.addSubscription(
                "aeron:udp?endpoint=127.0.0.1:24327|tags=" + (tag + 1), stream + 2), "mismatched endpoint or control");
            return details + " sub=" + endpointError;
        }
    }

    private static String sockbuf(final Aeron aeron) throws Exception
    {
        final int stream = stream();
        final int port;
        try (java.net.DatagramSocket probe = new java.net.DatagramSocket(new java.net.InetSocketAddress("127.0.0.1", 0)))
        {
            port = probe.getLocalPort();
        }
        final String channel = "aeron:udp?endpoint=127.0.0.1:" + port;
        try (Subscription s = aeron.addSubscription(channel, stream);
            Subscription explicit = aeron.addSubscription(channel + "|so-rcvbuf=" + rcvbuf, stream + 1))
        {
            check(s.channelStatusId() == explicit.channelStatusId(), "so-rcvbuf=default did not share the endpoint");
            expectMessage(() -> aeron.addSubscription(channel + "|so-rcvbuf=192k", stream + 2), "so-rcvbuf");
        }
        return "so-rcvbuf=" + rcvbuf + " shared";
    }

    private static int freePort() throws Exception
    {
        try (java.net.DatagramSocket probe = new java.net.DatagramSocket(new java.net.InetSocketAddress("127.0.0.1", 0)))
        {
            return probe.getLocalPort();
        }
    }

    /**
     * A multi-destination subscription (control-mode=manual) with two UDP destinations; a manual MDC publication
     * sends every datagram to both (multipath), which make one image with two active transports. Half way through,
     * one destination is removed: every message still arrives once and in order.
     */
    private static String mds(final Aeron aeron) throws Exception
    {
        final int stream = stream();
        final String a = "aeron:udp?endpoint=127.0.0.1:" + freePort();
        final String b = "aeron:udp?endpoint=127.0.0.1:" + freePort();
        final int count = 4000;
        try (Subscription sub = aeron.addSubscription("aeron:udp?control-mode=manual", stream))
        {
            sub.addDestination(a);
            sub.addDestination(b);
            await("two local socket addresses", () -> 2 == sub.localSocketAddresses().size());
            try (ExclusivePublication pub = aeron.addExclusivePublication(
                "aeron:udp?control-mode=manual|term-length=" + term, stream))
            {
                pub.addDestination(a);
                pub.addDestination(b);
                await("connected", () -> pub.isConnected() && 1 == sub.imageCount());
                final Image image = sub.imageAtIndex(0);
                await("two active transports", () -> 2 == image.activeTransportCount());
                final UnsafeBuffer buf = new UnsafeBuffer(new byte[64]);
                final long[] next = { 0 };
                final int[] bad = { 0 };
                final FragmentAssembler asm = new FragmentAssembler((buffer, offset, length, header) ->
                {
                    if (buffer.getLong(offset) != next[0])
                    {
                        bad[0]++;
                    }
                    next[0]++;
                });
                long sent = 0;
                boolean removed = false;
                final long deadline = Common.deadline(timeoutMs);
                final IdleStrategy idle = new SleepingMillisIdleStrategy(1);
                while (next[0] < count)
                {
                    if (Common.past(deadline))
                    {
                        throw new Failure("timed out: sent " + sent + " received " + next[0]);
                    }
                    int work = 0;
                    if (sent < count)
                    {
                        buf.putLong(0, sent);
                        if (pub.offer(buf, 0, buf.capacity()) > 0)
                        {
                            sent++;
                            work++;
                        }
                    }
                    work += sub.poll(asm, 100);
                    if (!removed && next[0] >= count / 2)
                    {
                        sub.removeDestination(a);
                        removed = true;
                    }
                    idle.idle(work);
                }
                check(0 == bad[0], bad[0] + " messages lost, repeated or out of order");
                check(1 == sub.imageCount(), "images " + sub.imageCount());
                await("one local socket address", () -> 1 == sub.localSocketAddresses().size());
                await("one active transport", () -> 1 == image.activeTransportCount());
                return "multipath=2 removed-mid-stream count=" + count;
            }
        }
    }

    private static long epochNanos()
    {
        final java.time.Instant now = java.time.Instant.now();
        return now.getEpochSecond() * 1_000_000_000L + now.getNano();
    }

    /**
     * channel-snd-ts-offset=8 on a publication and channel-rcv-ts-offset=reserved on a subscription: each message
     * arrives with the sender's clock in payload bytes 8..16 and the receiver's in the reserved value, inside the
     * scenario's window (1 ms slack for the clocks' precision), the send no later than the receive; the other
     * payload bytes arrive as sent.
     */
    private static String timestamps(final Aeron aeron) throws Exception
    {
        final int stream = stream();
        final String endpoint = "aeron:udp?endpoint=127.0.0.1:" + freePort();
        try (Subscription sub = aeron.addSubscription(endpoint + "|channel-rcv-ts-offset=reserved", stream);
            ExclusivePublication pub = aeron.addExclusivePublication(
                endpoint + "|channel-snd-ts-offset=8|term-length=" + term, stream))
        {
            await("connected", () -> pub.isConnected() && 1 == sub.imageCount());
            final long slack = 1_000_000L;
            final long before = epochNanos() - slack;
            final UnsafeBuffer buf = new UnsafeBuffer(new byte[64]);
            for (int i = 0; i < buf.capacity(); i++)
            {
                buf.putByte(i, (byte)(i + 1));
            }
            final long[] stamps = new long[2];
            final int[] got = { 0 };
            final int[] bad = { 0 };
            for (int m = 0; m < 20; m++)
            {
                offer(pub, buf, buf.capacity());
                final int want = m + 1;
                await("message " + m, () ->
                {
                    sub.poll((buffer, offset, length, header) ->
                    {
                        for (int i = 0; i < length; i++)
                        {
                            if ((i < 8 || i >= 16) && buffer.getByte(offset + i) != (byte)(i + 1))
                            {
                                bad[0]++;
                            }
                        }
                        stamps[0] = buffer.getLong(offset + 8);
                        stamps[1] = header.reservedValue();
                        got[0]++;
                    }, 1);
                    return got[0] == want;
                });
                final long after = epochNanos() + slack;
                check(0 == bad[0], "payload bytes outside the stamp changed");
                check(stamps[0] >= before && stamps[0] <= after && stamps[1] >= stamps[0] && stamps[1] <= after,
                    "message " + m + ": send " + stamps[0] + " receive " + stamps[1] + " window " + before + ".." + after);
            }
            return "snd=payload+8 rcv=reserved count=20";
        }
    }

    /**
     * media-rcv-ts-offset=reserved on a subscription (the C driver's parameter; the Java driver refuses it): each
     * message arrives with the kernel's receive time in the reserved value, inside the scenario's window and no
     * earlier than the sender's channel-snd-ts-offset=8 stamp; then fragmented messages of 16 + 2 MTU bytes arrive
     * intact from byte 16 on (TimestampingSystemTest.shouldNotCorruptFragmentedMessagesWhenTimestampsAreEnabled).
     * Not in the default list: run it by name.
     */
    private static String mediaTimestamps(final Aeron aeron) throws Exception
    {
        final int stream = stream();
        final String endpoint = "aeron:udp?endpoint=127.0.0.1:" + freePort();
        try (Subscription sub = aeron.addSubscription(endpoint + "|media-rcv-ts-offset=reserved", stream);
            ExclusivePublication pub = aeron.addExclusivePublication(
                endpoint + "|channel-snd-ts-offset=8|term-length=" + term, stream))
        {
            await("connected", () -> pub.isConnected() && 1 == sub.imageCount());
            final long slack = 1_000_000L;
            final long before = epochNanos() - slack;
            final UnsafeBuffer buf = new UnsafeBuffer(new byte[64]);
            final long[] stamps = new long[2];
            final int[] got = { 0 };
            for (int m = 0; m < 20; m++)
            {
                offer(pub, buf, buf.capacity());
                final int want = m + 1;
                await("message " + m, () ->
                {
                    sub.poll((buffer, offset, length, header) ->
                    {
                        stamps[0] = buffer.getLong(offset + 8);
                        stamps[1] = header.reservedValue();
                        got[0]++;
                    }, 1);
                    return got[0] == want;
                });
                final long after = epochNanos() + slack;
                check(stamps[0] >= before && stamps[1] >= stamps[0] && stamps[1] <= after,
                    "message " + m + ": send " + stamps[0] + " media receive " + stamps[1] +
                    " window " + before + ".." + after);
            }
            final UnsafeBuffer big = new UnsafeBuffer(new byte[16 + pub.maxPayloadLength() * 2]);
            big.setMemory(0, big.capacity(), (byte)0xFF);
            final int[] bad = { 0 };
            final int[] whole = { 0 };
            final FragmentAssembler assembler = new FragmentAssembler((buffer, offset, length, header) ->
            {
                for (int i = 16; i < length; i++)
                {
                    if (buffer.getByte(offset + i) != (byte)0xFF)
                    {
                        bad[0]++;
                    }
                }
                whole[0]++;
            });
            for (int m = 0; m < 20; m++)
            {
                offer(pub, big, big.capacity());
                final int want = m + 1;
                await("fragmented message " + m, () ->
                {
                    sub.poll(assembler, 10);
                    return whole[0] == want;
                });
            }
            check(0 == bad[0], "fragmented messages corrupted past byte 16: " + bad[0] + " bytes");
            return "rcv=media-reserved count=20 fragmented=20";
        }
    }

    /**
     * Aeron's WildcardPortManagerSystemTest against a driver started with receiver wildcard port range
     * "B B+1" and sender range "B+2 B+2" (B = wildcardBase): two subscriptions at endpoint=127.0.0.1:0 resolve
     * to B and B+1, a third is refused naming the range, the second's port is given out again once it closes;
     * a dynamic MDC publication with control=127.0.0.1:0 gets B+2, a second is refused, and the port comes back
     * after the first closes. Not in the default list: run it by name with wildcardBase=B.
     */
    private static String wildcardPorts(final Aeron aeron) throws Exception
    {
        final int b = wildcardBase;
        check(b > 0, "wildcardBase not given");
        final String channel = "aeron:udp?endpoint=127.0.0.1:0";
        final Subscription s1 = aeron.addSubscription(channel, stream());
        await("first endpoint", () -> null != s1.resolvedEndpoint());
        check(("127.0.0.1:" + b).equals(s1.resolvedEndpoint()), "first subscription at " + s1.resolvedEndpoint());
        final Subscription s2 = aeron.addSubscription(channel, stream());
        await("second endpoint", () -> null != s2.resolvedEndpoint());
        check(("127.0.0.1:" + (b + 1)).equals(s2.resolvedEndpoint()), "second subscription at " + s2.resolvedEndpoint());
        final String full = expectMessage(() -> aeron.addSubscription(channel, stream()),
            "no available ports in range " + b + " " + (b + 1));
        s2.close();
        final Subscription[] s3 = { null };
        await("a subscription on the freed port", () ->
        {
            try
            {
                s3[0] = aeron.addSubscription(channel, stream());
                return true;
            }
            catch (final RegistrationException ex)
            {
                return false;
            }
        });
        await("third endpoint", () -> null != s3[0].resolvedEndpoint());
        check(("127.0.0.1:" + (b + 1)).equals(s3[0].resolvedEndpoint()), "reused port " + s3[0].resolvedEndpoint());

        final String pubChannel = "aeron:udp?control=127.0.0.1:0|control-mode=dynamic|linger=0";
        final Publication p1 = aeron.addPublication(pubChannel, stream());
        await("publication control address", () -> !p1.localSocketAddresses().isEmpty());
        check(("127.0.0.1:" + (b + 2)).equals(p1.localSocketAddresses().get(0)),
            "publication control at " + p1.localSocketAddresses());
        final String pubFull = expectMessage(() -> aeron.addPublication(pubChannel, stream()),
            "no available ports in range " + (b + 2) + " " + (b + 2));
        p1.close();
        final Publication[] p2 = { null };
        await("a publication on the freed port", () ->
        {
            try
            {
                p2[0] = aeron.addPublication(pubChannel, stream());
                return true;
            }
            catch (final RegistrationException ex)
            {
                return false;
            }
        });
        await("second publication control address", () -> !p2[0].localSocketAddresses().isEmpty());
        check(("127.0.0.1:" + (b + 2)).equals(p2[0].localSocketAddresses().get(0)),
            "reused control port " + p2[0].localSocketAddresses());
        s1.close();
        s3[0].close();
        p2[0].close();
        return "subscriptions=" + b + "," + (b + 1) + " publication=" + (b + 2) + " full=[" + full + "|" + pubFull + "]";
    }

    /**
     * Merged MDS (TimestampingSystemTest.shouldSupportReceiveTimestampsOnMergedMds): two exclusive publications to
     * two endpoints with the same session id and initial position feed one MDS subscription (channel-rcv-ts-offset=0)
     * with both endpoints as destinations. One image joins both transports; each message offered on both
     * publications arrives once, in order, stamped; 200 such pairs, sent pub1-then-pub2 and pub2-then-pub1 in turn.
     */
    private static String mergedMds(final Aeron aeron) throws Exception
    {
        final int stream = stream();
        final String a = "aeron:udp?endpoint=127.0.0.1:" + freePort();
        final String b = "aeron:udp?endpoint=127.0.0.1:" + freePort();
        try (Subscription sub = aeron.addSubscription("aeron:udp?control-mode=manual|channel-rcv-ts-offset=0", stream);
            ExclusivePublication pub1 = aeron.addExclusivePublication(a + "|term-length=" + term, stream))
        {
            final String uri2 = new io.aeron.ChannelUriStringBuilder(b + "|term-length=" + term)
                .initialPosition(0L, pub1.initialTermId(), pub1.termBufferLength())
                .sessionId(pub1.sessionId())
                .build();
            try (ExclusivePublication pub2 = aeron.addExclusivePublication(uri2, stream))
            {
                sub.addDestination(a);
                sub.addDestination(b);
                await("connected", () -> pub1.isConnected() && pub2.isConnected() && 1 == sub.imageCount());
                final Image image = sub.imageAtIndex(0);
                await("two active transports", () -> 2 == image.activeTransportCount());
                final UnsafeBuffer buf = new UnsafeBuffer(new byte[64]);
                final int count = 200;
                final long before = epochNanos() - 1_000_000L;
                final long[] next = { 0 };
                final int[] bad = { 0 };
                for (int m = 0; m < count; m++)
                {
                    buf.putLong(0, -1L);
                    buf.putLong(8, m);
                    final ExclusivePublication first = 0 == (m & 1) ? pub1 : pub2;
                    final ExclusivePublication second = 0 == (m & 1) ? pub2 : pub1;
                    offer(first, buf, buf.capacity());
                    offer(second, buf, buf.capacity());
                    final int want = m + 1;
                    await("message " + m, () ->
                    {
                        sub.poll((buffer, offset, length, header) ->
                        {
                            final long stamp = buffer.getLong(offset);
                            if (buffer.getLong(offset + 8) != next[0] || stamp < before || stamp > epochNanos() + 1_000_000L)
                            {
                                bad[0]++;
                            }
                            next[0]++;
                        }, 10);
                        return next[0] >= want;
                    });
                }
                check(next[0] == count, "received " + next[0] + " for " + count + " pairs");
                check(0 == bad[0], bad[0] + " messages out of order, repeated or unstamped");
                check(1 == sub.imageCount(), "images " + sub.imageCount());
                return "pairs=" + count + " images=1 transports=2";
            }
        }
    }

    private static String expectMessage(final Add add, final String want)
    {
        try (AutoCloseable r = add.add())
        {
            throw new Failure("expected an error saying " + want + ", got a resource");
        }
        catch (final RegistrationException ex)
        {
            check(ex.getMessage().contains(want), "error does not say " + want + ": " + ex.getMessage());
            return ex.errorCode().name();
        }
        catch (final Failure f)
        {
            throw f;
        }
        catch (final Exception ex)
        {
            throw new Failure("unexpected " + ex);
        }
    }

    private interface Add
    {
        AutoCloseable add();
    }

    private static void expectError(final Aeron aeron, final Add add, final ErrorCode code, final StringBuilder codes)
    {
        try (AutoCloseable r = add.add())
        {
            throw new Failure("expected " + code + ", got a resource");
        }
        catch (final RegistrationException ex)
        {
            check(code == ex.errorCode(), "expected " + code + ", got " + ex.errorCode() + ": " + ex.getMessage());
            codes.append(0 == codes.length() ? "" : ",").append(code.value());
        }
        catch (final Failure f)
        {
            throw f;
        }
        catch (final Exception ex)
        {
            throw new Failure("unexpected " + ex);
        }
    }

    private static String session(final Aeron aeron)
    {
        final int stream = stream();
        final int next = aeron.nextSessionId(stream);
        try (ExclusivePublication a = aeron.addExclusivePublication(
            "aeron:ipc?term-length=" + term + "|session-id=" + next, stream))
        {
            check(a.sessionId() == next, "session-id param ignored: " + a.sessionId());
            expectError(aeron, () -> aeron.addExclusivePublication(
                "aeron:ipc?term-length=" + term + "|session-id=" + next, stream), ErrorCode.INVALID_CHANNEL,
                new StringBuilder());
            final int after = aeron.nextSessionId(stream);
            check(after != next, "nextSessionId returned an active session " + after);
            try (Subscription only = aeron.addSubscription("aeron:ipc?session-id=" + next, stream);
                ExclusivePublication other = aeron.addExclusivePublication(ipc(), stream))
            {
                await("image", () -> 1 == only.imageCount());
                check(only.imageAtIndex(0).sessionId() == next && other.sessionId() != next, "session filter");
                Thread.sleep(50);
                check(1 == only.imageCount(), "subscription with session-id joined another session");
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
            }
            return "explicit=" + next + " clash=INVALID_CHANNEL";
        }
    }
}
