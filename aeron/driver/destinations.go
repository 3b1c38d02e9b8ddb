package driver

import (
	"github.com/goblin-kv/goblin/aeron"
)

// Keys a destination channel may not have (DriverConductor.INVALID_DESTINATION_KEYS).
var invalidDestinationKeys = []string{aeron.ParamMTU, aeron.ParamReceiverWindow, aeron.ParamSocketRcvBuf,
	aeron.ParamSocketSndBuf, aeron.ParamResponseCorrelationID}

// onSendDestination adds or removes a destination of a manual
// multi-destination publication (DriverConductor.onAddSendDestination,
// onRemoveSendDestination).
func (c *conductor) onSendDestination(add bool, registrationID int64, channel string, corr int64) error {
	u, err := parseURI(channel)
	if err != nil {
		return err
	}
	if add {
		if u.Spy {
			return invalidChannel("Aeron spies are invalid as send destinations: channel=%s", channel)
		}
		for _, k := range invalidDestinationKeys {
			if u.has(k) {
				return invalidChannel("destinations must not contain the key: %s channel=%s", k, channel)
			}
		}
		if v, _ := u.Get(aeron.ParamControlMode); v == aeron.ControlModeResponse {
			return invalidChannel("destinations may not specify %s=%s", aeron.ParamControlMode, aeron.ControlModeResponse)
		}
		if v, ok := u.Get(aeron.ParamEndpoint); ok && len(v) > 1 && v[len(v)-2:] == ":0" {
			return invalidChannel("endpoint has port=0 for send destination: channel=%s", channel)
		}
	}
	e, err := c.findManualSendEndpoint(registrationID)
	if err != nil {
		return err
	}
	v, ok := u.Get(aeron.ParamEndpoint)
	if !ok {
		return genericError(illegalArgument, "destination must have an endpoint: %s", channel)
	}
	addr, err := c.resolveHostPort(aeron.ParamEndpoint, v)
	if err != nil {
		return err
	}
	if add {
		e.destinations = append(e.destinations, sendDestination{addr: addr, registrationID: corr, channel: channel,
			lastActivityNs: c.nowNs})
	} else {
		for i, dst := range e.destinations {
			if dst.addr == addr {
				e.destinations = append(e.destinations[:i], e.destinations[i+1:]...)
				break
			}
		}
	}
	e.setDestinationCount(c.driverContext)
	c.sendOperationSuccess(corr)
	return nil
}

// onRemoveDestinationByID removes the destination an ADD_DESTINATION's
// correlation id named.
func (c *conductor) onRemoveDestinationByID(registrationID, destinationID, corr int64) error {
	e, err := c.findManualSendEndpoint(registrationID)
	if err != nil {
		return err
	}
	for i, dst := range e.destinations {
		if dst.registrationID == destinationID {
			e.destinations = append(e.destinations[:i], e.destinations[i+1:]...)
			break
		}
	}
	e.setDestinationCount(c.driverContext)
	c.sendOperationSuccess(corr)
	return nil
}

// findManualSendEndpoint is the send endpoint of the network publication
// with that registration id, which must be a control-mode=manual channel.
func (c *conductor) findManualSendEndpoint(registrationID int64) (*sendEndpoint, error) {
	for _, p := range c.netPublications {
		if p.registrationID == registrationID {
			if p.ch.mode != controlManual {
				return nil, invalidChannel("channel does not allow manual control")
			}
			return p.ep, nil
		}
	}
	return nil, protocolError(aeron.ErrorCodeUnknownPublication, "unknown publication: %d", registrationID)
}
