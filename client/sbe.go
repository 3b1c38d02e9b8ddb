package client

import "errors"

// newSBECodec returns the SBE codec; framed selects SOFH framing for
// stream transports.
func newSBECodec(framed bool) (codec, error) {
	return nil, errors.New("client: SBE is not supported yet")
}
