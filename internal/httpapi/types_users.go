package httpapi

import (
	"sort"
	"strconv"

	"github.com/iggo-dev/iggo/wire"
)

// UserInfo is a user in a list.
type UserInfo struct {
	ID        uint32            `json:"id"`
	CreatedAt uint64            `json:"created_at"`
	Status    string            `json:"status"`
	Username  string            `json:"username"`
	Options   map[string]string `json:"options"`
}

// UserInfoDetails is a user with permissions.
type UserInfoDetails struct {
	ID          uint32            `json:"id"`
	CreatedAt   uint64            `json:"created_at"`
	Status      string            `json:"status"`
	Username    string            `json:"username"`
	Permissions *PermissionsJSON  `json:"permissions"`
	Options     map[string]string `json:"options"`
}

// GlobalPermissionsJSON is Permissions.global; every key is required in
// requests.
type GlobalPermissionsJSON struct {
	ManageServers *bool `json:"manage_servers"`
	ReadServers   *bool `json:"read_servers"`
	ManageUsers   *bool `json:"manage_users"`
	ReadUsers     *bool `json:"read_users"`
	ManageStreams *bool `json:"manage_streams"`
	ReadStreams   *bool `json:"read_streams"`
	ManageTopics  *bool `json:"manage_topics"`
	ReadTopics    *bool `json:"read_topics"`
	PollMessages  *bool `json:"poll_messages"`
	SendMessages  *bool `json:"send_messages"`
}

// StreamPermissionsJSON is one stream's entry.
type StreamPermissionsJSON struct {
	ManageStream bool                            `json:"manage_stream"`
	ReadStream   bool                            `json:"read_stream"`
	ManageTopics bool                            `json:"manage_topics"`
	ReadTopics   bool                            `json:"read_topics"`
	PollMessages bool                            `json:"poll_messages"`
	SendMessages bool                            `json:"send_messages"`
	Topics       map[string]TopicPermissionsJSON `json:"topics"`
}

// TopicPermissionsJSON is one topic's entry.
type TopicPermissionsJSON struct {
	ManageTopic  bool `json:"manage_topic"`
	ReadTopic    bool `json:"read_topic"`
	PollMessages bool `json:"poll_messages"`
	SendMessages bool `json:"send_messages"`
}

// PermissionsJSON is the Permissions object (keys of streams and topics
// are decimal ids).
type PermissionsJSON struct {
	Global  GlobalPermissionsJSON            `json:"global"`
	Streams map[string]StreamPermissionsJSON `json:"streams"`
}

func bp(b bool) *bool { return &b }

func permissionsJSON(p *wire.Permissions) *PermissionsJSON {
	if p == nil {
		return nil
	}
	g := p.Global
	out := &PermissionsJSON{Global: GlobalPermissionsJSON{
		ManageServers: bp(g.ManageServers), ReadServers: bp(g.ReadServers), ManageUsers: bp(g.ManageUsers), ReadUsers: bp(g.ReadUsers),
		ManageStreams: bp(g.ManageStreams), ReadStreams: bp(g.ReadStreams), ManageTopics: bp(g.ManageTopics), ReadTopics: bp(g.ReadTopics),
		PollMessages: bp(g.PollMessages), SendMessages: bp(g.SendMessages),
	}}
	if len(p.Streams) > 0 {
		out.Streams = map[string]StreamPermissionsJSON{}
		for _, s := range p.Streams {
			sj := StreamPermissionsJSON{ManageStream: s.ManageStream, ReadStream: s.ReadStream, ManageTopics: s.ManageTopics,
				ReadTopics: s.ReadTopics, PollMessages: s.PollMessages, SendMessages: s.SendMessages}
			if len(s.Topics) > 0 {
				sj.Topics = map[string]TopicPermissionsJSON{}
				for _, t := range s.Topics {
					sj.Topics[strconv.FormatUint(uint64(t.TopicID), 10)] = TopicPermissionsJSON{ManageTopic: t.ManageTopic,
						ReadTopic: t.ReadTopic, PollMessages: t.PollMessages, SendMessages: t.SendMessages}
				}
			}
			out.Streams[strconv.FormatUint(uint64(s.StreamID), 10)] = sj
		}
	}
	return out
}

