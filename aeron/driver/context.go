package driver

import (
	"github.com/goblin-kv/goblin/aeron/internal/counters"
	"github.com/goblin-kv/goblin/aeron/internal/errorlog"
	"github.com/goblin-kv/goblin/aeron/internal/udp"
	"github.com/goblin-kv/goblin/internal/shm"
)

// recvBatchSize is how many datagrams one recvmmsg reads.
const recvBatchSize = 16

// driverContext is what the conductor, the sender and the receiver share
// (aeron_driver_context_t): the options, the CnC's counters and error
// log, the clocks the duty cycle reads once, and the UDP scratch. The
// three agents run on DoWork's goroutine, one after the other, so they
// share it without handing anything over: the conductor embeds it, the
// sender and the receiver point at the conductor's.
type driverContext struct {
	opts     Options
	counters *counters.Manager
	values   []byte // the counters values section
	errors   *errorlog.Log

	poller    *udp.Poller
	recvBatch *udp.RecvBatch // the datagrams one recvmmsg read (sender's control, receiver's data)
	ctl       []byte         // a control frame being sent
	errFrame  []byte         // an ERR frame being sent

	// incoming are the test interceptors (loss, fixed-loss,
	// multi-gap-loss) every datagram read passes first (interceptors.go).
	incoming []incomingInterceptor

	lossReport     []byte // loss-report.dat, mapped
	lossReportNext int    // where the next entry goes

	nowNs   int64 // this duty cycle's clock reading
	epochMs int64 // epoch ms, updated every clockUpdateInterval
}

// subPosition reads a sub-pos counter. Writer: the subscriber (release
// after consuming); acquire here.
func (x *driverContext) subPosition(pos position) int64 {
	return shm.LoadInt64Acquire(x.values, pos.off)
}

// setPosition stores a position counter with release and no more (a
// plain store on amd64, like Java's setRelease): a publisher that acquires
// pub-lmt sees the terms cleaned before it. Writer: the conductor; readers:
// publishers, subscribers, tools.
func (x *driverContext) setPosition(pos position, v int64) {
	shm.StoreInt64ReleaseOnly(x.values, pos.off, v)
}

func (x *driverContext) positionOf(id int32) position {
	return position{id: id, off: counters.ValueOffsetOf(id)}
}

// recordError counts an error (counter 15), logs it in the CnC's
// distinct error log and hands it to Options.ErrorHandler.
func (x *driverContext) recordError(err error) {
	x.counters.AddValue(sysErrors, 1)
	x.errors.Record(err.Error(), x.epochMs)
	if h := x.opts.ErrorHandler; h != nil {
		h(err)
	}
}

// warn records a warning the running driver has (an error frame from a
// receiver, low storage) in the CnC error log, as the Java and C drivers'
// error handlers do: a running driver writes nothing to stderr.
func (x *driverContext) warn(msg string) {
	x.errors.Record(msg, x.epochMs)
}

// recvInto reads a batch of datagrams from s into recvBatch.
func (x *driverContext) recvInto(s *udp.Socket) int {
	n, err := x.recvBatch.Recv(s)
	if err != nil {
		x.recordError(err)
		return 0
	}
	return n
}
