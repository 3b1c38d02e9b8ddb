package udp

import (
	"encoding/binary"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Media receive timestamps: a socket opened with Options.ReceiveTimestamps
// has SO_TIMESTAMPNS set, so the kernel attaches to every datagram the
// wall-clock time it received it (an SCM_TIMESTAMPNS control message, a
// struct timespec), which RecvBatch.Timestamp reads. Such a socket is
// always read with recvmmsg(2), never the recvfrom(2) of an idle socket,
// since recvfrom returns no control messages.

// controlLength is each batch slot's control-message buffer: room for one
// timespec (cmsghdr 16 + timespec 16) and then some.
const controlLength = 64

// enableTimestamps sets SO_TIMESTAMPNS (aeron_udp_channel_transport_setup_media_rcv_timestamps).
func (s *Socket) enableTimestamps() error {
	if err := unix.SetsockoptInt(s.fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1); err != nil {
		return fmt.Errorf("udp: setsockopt(SO_TIMESTAMPNS): %w", cErr(err))
	}
	s.timestamps = true
	return nil
}

// setControl offers each slot its control buffer (on) or none (off), before
// a recvmmsg: the kernel rewrites Controllen, so a timestamping socket's
// read sets it every time, and the first read of another socket after
// one clears it. Sockets without timestamps never pay for the loop.
func (b *RecvBatch) setControl(on bool) {
	n := uint64(0)
	if on {
		n = controlLength
	}
	for i := range b.msgs {
		b.msgs[i].Hdr.Controllen = n
	}
	b.ctlSet = on
}

// Timestamps reports whether the socket's datagrams carry receive times.
func (s *Socket) Timestamps() bool { return s.timestamps }

// Timestamp is the kernel's receive time, in nanoseconds since the epoch,
// of the i-th datagram of the last Recv, or false when it has none (the
// socket has no ReceiveTimestamps). It does not allocate.
func (b *RecvBatch) Timestamp(i int) (int64, bool) {
	n := int(b.msgs[i].Hdr.Controllen)
	if n == 0 {
		return 0, false
	}
	c := b.ctrl[i][:min(n, controlLength)]
	const hdr = int(unsafe.Sizeof(unix.Cmsghdr{}))
	for len(c) >= hdr {
		l := int(binary.NativeEndian.Uint64(c))
		level := int32(binary.NativeEndian.Uint32(c[8:]))
		typ := int32(binary.NativeEndian.Uint32(c[12:]))
		if l < hdr || l > len(c) {
			return 0, false
		}
		if level == unix.SOL_SOCKET && typ == unix.SCM_TIMESTAMPNS && l >= hdr+16 {
			sec := int64(binary.NativeEndian.Uint64(c[hdr:]))
			nsec := int64(binary.NativeEndian.Uint64(c[hdr+8:]))
			return sec*1e9 + nsec, true
		}
		c = c[min((l+7)&^7, len(c)):]
	}
	return 0, false
}
