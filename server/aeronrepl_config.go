package server

import (
	"errors"
	"strconv"

	"github.com/goblin-kv/goblin/engine"
	"github.com/goblin-kv/goblin/replication/aeronfeed"
)

// aeronReplParams are the Aeron replication settings as CONFIG
// parameters, named as the flags and the configuration file's directives
// (docs/replication-aeron.md, "Configuration"). The channels, the stream
// id and the replica's name are read-only at run time (CONFIG SET answers
// Redis's "can't set immutable config"; they take effect at start, from the
// flags or the file, which CONFIG REWRITE keeps). replica-forward-writes
// changes at once: on, a forwarder starts (over Aeron where it can, TCP
// otherwise) if none runs yet; off, writes get READONLY again while writes
// already forwarded still get their answers.
func (s *Server) aeronReplParams() []engine.Param {
	a := &s.opts.AeronReplication
	ro := func(name string, v *string) engine.Param {
		return engine.Param{Name: name, Get: func() string { return *v }}
	}
	return []engine.Param{
		ro("repl-aeron-channel", &a.Channel),
		ro("repl-aeron-status-channel", &a.StatusChannel),
		{Name: "repl-aeron-stream-id", Get: func() string {
			if a.StreamID == 0 {
				return strconv.Itoa(aeronfeed.DefaultStreamID)
			}
			return strconv.Itoa(int(a.StreamID))
		}},
		ro("replica-aeron-channel", &a.ReplicaChannel),
		ro("replica-aeron-status-channel", &a.ReplicaStatusChannel),
		ro("replica-aeron-name", &a.ReplicaName),
		{Name: "replica-forward-writes", Get: func() string { return engine.YesNo(a.ForwardWrites) }, Set: s.setForwardWrites},
	}
}

// setForwardWrites is CONFIG SET replica-forward-writes. Loop goroutine.
func (s *Server) setForwardWrites(v string) error {
	on, err := engine.ParseYesNo(v)
	if err != nil {
		return err
	}
	if !on {
		a := &s.opts.AeronReplication
		a.ForwardWrites = false
		s.engine.SetWriteForwarder(nil)
		return nil
	}
	if s.fwdCtl == nil {
		return errors.New("this server has no replication link to forward writes over")
	}
	if s.forwarder == nil {
		f, err := s.newForwarder()
		if err != nil {
			return err
		}
		if err := s.loop.Add(f); err != nil {
			f.Close()
			s.forwarder = nil
			return err
		}
	}
	s.engine.SetWriteForwarder(s.forwarder)
	s.opts.AeronReplication.ForwardWrites = true
	return nil
}
