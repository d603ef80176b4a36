package cli

import (
	"context"
	"slices"
	"strings"

	"github.com/iggo-dev/iggo/client"
	"github.com/iggo-dev/iggo/wire"
)

// permField is one named permission flag of a permission set, in wire
// order (semantics.md §2.3).
type permField struct {
	name string
	val  *bool
}

func globalPermissionFields(g *wire.GlobalPermissions) []permField {
	return []permField{
		{"manage_servers", &g.ManageServers}, {"read_servers", &g.ReadServers},
		{"manage_users", &g.ManageUsers}, {"read_users", &g.ReadUsers},
		{"manage_streams", &g.ManageStreams}, {"read_streams", &g.ReadStreams},
		{"manage_topics", &g.ManageTopics}, {"read_topics", &g.ReadTopics},
		{"poll_messages", &g.PollMessages}, {"send_messages", &g.SendMessages},
	}
}

func streamPermissionFields(s *wire.StreamPermissions) []permField {
	return []permField{
		{"manage_stream", &s.ManageStream}, {"read_stream", &s.ReadStream},
		{"manage_topics", &s.ManageTopics}, {"read_topics", &s.ReadTopics},
		{"poll_messages", &s.PollMessages}, {"send_messages", &s.SendMessages},
	}
}

func topicPermissionFields(t *wire.TopicPermissions) []permField {
	return []permField{
		{"manage_topic", &t.ManageTopic}, {"read_topic", &t.ReadTopic},
		{"poll_messages", &t.PollMessages}, {"send_messages", &t.SendMessages},
	}
}

// names lists the set permissions.
func names(fs []permField) []string {
	out := []string{}
	for _, f := range fs {
		if *f.val {
			out = append(out, f.name)
		}
	}
	return out
}

func fieldNames(fs []permField) string {
	n := make([]string, len(fs))
	for i, f := range fs {
		n[i] = f.name
	}
	return strings.Join(n, ", ")
}

// setPermissions sets the comma-separated permissions list on fs; "all"
// sets every one. Dashes are accepted for underscores.
func setPermissions(flag, list string, fs []permField) error {
	for _, p := range strings.Split(list, ",") {
		p = strings.ReplaceAll(strings.ToLower(strings.TrimSpace(p)), "-", "_")
		if p == "" {
			continue
		}
		if p == "all" {
			for _, f := range fs {
				*f.val = true
			}
			continue
		}
		i := slices.IndexFunc(fs, func(f permField) bool { return f.name == p })
		if i < 0 {
			return usagef("%s: unknown permission %q (want all or %s)", flag, p, fieldNames(fs))
		}
		*fs[i].val = true
	}
	return nil
}

// permFlags are the permission flags of `user create` and
// `user permissions`.
type permFlags struct {
	global  string
	streams []string // STREAM=perm,perm
	topics  []string // STREAM/TOPIC=perm,perm
}

// given reports whether any permission flag was given.
func (p *permFlags) given() bool {
	return p.global != "" || len(p.streams) > 0 || len(p.topics) > 0
}

// build resolves the flags into a permission set; stream and topic names
// are resolved to their numeric ids (permissions are keyed by id,
// semantics.md §2.3). No flags is nil (no permissions).
func (p *permFlags) build(ctx context.Context, c *client.Client) (*wire.Permissions, error) {
	if !p.given() {
		return nil, nil
	}
	perms := &wire.Permissions{}
	if err := setPermissions("--global", p.global, globalPermissionFields(&perms.Global)); err != nil {
		return nil, err
	}
	streamEntry := func(arg string) (*wire.StreamPermissions, error) {
		id, err := resolveStreamID(ctx, c, arg)
		if err != nil {
			return nil, err
		}
		for i := range perms.Streams {
			if perms.Streams[i].StreamID == id {
				return &perms.Streams[i], nil
			}
		}
		perms.Streams = append(perms.Streams, wire.StreamPermissions{StreamID: id})
		return &perms.Streams[len(perms.Streams)-1], nil
	}
	for _, s := range p.streams {
		name, list, ok := strings.Cut(s, "=")
		if !ok || name == "" {
			return nil, usagef("--stream %q: want STREAM=PERMISSION[,PERMISSION...]", s)
		}
		e, err := streamEntry(name)
		if err != nil {
			return nil, err
		}
		if err := setPermissions("--stream", list, streamPermissionFields(e)); err != nil {
			return nil, err
		}
	}
	for _, s := range p.topics {
		path, list, ok := strings.Cut(s, "=")
		st, tp, ok2 := strings.Cut(path, "/")
		if !ok || !ok2 || st == "" || tp == "" {
			return nil, usagef("--topic %q: want STREAM/TOPIC=PERMISSION[,PERMISSION...]", s)
		}
		e, err := streamEntry(st)
		if err != nil {
			return nil, err
		}
		tid, err := resolveTopicID(ctx, c, st, tp)
		if err != nil {
			return nil, err
		}
		i := slices.IndexFunc(e.Topics, func(t wire.TopicPermissions) bool { return t.TopicID == tid })
		if i < 0 {
			e.Topics = append(e.Topics, wire.TopicPermissions{TopicID: tid})
			i = len(e.Topics) - 1
		}
		if err := setPermissions("--topic", list, topicPermissionFields(&e.Topics[i])); err != nil {
			return nil, err
		}
	}
	return perms, nil
}

// resolveStreamID returns the numeric id of a stream argument, asking the
// server for names.
func resolveStreamID(ctx context.Context, c *client.Client, arg string) (uint32, error) {
	id, err := parseID("stream", arg)
	if err != nil || id.IsNumeric() {
		return id.Num, err
	}
	s, err := c.GetStream(ctx, id)
	if err != nil {
		return 0, wrapf(err, "stream %s", arg)
	}
	return s.ID, nil
}

// resolveTopicID returns the numeric id of a topic argument.
func resolveTopicID(ctx context.Context, c *client.Client, stream, topic string) (uint32, error) {
	tid, err := parseID("topic", topic)
	if err != nil || tid.IsNumeric() {
		return tid.Num, err
	}
	sid, err := parseID("stream", stream)
	if err != nil {
		return 0, err
	}
	t, err := c.GetTopic(ctx, sid, tid)
	if err != nil {
		return 0, wrapf(err, "topic %s/%s", stream, topic)
	}
	return t.ID, nil
}
