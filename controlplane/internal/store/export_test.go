package store

// The binary uuid plans, for TestUUIDCodec to recognize.
type (
	EncodeUUIDPlan = encodeUUID
	ScanUUIDPlan   = scanUUID
)
