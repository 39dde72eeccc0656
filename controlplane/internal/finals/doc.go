// Package finals carries final attempts from the replica that stored them to the owner of
// their check's shard, which judges them (VANTAGE_JUDGE=owner). Ingest on any replica stores a
// batch without judging it (Sink) and publishes its finals, one core NATS message per shard,
// on vantage.finals.<shard> (Publisher). The shard's owner (Router) subscribes to the
// subjects of the shards the scheduler's lease gives it and hands their finals to its judge:
//
//	scheduler holds shard k ──ShardsTaken──▶ Router: subscribe vantage.finals.k (messages wait)
//	                                                  judge.Take(k)   (recovery from PostgreSQL,
//	                                                                   retried until it succeeds)
//	                                                  deliver: judge.Judge(batches of all shards)
//	scheduler gives shard k ──ShardsGiven──▶ Router: unsubscribe, drop what waits,
//	                                                  let the batch being judged end, judge.Give(k)
//	                                        then the lease releases k's lock
//
// Core NATS may lose messages: a subscription that overflowed (its Dropped count grew), a
// reconnect, a message that does not decode. The stored rows stay the record, so the Router
// answers a loss with a re-sync: judge.Take again for the shards concerned, which re-reads
// them from PostgreSQL. Publishing is not acknowledged by the owner; a publish the connection
// refused fails the ingest batch, and the agent's redelivery publishes it again (the judge
// ignores finals it has judged).
package finals