// wirePermissions converts a request's permissions (nil stays nil).
func wirePermissions(p *PermissionsJSON) (*wire.Permissions, error) {
	if p == nil {
		return nil, nil
	}
	g := p.Global
	for _, f := range []*bool{g.ManageServers, g.ReadServers, g.ManageUsers, g.ReadUsers, g.ManageStreams, g.ReadStreams, g.ManageTopics, g.ReadTopics, g.PollMessages, g.SendMessages} {
		if f == nil {
			return nil, errUnprocessable("permissions.global: every key is required")
		}
	}
	out := &wire.Permissions{Global: wire.GlobalPermissions{
		ManageServers: *g.ManageServers, ReadServers: *g.ReadServers, ManageUsers: *g.ManageUsers, ReadUsers: *g.ReadUsers,
		ManageStreams: *g.ManageStreams, ReadStreams: *g.ReadStreams, ManageTopics: *g.ManageTopics, ReadTopics: *g.ReadTopics,
		PollMessages: *g.PollMessages, SendMessages: *g.SendMessages,
	}}
	for k, s := range p.Streams {
		id, err := strconv.ParseUint(k, 10, 32)
		if err != nil {
			return nil, errUnprocessable("permissions.streams: key " + strconv.Quote(k) + " is not a stream id")
		}
		sp := wire.StreamPermissions{StreamID: uint32(id), ManageStream: s.ManageStream, ReadStream: s.ReadStream,
			ManageTopics: s.ManageTopics, ReadTopics: s.ReadTopics, PollMessages: s.PollMessages, SendMessages: s.SendMessages}
		for tk, t := range s.Topics {
			tid, err := strconv.ParseUint(tk, 10, 32)
			if err != nil {
				return nil, errUnprocessable("permissions.topics: key " + strconv.Quote(tk) + " is not a topic id")
			}
			sp.Topics = append(sp.Topics, wire.TopicPermissions{TopicID: uint32(tid), ManageTopic: t.ManageTopic,
				ReadTopic: t.ReadTopic, PollMessages: t.PollMessages, SendMessages: t.SendMessages})
		}
		sort.Slice(sp.Topics, func(i, j int) bool { return sp.Topics[i].TopicID < sp.Topics[j].TopicID })
		out.Streams = append(out.Streams, sp)
	}
	sort.Slice(out.Streams, func(i, j int) bool { return out.Streams[i].StreamID < out.Streams[j].StreamID })
	return out, nil
}

func userJSON(u *wire.User) UserInfo {
	return UserInfo{ID: u.ID, CreatedAt: u.CreatedAt, Status: u.Status.String(), Username: u.Username, Options: map[string]string{}}
}

func userDetailsJSON(d *wire.UserDetails) UserInfoDetails {
	u := userJSON(&d.User)
	return UserInfoDetails{ID: u.ID, CreatedAt: u.CreatedAt, Status: u.Status, Username: u.Username,
		Permissions: permissionsJSON(d.Permissions), Options: u.Options}
}

// parseStatus reads "active"/"inactive".
func parseStatus(s string) (wire.UserStatus, bool) {
	switch s {
	case "active", "Active":
		return wire.UserActive, true
	case "inactive", "Inactive":
		return wire.UserInactive, true
	}
	return 0, false
}

// PAT is a personal access token in a list.
type PAT struct {
	Name     string  `json:"name"`
	ExpiryAt *uint64 `json:"expiry_at"`
}

// RawToken is the reply of POST /personal-access-tokens.
type RawToken struct {
	Token string `json:"token"`
}
