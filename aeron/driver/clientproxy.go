package driver

import (
	"github.com/goblin-kv/goblin/aeron"
	"github.com/goblin-kv/goblin/aeron/internal/command"
)

// The driver's responses and events (ClientProxy), broadcast to every
// client through the to-clients buffer. Each encodes into one reused
// scratch buffer.

// transmit broadcasts one response or event to the clients, logging it
// first when the event log wants it.
func (c *conductor) transmit(typeID int32, msg []byte) {
	if c.events != nil {
		c.events.command(typeID, msg)
	}
	c.tx.Transmit(typeID, msg)
}

func (c *conductor) sendError(corr int64, code aeron.ErrorCode, text string) {
	c.rsp = command.AppendErrorResponse(c.rsp[:0], corr, int32(code), text)
	c.transmit(command.OnError, c.rsp)
}

func (c *conductor) sendOperationSuccess(corr int64) {
	c.rsp = command.AppendInt64(c.rsp[:0], corr)
	c.transmit(command.OnOperationSuccess, c.rsp)
}

func (c *conductor) sendCounterUpdate(typeID int32, corr int64, value int32) {
	c.rsp = command.AppendCounterUpdate(c.rsp[:0], corr, value)
	c.transmit(typeID, c.rsp)
}

func (c *conductor) sendUnavailableCounter(registrationID int64, counterID int32) {
	c.sendCounterUpdate(command.OnUnavailableCounter, registrationID, counterID)
}

func (c *conductor) sendClientTimeout(clientID int64) {
	c.rsp = command.AppendInt64(c.rsp[:0], clientID)
	c.transmit(command.OnClientTimeout, c.rsp)
}

// sendAvailableImage announces publication p to subscription subReg with
// its sub-pos counter; an IPC image is the publication's own log.
func (c *conductor) sendAvailableImage(p *ipcPublication, subReg int64, positionID int32) {
	c.sendAvailable(p.registrationID, p.sessionID, p.streamID, subReg, positionID, p.log.path, ipcChannel)
}

// sendAvailable broadcasts ON_AVAILABLE_IMAGE: image id, session, stream,
// the subscription, its sub-pos counter, the log and the source.
func (c *conductor) sendAvailable(imageID int64, sessionID, streamID int32, subReg int64, positionID int32, logPath,
	source string) {
	c.rsp = command.AppendImageBuffersReady(c.rsp[:0], imageID, sessionID, streamID, subReg, positionID, logPath, source)
	c.transmit(command.OnAvailableImage, c.rsp)
}

func (c *conductor) notifyUnavailableImage(resourceID int64, l *subscriptionLink) {
	c.rsp = command.AppendImageMessage(c.rsp[:0], resourceID, l.registrationID, l.streamID, l.channel)
	c.transmit(command.OnUnavailableImage, c.rsp)
}
