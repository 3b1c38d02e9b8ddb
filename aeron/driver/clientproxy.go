package driver

import (
	"github.com/goblin-kv/goblin/aeron"
	"github.com/goblin-kv/goblin/aeron/internal/command"
)

// The driver's responses and events (ClientProxy), broadcast to every
// client through the to-clients buffer. Each encodes into one reused
// scratch buffer.

func (d *Driver) sendError(corr int64, code aeron.ErrorCode, text string) {
	d.rsp = command.AppendErrorResponse(d.rsp[:0], corr, int32(code), text)
	d.tx.Transmit(command.OnError, d.rsp)
}

func (d *Driver) sendOperationSuccess(corr int64) {
	d.rsp = command.AppendInt64(d.rsp[:0], corr)
	d.tx.Transmit(command.OnOperationSuccess, d.rsp)
}

func (d *Driver) sendCounterUpdate(typeID int32, corr int64, value int32) {
	d.rsp = command.AppendCounterUpdate(d.rsp[:0], corr, value)
	d.tx.Transmit(typeID, d.rsp)
}

func (d *Driver) sendUnavailableCounter(registrationID int64, counterID int32) {
	d.sendCounterUpdate(command.OnUnavailableCounter, registrationID, counterID)
}

func (d *Driver) sendClientTimeout(clientID int64) {
	d.rsp = command.AppendInt64(d.rsp[:0], clientID)
	d.tx.Transmit(command.OnClientTimeout, d.rsp)
}

// sendAvailableImage announces publication p to subscription subReg with
// its sub-pos counter; an IPC image is the publication's own log.
func (d *Driver) sendAvailableImage(p *ipcPublication, subReg int64, positionID int32) {
	d.sendAvailable(p.registrationID, p.sessionID, p.streamID, subReg, positionID, p.log.path, ipcChannel)
}

// sendAvailable broadcasts ON_AVAILABLE_IMAGE: image id, session, stream,
// the subscription, its sub-pos counter, the log and the source.
func (d *Driver) sendAvailable(imageID int64, sessionID, streamID int32, subReg int64, positionID int32, logPath,
	source string) {
	d.rsp = command.AppendImageBuffersReady(d.rsp[:0], imageID, sessionID, streamID, subReg, positionID, logPath, source)
	d.tx.Transmit(command.OnAvailableImage, d.rsp)
}

func (d *Driver) notifyUnavailableImage(resourceID int64, l *subscriptionLink) {
	d.rsp = command.AppendImageMessage(d.rsp[:0], resourceID, l.registrationID, l.streamID, l.channel)
	d.tx.Transmit(command.OnUnavailableImage, d.rsp)
}
