package server

import (
	"fmt"
	"os"
	"strconv"

	"github.com/goblin-kv/goblin/engine"
	"github.com/goblin-kv/goblin/replica"
	"github.com/goblin-kv/goblin/replica/aeronsource"
	"github.com/goblin-kv/goblin/replication/aeronfeed"
)

// AeronReplication configures replication over one Aeron stream
// (docs/replication-aeron.md). The zero value turns it off.
type AeronReplication struct {
	// Channel, on a primary, is the channel its replication stream is
	// published on (--repl-aeron-channel); StatusChannel the one it reads
	// its Aeron replicas' positions from (--repl-aeron-status-channel).
	Channel, StatusChannel string
	// ReplicaChannel, on a replica, is the channel it receives its
	// primary's stream on (--replica-aeron-channel); ReplicaStatusChannel
	// where it sends its position (--replica-aeron-status-channel);
	// ReplicaName names it there (default host name:port).
	ReplicaChannel, ReplicaStatusChannel, ReplicaName string
	// StreamID is the stream's id on both sides (0: 1035; the status
	// stream is StreamID+1).
	StreamID int32
}

// setupAeronReplication adds the Aeron publication of the stream (a
// primary's) and wraps the replica link in an Aeron source (a replica's);
// it adds the link, or the source, to the transports and returns what
// REPLICAOF drives.
func (s *Server) setupAeronReplication(l *replica.Link) (engine.ReplicaControl, error) {
	a := &s.opts.AeronReplication
	sid := a.StreamID
	if sid == 0 {
		sid = aeronfeed.DefaultStreamID
	}
	if a.Channel != "" {
		p, err := aeronfeed.NewPublisher(aeronfeed.PublisherOptions{
			Channel: a.Channel, StreamID: sid, StatusChannel: a.StatusChannel, StatusStreamID: sid + 1,
			Position: func() (string, int64) {
				st := s.engine.Replication()
				return st.ID, st.Offset
			},
			Logger: s.log,
		})
		if err != nil {
			return nil, fmt.Errorf("server: --repl-aeron-channel: %w", err)
		}
		s.engine.SetStreamTap(p)
		s.aeronPub = p
		defer func() { s.transports = append(s.transports, p) }() // after the link: offered in the cycle that fed it
	}
	if a.ReplicaChannel == "" {
		s.transports = append(s.transports, l)
		s.engine.SetReplicaControl(l)
		return l, nil
	}
	name := a.ReplicaName
	if name == "" {
		host, _ := os.Hostname()
		name = host + ":" + s.tcpPort()
	}
	port, _ := strconv.Atoi(s.tcpPort())
	src, err := aeronsource.New(aeronsource.Options{
		Link: l, Apply: s.engine, Feed: s.engine.FeedUpstream,
		Channel: a.ReplicaChannel, StreamID: sid, StatusChannel: a.ReplicaStatusChannel, StatusStreamID: sid + 1,
		Name: name, ListeningPort: port, Logger: s.log,
	})
	if err != nil {
		if s.aeronPub != nil {
			s.aeronPub.Close()
		}
		return nil, fmt.Errorf("server: --replica-aeron-channel: %w", err)
	}
	s.aeronSrc = src
	s.transports = append(s.transports, src)
	s.engine.SetReplicaControl(src)
	return src, nil
}
