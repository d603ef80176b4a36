package wire

import "testing"

// Conformance checks for stream, topic, partition, segment, consumer-group
// and options vectors.
var (
	catalogRequestVectors = map[string]func(*testing.T, requestVector){}
	catalogReplyVectors   = map[string]func(*testing.T, replyVector){}
)
