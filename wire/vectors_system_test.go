package wire

import "testing"

// Conformance checks for system, user, PAT, client and login vectors.
var (
	systemRequestVectors = map[string]func(*testing.T, requestVector){}
	systemReplyVectors   = map[string]func(*testing.T, replyVector){}
)
