package aeron

import (
	"github.com/goblin-kv/goblin/aeron/internal/logbuffer"
	"github.com/goblin-kv/goblin/internal/shm"
)

// ActiveTransportCount is how many transports (destinations of a
// multi-destination subscription; 1 otherwise) delivered a frame of this
// image within the image liveness timeout, as the driver last counted at
// a status message (Image.activeTransportCount in the Java client).
func (i *Image) ActiveTransportCount() int {
	// Written by the driver with release at each status message; read
	// here with acquire. A closed image's log may be unmapped: 0.
	if i.closed.Load() {
		return 0
	}
	return int(shm.LoadInt32Acquire(i.log.meta, logbuffer.ActiveTransportCountOffset))
}
