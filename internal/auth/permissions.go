package auth

import "github.com/iggo-dev/iggo/wire"

// GlobalPermissions are the ten server-wide flags, in wire order
// (encodings.md, "Permissions"): the wire type itself, so a decoded
// permission set needs no conversion for its global part.
type GlobalPermissions = wire.GlobalPermissions

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
var AllGlobal = GlobalPermissions{
	ManageServers: true, ReadServers: true, ManageUsers: true, ReadUsers: true,
	ManageStreams: true, ReadStreams: true, ManageTopics: true, ReadTopics: true,
	PollMessages: true, SendMessages: true,
}

// CanManageServers reports the manage_servers permission (always true for
// the root user). It guards the cluster administration commands.
func (u *User) CanManageServers() bool {
	if u.ID == RootUserID {
		return true
	}
	return u.Permissions != nil && u.Permissions.Global.ManageServers
}

// CanReadServers reports the server_info rule (semantics.md §2.4):
// manage_servers or read_servers, always true for the root user. It guards
// GET_STATS, GET_CLIENTS, GET_CLIENT and GET_SNAPSHOT_FILE.
func (u *User) CanReadServers() bool {
	if u.ID == RootUserID {
		return true
	}
	return u.Permissions != nil && (u.Permissions.Global.ManageServers || u.Permissions.Global.ReadServers)
}
