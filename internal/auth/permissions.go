package auth

// GlobalPermissions are the ten server-wide flags, in wire order
// (encodings.md, "Permissions").
type GlobalPermissions struct {
	ManageServers bool
	ReadServers   bool
	ManageUsers   bool
	ReadUsers     bool
	ManageStreams bool
	ReadStreams   bool
	ManageTopics  bool
	ReadTopics    bool
	PollMessages  bool
	SendMessages  bool
}

// TopicPermissions are the per-topic flags inside a stream entry.
type TopicPermissions struct {
	ManageTopic  bool
	ReadTopic    bool
	PollMessages bool
	SendMessages bool
}

// StreamPermissions are the per-stream flags and the topic map, keyed by
// numeric topic id.
type StreamPermissions struct {
	ManageStream bool
	ReadStream   bool
	ManageTopics bool
	ReadTopics   bool
	PollMessages bool
	SendMessages bool
	Topics       map[uint32]TopicPermissions
}

// Permissions is a user's whole permission set; Streams is keyed by
// numeric stream id.
type Permissions struct {
	Global  GlobalPermissions
	Streams map[uint32]StreamPermissions
}

// AllGlobal grants every global permission (the root user's set).
var AllGlobal = GlobalPermissions{true, true, true, true, true, true, true, true, true, true}

// CanReadServers reports the server_info rule (semantics.md §2.4):
// manage_servers or read_servers, always true for the root user. It guards
// GET_STATS, GET_CLIENTS, GET_CLIENT and GET_SNAPSHOT_FILE.
func (u *User) CanReadServers() bool {
	if u.ID == RootUserID {
		return true
	}
	return u.Permissions != nil && (u.Permissions.Global.ManageServers || u.Permissions.Global.ReadServers)
}
