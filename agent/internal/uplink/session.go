package uplink

import (
	"context"
	"sync"

	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// session is one registered stream: the queue of outgoing messages and the senders waiting for
// acks, by sequence number.
type session struct {
	id   string
	out  chan *vantagev1.AgentMessage // unbuffered: a sender hands over directly to sendLoop
	dead chan struct{}                // closed when the stream is gone
	once sync.Once

	closing   chan struct{} // closed when the agent stops: no more sends, acks still arrive
	closeOnce sync.Once

	mu      sync.Mutex
	pending map[uint64]chan *vantagev1.ResultAck
}

func newSession(id string) *session {
	return &session{
		id:      id,
		out:     make(chan *vantagev1.AgentMessage),
		dead:    make(chan struct{}),
		closing: make(chan struct{}),
		pending: make(map[uint64]chan *vantagev1.ResultAck),
	}
}

// sendLoop is the stream's only writer (gRPC allows one concurrent Send per stream). When the
// session closes it half-closes the stream and returns nil.
func (s *session) sendLoop(ctx context.Context, stream vantagev1.AgentService_ConnectClient) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-s.closing:
			return stream.CloseSend()
		case m := <-s.out:
			if err := stream.Send(m); err != nil {
				return err
			}
		}
	}
}

// expect registers a waiter for seq's ack; false when the session is already dead.
func (s *session) expect(seq uint64, c chan *vantagev1.ResultAck) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.dead:
		return false
	default:
	}
	s.pending[seq] = c
	return true
}

func (s *session) forget(seq uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.pending, seq)
}

// deliver hands an ack to its waiter; acks nobody waits for (the sender gave up) are dropped.
func (s *session) deliver(ack *vantagev1.ResultAck) {
	s.mu.Lock()
	c, ok := s.pending[ack.GetSeq()]
	delete(s.pending, ack.GetSeq())
	s.mu.Unlock()
	if ok {
		c <- ack // buffered, one ack per seq: never blocks
	}
}

// alive reports whether the stream is still up.
func (s *session) alive() bool {
	select {
	case <-s.dead:
		return false
	default:
		return true
	}
}

// close stops sending; acks of results already sent are still delivered.
func (s *session) close() { s.closeOnce.Do(func() { close(s.closing) }) }

// kill marks the session dead, failing every waiting sender.
func (s *session) kill() { s.once.Do(func() { close(s.dead) }) }
