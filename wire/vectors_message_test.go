package wire

import "testing"

// Conformance checks for send, poll, consumer-offset and batch vectors.
var (
	messageRequestVectors = map[string]func(*testing.T, requestVector){}
	messageReplyVectors   = map[string]func(*testing.T, replyVector){}
	messageBatchVectors   = map[string]func(*testing.T, batchVector){}
)
