package driver

import (
	"errors"
	"net"
	"net/netip"

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
	if err != nil && !isUnresolvedName(err, v) {
		return err
	}
	// A host name that does not resolve yet is accepted, as Java accepts
	// an unresolved address: nothing is sent to the destination until a
	// re-resolution (every destination timeout) finds it
	// (NameReResolutionTest.shouldHandleMdcManualEndpointInitiallyUnresolved).
	if add {
		e.destinations = append(e.destinations, sendDestination{addr: addr, registrationID: corr, channel: channel,
			lastActivityNs: c.nowNs})
	} else {
		for i, dst := range e.destinations {
			if addr.IsValid() && dst.addr == addr || !addr.IsValid() && !dst.addr.IsValid() && destinationEndpoint(dst.channel) == v {
				e.destinations = append(e.destinations[:i], e.destinations[i+1:]...)
				break
			}
		}
	}
	e.setDestinationCount(c.driverContext)
	c.sendOperationSuccess(corr)
	return nil
}

// isUnresolvedName reports that err is the resolver's UNKNOWN_HOST for a
// host name (not an address literal) in host:port v.
func isUnresolvedName(err error, v string) bool {
	var ce *commandError
	if !errors.As(err, &ce) || ce.code != aeron.ErrorCodeUnknownHost {
		return false
	}
	host, _, splitErr := net.SplitHostPort(v)
	if splitErr != nil {
		return false
	}
	_, parseErr := netip.ParseAddr(host)
	return parseErr != nil
}

// destinationEndpoint is the endpoint= of a destination channel.
func destinationEndpoint(channel string) string {
	u, err := parseURI(channel)
	if err != nil {
		return ""
	}
	v, _ := u.Get(aeron.ParamEndpoint)
	return v
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
