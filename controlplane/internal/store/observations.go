package store

// KindObservations are what the extension kinds (ping, gRPC, WebSocket) observe beyond the
// columns every result has. They are kept in check_results.details under these keys (the
// ingest writes them, ListCheckResults reads them back) rather than in columns of their own:
// only results of those kinds have them, and nothing filters or aggregates on them.
type KindObservations struct {
	PingObservation
	GRPCStatus *string `json:"grpc_status,omitempty"` // SERVING, NOT_SERVING, ... or the RPC's error code
	WebSocketObservation
}

// The observations' fields are always written (null when unobserved) so that the API renders
// every field of a kind's result; the ingest writes a kind's struct only for results of that
// kind.

// PingObservation is a ping attempt: echo requests sent, replies received, and the round
// trips of the replies (nil when none came back).
type PingObservation struct {
	PingSent        *int     `json:"ping_sent"`
	PingReceived    *int     `json:"ping_received"`
	PingLossPercent *float64 `json:"ping_loss_percent"`
	PingRTTMinMs    *float64 `json:"ping_rtt_min_ms"`
	PingRTTAvgMs    *float64 `json:"ping_rtt_avg_ms"`
	PingRTTMaxMs    *float64 `json:"ping_rtt_max_ms"`
	PingRTTStddevMs *float64 `json:"ping_rtt_stddev_ms"`
}

// WebSocketObservation is a WebSocket attempt: the time from the request to the open
// connection, and from the message sent to the matching reply.
type WebSocketObservation struct {
	WebSocketOpenMs  *float64 `json:"websocket_open_ms"`
	WebSocketReplyMs *float64 `json:"websocket_reply_ms"`
}
