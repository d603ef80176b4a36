package httpapi

import (
	"net/http"

	"github.com/iggo-dev/iggo/wire"
)

// Path prefixes of the route table.
const (
	pStream = "/streams/{stream_id}"
	pTopic  = pStream + "/topics/{topic_id}"
)

// table is the one route table (http-api.md §6): New registers every row
// on the mux and /openapi.json describes exactly these rows.
func (s *Server) table() []*route {
	rs := []*route{
		{Method: "GET", Pattern: "/ping", Command: wire.CmdPing, Auth: authPublic, Summary: "Ping", Status: 200, ContentType: "text/plain", handle: (*call).ping},
		{Method: "GET", Pattern: "/stats", Command: wire.CmdGetStats, Auth: authRule, Flags: flagConsistency, Summary: "Server statistics", Response: Stats{}, Status: 200, handle: (*call).stats},
		{Method: "POST", Pattern: "/snapshot", Command: wire.CmdGetSnapshotFile, Auth: authRule, Flags: flagConsistency, Summary: "Diagnostic snapshot (zip)", Request: SnapshotRequest{}, Status: 200, ContentType: "application/zip", handle: (*call).snapshot},
		{Method: "GET", Pattern: "/cluster/metadata", Command: wire.CmdGetClusterMetadata, Auth: authAny, Summary: "Cluster metadata", Response: ClusterMetadata{}, Status: 200, handle: (*call).clusterMetadata},
		{Method: "GET", Pattern: "/cluster/partitions", Command: wire.CmdClusterPartitions, Auth: authAny, Summary: "Partition map: replicas, leader and caught-up replicas of every partition the caller may see (Iggo extension; cluster mode)", Response: ClusterPartitions{}, Status: 200, handle: (*call).clusterPartitions},
		{Method: "GET", Pattern: "/options/{scope}", Command: wire.CmdDescribeOptions, Auth: authAny, Summary: "Describe the option catalog of topic, stream or user", Response: []OptionDescription{}, Status: 200, handle: (*call).describeOptions},
		{Method: "GET", Pattern: "/clients", Command: wire.CmdGetClients, Auth: authRule, Flags: flagConsistency, Summary: "List binary clients", Response: []ClientInfo{}, Status: 200, handle: (*call).getClients},
		{Method: "GET", Pattern: "/config", Auth: authAny, Summary: "Effective server configuration, secrets masked (Iggo extension; needs read_servers)", Response: map[string]any{}, Status: 200, handle: (*call).getConfig},
		{Method: "GET", Pattern: "/clients/{client_id}", Command: wire.CmdGetClient, Auth: authRule, Flags: flagConsistency, Summary: "Get a binary client", Response: ClientInfoDetails{}, Status: 200, handle: (*call).getClient},

		{Method: "POST", Pattern: "/users/login", Auth: authPublic, Summary: "Log in with username and password", Request: loginRequest{}, Response: identityInfo{}, Status: 200, handle: (*call).login},
		{Method: "POST", Pattern: "/users/refresh-token", Auth: authPublic, Summary: "Issue a new token for a valid one", Request: tokenRequest{}, Response: identityInfo{}, Status: 200, handle: (*call).refresh},
		{Method: "DELETE", Pattern: "/users/logout", Command: wire.CmdLogoutUser, Auth: authAny, Flags: flagForward, Summary: "End the credential's session and revoke the token", Status: 204, handle: (*call).logout},
		{Method: "POST", Pattern: "/users/logout", Command: wire.CmdLogoutUser, Auth: authAny, Flags: flagForward, Summary: "Logout (the web console's verb)", Status: 204, handle: (*call).logout},
		{Method: "GET", Pattern: "/users", Command: wire.CmdGetUsers, Auth: authRule, Flags: flagConsistency | flagForward, Summary: "List users", Response: []UserInfo{}, Status: 200, handle: (*call).getUsers},
		{Method: "POST", Pattern: "/users", Command: wire.CmdCreateUser, Auth: authRule, Flags: flagConsistency | flagForward, Summary: "Create a user", Request: CreateUserRequest{}, Response: UserInfoDetails{}, Status: 200, handle: (*call).createUser},
		{Method: "GET", Pattern: "/users/{user_id}", Command: wire.CmdGetUser, Auth: authRule, Flags: flagConsistency | flagForward, Summary: "Get a user (me = the caller)", Response: UserInfoDetails{}, Status: 200, handle: (*call).getUser},
		{Method: "PUT", Pattern: "/users/{user_id}", Command: wire.CmdUpdateUser, Auth: authRule, Flags: flagConsistency | flagForward, Summary: "Update a user", Request: UpdateUserRequest{}, Status: 204, handle: (*call).updateUser},
		{Method: "DELETE", Pattern: "/users/{user_id}", Command: wire.CmdDeleteUser, Auth: authRule, Flags: flagConsistency | flagForward, Summary: "Delete a user", Status: 204, handle: (*call).deleteUser},
		{Method: "PUT", Pattern: "/users/{user_id}/password", Command: wire.CmdChangePassword, Auth: authRule, Flags: flagForward, Summary: "Change a password (revokes the user's earlier tokens)", Request: ChangePasswordRequest{}, Status: 204, handle: (*call).changePassword},
		{Method: "PUT", Pattern: "/users/{user_id}/permissions", Command: wire.CmdUpdatePermissions, Auth: authRule, Flags: flagForward, Summary: "Replace a user's permissions", Request: UpdatePermissionsRequest{}, Status: 204, handle: (*call).updatePermissions},

		{Method: "GET", Pattern: "/personal-access-tokens", Command: wire.CmdGetPersonalAccessTokens, Auth: authAny, Flags: flagConsistency | flagForward, Summary: "List the caller's tokens", Response: []PAT{}, Status: 200, handle: (*call).getPATs},
		{Method: "POST", Pattern: "/personal-access-tokens", Command: wire.CmdCreatePersonalAccessToken, Auth: authAny, Flags: flagConsistency | flagForward, Summary: "Create a personal access token", Request: CreatePATRequest{}, Response: RawToken{}, Status: 200, handle: (*call).createPAT},
		{Method: "DELETE", Pattern: "/personal-access-tokens/{name}", Command: wire.CmdDeletePersonalAccessToken, Auth: authAny, Flags: flagForward, Summary: "Delete a personal access token", Status: 204, handle: (*call).deletePAT},
		{Method: "POST", Pattern: "/personal-access-tokens/login", Auth: authPublic, Summary: "Exchange a personal access token for a JWT", Request: tokenRequest{}, Response: identityInfo{}, Status: 200, handle: (*call).patLogin},

		{Method: "GET", Pattern: "/streams", Command: wire.CmdGetStreams, Auth: authRule, Flags: flagConsistency | flagForward, Summary: "List streams", Response: []Stream{}, Status: 200, handle: (*call).getStreams},
		{Method: "POST", Pattern: "/streams", Command: wire.CmdCreateStream, Auth: authRule, Flags: flagConsistency | flagForward, Summary: "Create a stream", Request: CreateStreamRequest{}, Response: StreamDetails{}, Status: 200, handle: (*call).createStream},
		{Method: "GET", Pattern: pStream, Command: wire.CmdGetStream, Auth: authRule, Flags: flagConsistency | flagForward, Summary: "Get a stream", Response: StreamDetails{}, Status: 200, handle: (*call).getStream},
		{Method: "PUT", Pattern: pStream, Command: wire.CmdUpdateStream, Auth: authRule, Flags: flagConsistency | flagForward, Summary: "Rename a stream", Request: UpdateStreamRequest{}, Status: 204, handle: (*call).updateStream},
		{Method: "DELETE", Pattern: pStream, Command: wire.CmdDeleteStream, Auth: authRule, Flags: flagConsistency | flagForward, Summary: "Delete a stream", Status: 204, handle: (*call).deleteStream},
		{Method: "DELETE", Pattern: pStream + "/purge", Command: wire.CmdPurgeStream, Auth: authRule, Flags: flagForward, Summary: "Purge a stream's messages", Status: 204, handle: (*call).purgeStream},

		{Method: "GET", Pattern: pStream + "/topics", Command: wire.CmdGetTopics, Auth: authRule, Flags: flagConsistency | flagForward, Summary: "List a stream's topics", Response: []Topic{}, Status: 200, handle: (*call).getTopics},
		{Method: "POST", Pattern: pStream + "/topics", Command: wire.CmdCreateTopic, Auth: authRule, Flags: flagConsistency | flagForward, Summary: "Create a topic", Request: CreateTopicRequest{}, Response: TopicDetails{}, Status: 200, handle: (*call).createTopic},
		{Method: "GET", Pattern: pTopic, Command: wire.CmdGetTopic, Auth: authRule, Flags: flagConsistency | flagForward, Summary: "Get a topic", Response: TopicDetails{}, Status: 200, handle: (*call).getTopic},
		{Method: "PUT", Pattern: pTopic, Command: wire.CmdUpdateTopic, Auth: authRule, Flags: flagConsistency | flagForward, Summary: "Update a topic", Request: UpdateTopicRequest{}, Status: 204, handle: (*call).updateTopic},
		{Method: "DELETE", Pattern: pTopic, Command: wire.CmdDeleteTopic, Auth: authRule, Flags: flagConsistency | flagForward, Summary: "Delete a topic", Status: 204, handle: (*call).deleteTopic},
		{Method: "DELETE", Pattern: pTopic + "/purge", Command: wire.CmdPurgeTopic, Auth: authRule, Flags: flagForward, Summary: "Purge a topic's messages", Status: 204, handle: (*call).purgeTopic},
		{Method: "POST", Pattern: pTopic + "/partitions", Command: wire.CmdCreatePartitions, Auth: authRule, Flags: flagForward, Summary: "Add partitions", Request: CreatePartitionsRequest{}, Status: 200, handle: (*call).createPartitions},
		{Method: "DELETE", Pattern: pTopic + "/partitions", Command: wire.CmdDeletePartitions, Auth: authRule, Flags: flagForward, Summary: "Remove the highest partitions", Query: []string{"partitions_count"}, Status: 204, handle: (*call).deletePartitions},
		{Method: "POST", Pattern: pTopic + "/partitions/verify", Command: wire.CmdVerifyPartition, Auth: authRule, Summary: "Re-verify the stored records of the topic's partitions (or of partition_id) on this node and list what is quarantined (Iggo extension; manage_topic)", Query: []string{"partition_id"}, Response: VerifyPartitions{}, Status: 200, handle: (*call).verifyPartitions},
		{Method: "DELETE", Pattern: pTopic + "/partitions/{partition_id}", Command: wire.CmdDeleteSegments, Auth: authRule, Flags: flagForward, Summary: "Delete the oldest segments of a partition", Query: []string{"segments_count"}, Status: 204, handle: (*call).deleteSegments},

		{Method: "GET", Pattern: pTopic + "/consumer-groups", Command: wire.CmdGetConsumerGroups, Auth: authRule, Flags: flagConsistency | flagForward, Summary: "List consumer groups", Response: []ConsumerGroup{}, Status: 200, handle: (*call).getGroups},
		{Method: "POST", Pattern: pTopic + "/consumer-groups", Command: wire.CmdCreateConsumerGroup, Auth: authRule, Flags: flagConsistency | flagForward, Summary: "Create a consumer group", Request: CreateGroupRequest{}, Response: ConsumerGroupDetails{}, Status: 200, handle: (*call).createGroup},
		{Method: "GET", Pattern: pTopic + "/consumer-groups/{group_id}", Command: wire.CmdGetConsumerGroup, Auth: authRule, Flags: flagConsistency | flagForward, Summary: "Get a consumer group", Response: ConsumerGroupDetails{}, Status: 200, handle: (*call).getGroup},
		{Method: "DELETE", Pattern: pTopic + "/consumer-groups/{group_id}", Command: wire.CmdDeleteConsumerGroup, Auth: authRule, Flags: flagConsistency | flagForward, Summary: "Delete a consumer group", Status: 204, handle: (*call).deleteGroup},

		{Method: "GET", Pattern: pTopic + "/messages", Command: wire.CmdPollMessages, Auth: authRule, Flags: flagConsistency, Summary: "Poll messages", Query: []string{"consumer_id", "partition_id", "kind", "value", "count", "auto_commit"}, Response: PolledMessages{}, Status: 200, handle: (*call).pollMessages},
		{Method: "POST", Pattern: pTopic + "/messages", Command: wire.CmdSendMessages, Auth: authRule, Summary: "Send messages (201 with ack=replicated, 202 with ack=none)", Query: []string{"ack"}, Request: SendMessagesRequest{}, Response: SendMessagesReply{}, Status: 201, handle: (*call).sendMessages},
		{Method: "GET", Pattern: pTopic + "/consumer-offsets", Command: wire.CmdGetConsumerOffset, Auth: authRule, Flags: flagConsistency, Summary: "Get a stored consumer offset (consumer_kind=consumer_group: Iggo extension)", Query: []string{"consumer_kind", "consumer_id", "partition_id"}, Response: ConsumerOffset{}, Status: 200, handle: (*call).getOffset},
		{Method: "PUT", Pattern: pTopic + "/consumer-offsets", Command: wire.CmdStoreConsumerOffset, Auth: authRule, Summary: "Store a consumer offset", Request: StoreOffsetRequest{}, Status: 204, handle: (*call).storeOffset},
		{Method: "DELETE", Pattern: pTopic + "/consumer-offsets/{consumer_id}", Command: wire.CmdDeleteConsumerOffset, Auth: authRule, Summary: "Delete a stored consumer offset (consumer_kind=consumer_group: Iggo extension)", Query: []string{"consumer_kind", "partition_id"}, Status: 204, handle: (*call).deleteOffset},

		{Method: "GET", Pattern: "/{$}", Auth: authPublic, Summary: "Redirect to the web console (/ui/) when it is on; else 404 saying how to turn it on", Status: 302, ContentType: "text/html", handle: (*call).root},
		{Method: "GET", Pattern: "/ui", Auth: authPublic, Summary: "Web console", Status: 200, ContentType: "text/html", handle: (*call).webUI},
		{Method: "GET", Pattern: "/ui/{path...}", Auth: authPublic, Summary: "Web console assets", Status: 200, ContentType: "application/octet-stream", handle: (*call).webUI},
		{Method: "GET", Pattern: "/openapi.json", Auth: authPublic, Summary: "This document (OpenAPI 3.1)", Status: 200, handle: (*call).openAPI},
	}
	if s.cfg.Metrics.Enabled {
		rs = append(rs, &route{Method: "GET", Pattern: s.cfg.Metrics.Endpoint, Auth: authAny, Summary: "Prometheus metrics", Status: 200, ContentType: "text/plain", handle: (*call).metrics})
	}
	return rs
}

func (c *call) openAPI() error {
	data, err := c.s.OpenAPI()
	if err != nil {
		return err
	}
	c.w.Header().Set("Content-Type", "application/json")
	c.w.WriteHeader(http.StatusOK)
	_, _ = c.w.Write(data)
	return nil
}
