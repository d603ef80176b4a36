package partition

import (
	"errors"

	"github.com/iggo-dev/iggo/internal/catalog"
	"github.com/iggo-dev/iggo/internal/dispatch"
	"github.com/iggo-dev/iggo/internal/storage"
	"github.com/iggo-dev/iggo/internal/xhash"
	"github.com/iggo-dev/iggo/wire"
)

// target is a resolved (topic, partition, consumer) of a poll or an
// offset command.
type target struct {
	ref  catalog.TopicRef
	part *partition
	kind storage.ConsumerKind
	id   uint32
	// client is the caller's session client id as consumer groups know
	// it (group members report polls and commits under it): the
	// coordinator session's for an attached data connection.
	client wire.Uint128
}

// consumerKey is the offset key of a plain consumer (semantics.md §5):
// the numeric id, or XXH32 of the name.
func consumerKey(id wire.Identifier) uint32 {
	if id.Kind == wire.IDString {
		return xhash.XXH32String(id.Str)
	}
	return id.Num
}

// resolveStatus says how a resolution failure is answered.
type resolveStatus uint8

const (
	resolvedOK resolveStatus = iota
	// resolvedDeny: status-deny with the code.
	resolvedDeny
	// resolvedResync: the group member does not own the partition; a poll
	// answers the RESYNC head, an offset write status 20.
	resolvedResync
	// resolvedNothing: a group poll without a partition id (empty poll,
	// semantics.md §4.2); an offset write answers 20.
	resolvedNothing
)

// resolveOpts select the codes of a command family.
type resolveOpts struct {
	action catalog.Action
	// writeCodes maps stream/topic/partition misses and group failures
	// to 20 ResourceNotFound (partition-plane writes, semantics.md §5 and
	// the reference's answer for any resolution failure on that path);
	// reads use 1009/2010/3007 and 5000.
	writeCodes bool
	// groupAccess, when set, makes group consumers pass
	// catalog.Topics.GroupPartition with it (GroupPoll for polls,
	// GroupCommit for offset writes); GET_CONSUMER_OFFSET leaves it zero
	// and lets non-members read.
	groupAccess catalog.GroupAccess
}

// resolve finds the topic, checks permission, and resolves the consumer
// and the partition. An omitted partition is partition 0 for plain
// consumers and group offset reads; group polls and offset writes must
// name it (semantics.md §4.2, §5: the server does not pick a partition
// for a group member), else resolvedNothing.
func (p *Plane) resolve(x *dispatch.Exchange, c wire.Consumer, stream, topicID wire.Identifier, opt wire.OptPartition, o resolveOpts) (target, resolveStatus, uint32) {
	cat := p.catalog()
	if cat == nil {
		// No topic resolver (no metadata plane wired): not served.
		return target{}, resolvedDeny, wire.ErrFeatureUnavailable.Code
	}
	b, ok := x.Conn.Binding()
	if !ok {
		return target{}, resolvedDeny, wire.ErrResourceNotFound.Code
	}
	// Consumer groups know the request by the group client: the
	// coordinator session of an attached data connection
	// (session.Binding.GroupClient).
	user, client := uint32(b.UserID), b.GroupClient()
	ref, ids, err := cat.ResolveTopic(stream, topicID)
	if err != nil {
		if o.writeCodes {
			return target{}, resolvedDeny, wire.ErrResourceNotFound.Code
		}
		return target{}, resolvedDeny, wire.CodeOf(err)
	}
	if !cat.Allowed(user, o.action, ref.StreamID, ref.TopicID) {
		return target{}, resolvedDeny, wire.ErrUnauthorized.Code
	}
	t := target{ref: ref, client: client}
	pid := uint32(0)
	if opt.Present {
		pid = opt.ID
	}
	switch c.Kind {
	case wire.ConsumerGroupKind:
		gid, err := cat.ResolveGroup(ref, c.ID)
		if err != nil {
			if o.writeCodes {
				return target{}, resolvedDeny, wire.ErrResourceNotFound.Code
			}
			return target{}, resolvedDeny, wire.ErrConsumerGroupIDNotFound.Code
		}
		t.kind, t.id = storage.KindGroup, gid
		if o.groupAccess != 0 {
			if !opt.Present {
				return t, resolvedNothing, 0
			}
			err := cat.GroupPartition(ref, gid, client, pid, o.groupAccess)
			switch {
			case errors.Is(err, wire.ErrConsumerGroupMemberNotFound), errors.Is(err, wire.ErrConsumerGroupPartitionNotOwned):
				return t, resolvedResync, 0
			case err != nil:
				if o.writeCodes {
					return target{}, resolvedDeny, wire.ErrResourceNotFound.Code
				}
				return target{}, resolvedDeny, wire.CodeOf(err)
			}
		}
	default:
		t.kind, t.id = storage.KindConsumer, consumerKey(c.ID)
	}
	missing := wire.ErrPartitionNotFound.Code
	if o.writeCodes {
		missing = wire.ErrResourceNotFound.Code
	}
	if !has(ids, pid) {
		return target{}, resolvedDeny, missing
	}
	t.part = p.lookup(ref.Incarnation, pid)
	if t.part == nil {
		return target{}, resolvedDeny, missing
	}
	return t, resolvedOK, 0
}
