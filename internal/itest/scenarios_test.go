package itest

import "testing"

// transportScenarios are the TCP scenario tests that hold on every
// transport: they speak the protocol through Server.Dial, which follows
// EnvTransport. Tests of TCP framing (torn-down connections and eviction
// 6 on bad or oversized frames, legacy clients, write timeouts,
// connection floods) and of the transport byte in GET_ME are TCP-only;
// QUIC and WebSocket have their own hostile-input tests. except names a
// transport a scenario does not apply to.
var transportScenarios = []struct {
	name   string
	test   func(*testing.T)
	except string
}{
	{"LoginPingLogout", TestLoginPingLogout, ""},
	{"LoginWithPAT", TestLoginWithPAT, ""},
	{"ReplyEchoes", TestReplyEchoes, ""},
	{"LoginFailures", TestLoginFailures, ""},
	{"SessionGate", TestSessionGate, ""},
	{"RequestChecksum", TestRequestChecksum, ""},
	{"HeaderRuleViolations", TestHeaderRuleViolations, ""},
	{"SessionEpochs", TestSessionEpochs, ""},
	{"MetadataDedup", TestMetadataDedup, ""},
	{"StreamCommands", TestStreamCommands, ""},
	{"TopicCommands", TestTopicCommands, ""},
	{"ConsumerGroupCommands", TestConsumerGroupCommands, ""},
	{"UserCommands", TestUserCommands, ""},
	{"PersonalAccessTokens", TestPersonalAccessTokens, ""},
	{"PermissionRules", TestPermissionRules, ""},
	{"SelfService", TestSelfService, ""},
	{"SystemCommands", TestSystemCommands, ""},
	{"SendPartitioningKinds", TestSendPartitioningKinds, ""},
	{"SendDuplicateWindow", TestSendDuplicateWindow, ""},
	{"SendPollEveryStrategy", TestSendPollEveryStrategy, ""},
	{"PollOverTLS", TestPollOverTLS, ""},
	{"ConsumerOffsets", TestConsumerOffsets, ""},
	{"GroupPolling", TestGroupPolling, ""},
	{"GroupMembership", TestGroupMembership, ""},
	{"GroupLeaveAndDisconnect", TestGroupLeaveAndDisconnect, ""},
	// On QUIC an eviction raised between requests waits for the client's
	// next stream (TestQUICStaleEvictionOnNextStream).
	{"GroupStaleMemberEviction", TestGroupStaleMemberEviction, TransportQUIC},
	{"StaleClientEviction", TestStaleClientEviction, TransportQUIC},
	{"DisconnectLogsOut", TestDisconnectLogsOut, ""},
	{"PipelinedRepliesInOrder", TestPipelinedRepliesInOrder, ""},
}

// runScenarios runs transportScenarios with Dial over transport.
func runScenarios(t *testing.T, transport string) {
	for _, sc := range transportScenarios {
		if sc.except == transport {
			continue
		}
		t.Run(sc.name, func(t *testing.T) {
			t.Setenv(EnvTransport, transport)
			sc.test(t)
		})
	}
}
