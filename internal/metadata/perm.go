package metadata

import (
	"github.com/iggo-dev/iggo/internal/auth"
)

// The permission rules of semantics.md §2.4, exactly. Each takes the
// user's permission set (nil: none). The root user (id 0) bypasses them:
// callers check that first (rootOr).

func streamEntry(p *auth.Permissions, s uint32) (auth.StreamPermissions, bool) {
	if p == nil || p.Streams == nil {
		return auth.StreamPermissions{}, false
	}
	e, ok := p.Streams[s]
	return e, ok
}

func topicEntry(p *auth.Permissions, s, t uint32) (auth.TopicPermissions, bool) {
	e, ok := streamEntry(p, s)
	if !ok || e.Topics == nil {
		return auth.TopicPermissions{}, false
	}
	te, ok := e.Topics[t]
	return te, ok
}

// canReadServers: server_info (stats, clients, client, snapshot).
func canReadServers(p *auth.Permissions) bool {
	return p != nil && (p.Global.ManageServers || p.Global.ReadServers)
}

// canReadUsers: get user, get users.
func canReadUsers(p *auth.Permissions) bool {
	return p != nil && (p.Global.ManageUsers || p.Global.ReadUsers)
}

// canManageUsers: create/update/delete user, update permissions, change
// another user's password.
func canManageUsers(p *auth.Permissions) bool { return p != nil && p.Global.ManageUsers }

// canGetStreams: list streams.
func canGetStreams(p *auth.Permissions) bool {
	return p != nil && (p.Global.ManageStreams || p.Global.ReadStreams)
}

// canGetStream: get one stream.
func canGetStream(p *auth.Permissions, s uint32) bool {
	if canGetStreams(p) {
		return true
	}
	e, ok := streamEntry(p, s)
	return ok && (e.ManageStream || e.ReadStream)
}

// canCreateStream: create stream.
func canCreateStream(p *auth.Permissions) bool { return p != nil && p.Global.ManageStreams }

// canManageStream: update, delete, purge stream.
func canManageStream(p *auth.Permissions, s uint32) bool {
	if p == nil {
		return false
	}
	if p.Global.ManageStreams {
		return true
	}
	e, ok := streamEntry(p, s)
	return ok && e.ManageStream
}

// canGetTopics: list the topics of a stream.
func canGetTopics(p *auth.Permissions, s uint32) bool {
	if p == nil {
		return false
	}
	g := p.Global
	if g.ReadStreams || g.ManageStreams || g.ManageTopics || g.ReadTopics {
		return true
	}
	e, ok := streamEntry(p, s)
	return ok && (e.ManageStream || e.ReadStream || e.ManageTopics || e.ReadTopics)
}

// canGetTopic: get one topic; also every consumer-group command.
func canGetTopic(p *auth.Permissions, s, t uint32) bool {
	if canGetTopics(p, s) {
		return true
	}
	e, ok := topicEntry(p, s, t)
	return ok && (e.ManageTopic || e.ReadTopic)
}

// canCreateTopic: create a topic in stream s.
func canCreateTopic(p *auth.Permissions, s uint32) bool {
	if p == nil {
		return false
	}
	if p.Global.ManageStreams || p.Global.ManageTopics {
		return true
	}
	e, ok := streamEntry(p, s)
	return ok && (e.ManageStream || e.ManageTopics)
}

// canManageTopic: update, delete, purge topic; create/delete partitions;
// delete segments.
func canManageTopic(p *auth.Permissions, s, t uint32) bool {
	if canCreateTopic(p, s) {
		return true
	}
	e, ok := topicEntry(p, s, t)
	return ok && e.ManageTopic
}

// canPoll: poll messages; get/store/delete consumer offset.
func canPoll(p *auth.Permissions, s, t uint32) bool {
	if p == nil {
		return false
	}
	g := p.Global
	if g.PollMessages || g.ReadTopics || g.ManageTopics || g.ReadStreams || g.ManageStreams {
		return true
	}
	if e, ok := streamEntry(p, s); ok && (e.PollMessages || e.ManageStream || e.ReadStream || e.ManageTopics || e.ReadTopics) {
		return true
	}
	e, ok := topicEntry(p, s, t)
	return ok && (e.ManageTopic || e.ReadTopic || e.PollMessages)
}

// canSend: send messages.
func canSend(p *auth.Permissions, s, t uint32) bool {
	if p == nil {
		return false
	}
	g := p.Global
	if g.SendMessages || g.ManageStreams || g.ManageTopics {
		return true
	}
	if e, ok := streamEntry(p, s); ok && (e.SendMessages || e.ManageStream || e.ManageTopics) {
		return true
	}
	e, ok := topicEntry(p, s, t)
	return ok && (e.ManageTopic || e.SendMessages)
}
