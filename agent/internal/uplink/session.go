package uplink

import (
	"context"
	"errors"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/protobuf/proto"

	"github.com/vantagehq/vantage/pkg/wire"
	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// session is one registered stream: the queue of outgoing results and the results waiting for
// their acks, by sequence number.
type session struct {
	id       string
	caps     wire.Capabilities // the stream capabilities agreed in Registered
	maxBatch int
	batch    prometheus.Histogram

	out  chan *vantagev1.ResultEnvelope // drained by sendLoop, many at a time
	ctl  chan *vantagev1.AgentMessage   // other messages (canary rounds), sent by sendLoop too
	dead chan struct{}                  // closed when the stream is gone
	once sync.Once

	closing   chan struct{} // closed when the session closes: no more sends, acks still arrive
	closeOnce sync.Once
	// gate orders enqueue before close: a result is queued under its read lock, and close
	// takes the write lock, so that nothing can be queued after sendLoop's last flush.
	gate sync.RWMutex

	mu      sync.Mutex
	pending map[uint64]*pending // nil once dead
}

func newSession(id string, caps wire.Capabilities, maxBatch int, batch prometheus.Histogram) *session {
	return &session{
		id:       id,
		caps:     caps,
		ctl:      make(chan *vantagev1.AgentMessage, 1),
		maxBatch: maxBatch,
		batch:    batch,
		out:      make(chan *vantagev1.ResultEnvelope, maxBatch),
		dead:     make(chan struct{}),
		closing:  make(chan struct{}),
		pending:  make(map[uint64]*pending),
	}
}

// sendLoop is the stream's only writer (gRPC allows one concurrent Send per stream). It sends
// whatever results queued while it was writing the previous message, up to maxBatch in one
// ResultBatch on protocol 2, so batches grow with the load and a lone result is never held
// back. When the session closes it sends what is still queued, half-closes the stream and
// returns nil: the control plane then acks what it took and ends the stream.
func (s *session) sendLoop(ctx context.Context, stream vantagev1.AgentService_ConnectClient) error {
	buf := make([]*vantagev1.ResultEnvelope, 0, s.maxBatch)
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-s.closing:
			// close has waited for every enqueue under way: what is queued now is all there is.
			for len(s.out) > 0 {
				if err := s.send(stream, s.take(buf, <-s.out)); err != nil {
					return err
				}
			}
			return stream.CloseSend()
		case e := <-s.out:
			if err := s.send(stream, s.take(buf, e)); err != nil {
				return err
			}
		case m := <-s.ctl:
			if err := stream.Send(m); err != nil {
				return err
			}
		}
	}
}

// take fills buf with e and whatever else is queued, up to maxBatch.
func (s *session) take(buf []*vantagev1.ResultEnvelope, e *vantagev1.ResultEnvelope) []*vantagev1.ResultEnvelope {
	buf = append(buf[:0], e)
	for len(buf) < s.maxBatch {
		select {
		case e := <-s.out:
			buf = append(buf, e)
		default:
			return buf
		}
	}
	return buf
}

// send writes buf as the stream's capabilities want it: one ResultBatch with batched
// results, one message per result without.
func (s *session) send(stream vantagev1.AgentService_ConnectClient, buf []*vantagev1.ResultEnvelope) error {
	s.batch.Observe(float64(len(buf)))
	if !s.caps.Has(wire.CapabilityBatchedResults) {
		for _, e := range buf {
			if err := stream.Send(&vantagev1.AgentMessage{Msg: &vantagev1.AgentMessage_Result{Result: e}}); err != nil {
				return err
			}
		}
		return nil
	}
	// The message is marshalled by Send, before it returns: buf may be reused after.
	for _, part := range splitBySize(buf, maxBatchBytes) {
		if err := stream.Send(&vantagev1.AgentMessage{Msg: &vantagev1.AgentMessage_Results{Results: &vantagev1.ResultBatch{Results: part}}}); err != nil {
			return err
		}
	}
	return nil
}

// maxBatchBytes bounds a ResultBatch message below gRPC's default 4 MiB receive limit: browser
// results carry a screenshot and artifacts (up to 2.5 MiB together, see pkg/wire), and a batch
// of them over the limit would be refused — and sent again after the reconnect, forever.
const maxBatchBytes = 3 << 20

// splitBySize cuts buf into runs of results whose encoded size stays within limit; a result
// larger than limit on its own goes alone.
func splitBySize(buf []*vantagev1.ResultEnvelope, limit int) [][]*vantagev1.ResultEnvelope {
	var parts [][]*vantagev1.ResultEnvelope
	start, size := 0, 0
	for i, e := range buf {
		n := proto.Size(e)
		if i > start && size+n > limit {
			parts = append(parts, buf[start:i])
			start, size = i, 0
		}
		size += n
	}
	return append(parts, buf[start:])
}

// errClosing means the session takes no more results: the next session will.
var errClosing = errors.New("uplink: session closing")

// enqueue queues env for sendLoop. It returns errClosing once the session closes, ctx's error
// when ctx ends first, and nil when env is queued or the session died (kill has told its done).
func (s *session) enqueue(ctx context.Context, env *vantagev1.ResultEnvelope) error {
	s.gate.RLock()
	defer s.gate.RUnlock()
	select {
	case <-s.closing:
		return errClosing
	default:
	}
	select {
	case s.out <- env:
	case <-s.dead:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// expect registers the result with seq as waiting for its ack; false when the session is
// already dead.
func (s *session) expect(seq uint64, p *pending) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pending == nil {
		return false
	}
	s.pending[seq] = p
	return true
}

// forget drops seq's waiter without telling it; false when it was told already.
func (s *session) forget(seq uint64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.pending[seq]
	delete(s.pending, seq)
	return ok
}

// deliver tells an ack to its waiter; acks nobody waits for are dropped.
func (s *session) deliver(ack *vantagev1.ResultAck) {
	s.mu.Lock()
	p, ok := s.pending[ack.GetSeq()]
	delete(s.pending, ack.GetSeq())
	s.mu.Unlock()
	if ok {
		p.finish(ack, nil)
	}
}

// control queues m for sendLoop unless a message is already waiting (canary rounds come every
// few seconds; one that cannot go out at once is dropped for the next). It reports whether m
// was queued.
func (s *session) control(m *vantagev1.AgentMessage) bool {
	select {
	case s.ctl <- m:
		return true
	default:
		return false
	}
}

// usable reports whether results may still be queued: the stream is up and not closing.
func (s *session) usable() bool {
	select {
	case <-s.closing:
		return false
	default:
		return s.alive()
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

// close stops sending once what is queued has gone out; acks of results already sent are
// still delivered. It waits for enqueues under way (they end when sendLoop takes their result
// or the session dies).
func (s *session) close() {
	s.closeOnce.Do(func() {
		s.gate.Lock()
		defer s.gate.Unlock()
		close(s.closing)
	})
}

// kill marks the session dead and tells every result still waiting for its ack that it is
// lost.
func (s *session) kill() {
	s.once.Do(func() {
		s.mu.Lock()
		close(s.dead)
		lost := s.pending
		s.pending = nil
		s.mu.Unlock()
		for _, p := range lost {
			p.finish(nil, ErrSessionLost)
		}
	})
}
