package finals

// Losing finals: core NATS delivers at most once, so the router watches for what it may have
// missed and has the judge read the shards concerned from PostgreSQL again.

import (
	"context"
	"time"
)

// markResync asks for a re-sync of shard k, if o still owns it.
func (r *Router) markResync(k int, o *owned) {
	r.mu.Lock()
	if r.shards[k] == o {
		o.resync = true
	}
	r.mu.Unlock()
	r.poke()
}

// poke wakes the re-sync loop.
func (r *Router) poke() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// watch looks every PollInterval for lost messages: a subscription's drops, a reconnect of
// the connection (whatever was published meanwhile is gone), a subscription that failed.
func (r *Router) watch(ctx context.Context) {
	tick := time.NewTicker(r.cfg.PollInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		due := false
		r.mu.Lock()
		reconnects := r.nc.Stats().Reconnects
		reconnected := reconnects != r.reconnects
		r.reconnects = reconnects
		for k, o := range r.shards {
			if o.sub == nil {
				if o.sub = r.subscribe(k, o); o.sub != nil {
					o.resync = true
				}
			}
			if o.sub != nil {
				if n, err := o.sub.Dropped(); err == nil && n != o.dropped {
					o.dropped, o.resync = n, true
				}
			}
			o.resync = o.resync || reconnected
			due = due || o.resync
		}
		r.mu.Unlock()
		if reconnected {
			r.log.Warn("finals router: NATS reconnected: re-syncing every shard")
		}
		if due {
			r.poke()
		}
	}
}

// resyncs takes again the shards that may have lost finals, once their first Take is done.
func (r *Router) resyncs(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.wake:
		}
		var shards []int
		var os []*owned
		r.mu.Lock()
		for k, o := range r.shards {
			if o.resync && o.isReady {
				o.resync = false
				shards, os = append(shards, k), append(os, o)
			}
		}
		r.mu.Unlock()
		if len(shards) == 0 {
			continue
		}
		r.m.resyncs.Inc()
		r.log.Warn("finals router: finals may have been lost: re-syncing shards", "shards", len(shards))
		r.retry(ctx, "re-sync shards", func() error {
			_, err := r.take(ctx, shards, os)
			return err
		})
	}
}
