package metadata

import (
	"errors"

	"github.com/iggo-dev/iggo/internal/auth"
	"github.com/iggo-dev/iggo/internal/dispatch"
	"github.com/iggo-dev/iggo/wire"
)

// The metadata-plane command handlers. Each decodes the body and applies
// the checks semantics.md puts before replication (status-deny), then
// commits an entry; apply makes every other decision (committed
// rejections, cached in the client table).

// denyCode is the status of a body that does not decode: its wire error
// code, InvalidCommand (3) for anything else.
func denyCode(err error) uint32 {
	var we *wire.Error
	if errors.As(err, &we) {
		return we.Code
	}
	return wire.ErrInvalidCommand.Code
}

// undecodable answers a body that does not decode. semantics.md §3.4:
// CreateTopic, UpdateTopic, Create/DeletePartitions, Create/UpdateStream
// and Create/UpdateUser are status-deny InvalidCommand (3) (or the
// options-block code); DELETE_SEGMENTS is denied with 3 as commands.md
// advises; every other metadata body ends in Eviction(5
// InvalidRequestBody).
func undecodable(x *dispatch.Exchange, err error) {
	switch x.Info.Code {
	case wire.CmdCreateTopic, wire.CmdUpdateTopic, wire.CmdCreatePartitions, wire.CmdDeletePartitions,
		wire.CmdCreateStream, wire.CmdUpdateStream, wire.CmdCreateUser, wire.CmdUpdateUser, wire.CmdDeleteSegments:
		x.Deny(denyCode(err))
	default:
		x.Evict(wire.EvictInvalidRequestBody)
	}
}

// commit submits a command entry for x and sends the committed reply.
// A journal failure answers TransientNotCommitted (57): the outcome is
// unknown; a closed store, or a cluster write the metadata leader never
// admitted, answers TransientNotAccepted (58).
func (s *Store) commit(x *dispatch.Exchange, body, secret []byte) (committed, bool) {
	b, _ := x.Conn.Binding()
	h := &x.Header
	c, err := s.submit(Entry{
		Kind: KindCommand, Client: h.Client, Session: h.Session, Request: h.Request,
		RequestChecksum: h.RequestChecksum, RequestTimestamp: h.Timestamp,
		UserID: uint32(b.UserID), Code: x.Info.Code, Body: body, Secret: secret,
	})
	if err != nil {
		x.Result(transientCode(err))
		return c, false
	}
	return c, true
}

// submitBody commits x's body as is and sends the cached reply.
func (s *Store) submitBody(x *dispatch.Exchange) {
	if c, ok := s.commit(x, x.Body, nil); ok {
		x.SendCommitted(c.frame)
	}
}

// checked returns a handler that decodes the body with b, runs check (a
// pre-commit status-deny code, 0 to go on) and commits.
func (s *Store) checked(newBody func() wire.Body, check func(b wire.Body) uint32) dispatch.Handler {
	return func(x *dispatch.Exchange) {
		b := newBody()
		if err := b.Decode(x.Body); err != nil {
			undecodable(x, err)
			return
		}
		if check != nil {
			if code := check(b); code != 0 {
				x.Deny(code)
				return
			}
		}
		s.submitBody(x)
	}
}

// placed returns a handler like checked for a command that creates
// partitions: once check passed, the partitions' replica lists (count
// and the topic's replication factor from the request) are chosen and
// committed in the entry's Secret (placement.go).
func (s *Store) placed(newBody func() wire.Body, check func(b wire.Body) uint32, count func(b wire.Body) (rf uint8, n int)) dispatch.Handler {
	return func(x *dispatch.Exchange) {
		b := newBody()
		if err := b.Decode(x.Body); err != nil {
			undecodable(x, err)
			return
		}
		if code := check(b); code != 0 {
			x.Deny(code)
			return
		}
		rf, n := count(b)
		if s.cfg.Placer == nil && rf > 1 {
			x.Deny(wire.ErrInvalidReplicationFactor.Code)
			return
		}
		secret, code := s.placeFor(rf, n)
		if code != 0 {
			x.Deny(code)
			return
		}
		if c, ok := s.commit(x, x.Body, secret); ok {
			x.SendCommitted(c.frame)
		}
	}
}

// registerCommands installs the metadata command handlers on d.
func (s *Store) registerCommands(d *dispatch.Dispatcher, sys System) {
	room := func(add uint32) uint32 {
		if sys.PartitionRoom == nil {
			return 0
		}
		return sys.PartitionRoom(add)
	}
	streamOptions := func(o wire.Options) uint32 {
		return wire.CodeOf(wire.ValidateOptionKeys(wire.OptionScopeStream, o))
	}
	d.Handle(wire.CmdCreateStream, s.checked(func() wire.Body { return new(wire.CreateStream) }, func(b wire.Body) uint32 {
		return streamOptions(b.(*wire.CreateStream).Options)
	}))
	d.Handle(wire.CmdUpdateStream, s.checked(func() wire.Body { return new(wire.UpdateStream) }, func(b wire.Body) uint32 {
		return streamOptions(b.(*wire.UpdateStream).Options)
	}))
	d.Handle(wire.CmdDeleteStream, s.checked(func() wire.Body { return new(wire.DeleteStream) }, nil))
	d.Handle(wire.CmdPurgeStream, s.checked(func() wire.Body { return new(wire.PurgeStream) }, nil))
	d.Handle(wire.CmdCreateTopic, s.placed(func() wire.Body { return new(wire.CreateTopic) }, func(b wire.Body) uint32 {
		req := b.(*wire.CreateTopic)
		if req.PartitionsCount > wire.MaxPartitionsPerRequest {
			return wire.ErrTooManyPartitions.Code
		}
		if _, err := wire.NewTopicOptions(req.Options, req.PartitionsCount); err != nil {
			return wire.CodeOf(err)
		}
		return room(req.PartitionsCount)
	}, func(b wire.Body) (uint8, int) {
		req := b.(*wire.CreateTopic)
		opts, _ := wire.NewTopicOptions(req.Options, req.PartitionsCount)
		return opts.Settings.ReplicationFactor, int(req.PartitionsCount)
	}))
	d.Handle(wire.CmdUpdateTopic, s.checked(func() wire.Body { return new(wire.UpdateTopic) }, func(b wire.Body) uint32 {
		return wire.CodeOf(wire.ValidateTopicUpdate(b.(*wire.UpdateTopic).Options))
	}))
	d.Handle(wire.CmdDeleteTopic, s.checked(func() wire.Body { return new(wire.DeleteTopic) }, nil))
	d.Handle(wire.CmdPurgeTopic, s.checked(func() wire.Body { return new(wire.PurgeTopic) }, nil))
	partitionsCount := func(n uint32) uint32 {
		if n == 0 || n > wire.MaxPartitionsPerRequest {
			return wire.ErrTooManyPartitions.Code
		}
		return 0
	}
	d.Handle(wire.CmdCreatePartitions, s.placed(func() wire.Body { return new(wire.CreatePartitions) }, func(b wire.Body) uint32 {
		n := b.(*wire.CreatePartitions).PartitionsCount
		if code := partitionsCount(n); code != 0 {
			return code
		}
		return room(n)
	}, func(b wire.Body) (uint8, int) {
		req := b.(*wire.CreatePartitions)
		return s.topicReplicationFactor(req.StreamID, req.TopicID), int(req.PartitionsCount)
	}))
	d.Handle(wire.CmdDeletePartitions, s.checked(func() wire.Body { return new(wire.DeletePartitions) }, func(b wire.Body) uint32 {
		return partitionsCount(b.(*wire.DeletePartitions).PartitionsCount)
	}))
	d.Handle(wire.CmdDeleteSegments, s.checked(func() wire.Body { return new(wire.DeleteSegments) }, nil))
	d.Handle(wire.CmdCreateConsumerGroup, s.checked(func() wire.Body { return new(wire.CreateConsumerGroup) }, nil))
	d.Handle(wire.CmdDeleteConsumerGroup, s.checked(func() wire.Body { return new(wire.DeleteConsumerGroup) }, nil))
	d.Handle(wire.CmdJoinConsumerGroup, s.checked(func() wire.Body { return new(wire.JoinConsumerGroup) }, nil))
	d.Handle(wire.CmdLeaveConsumerGroup, s.checked(func() wire.Body { return new(wire.LeaveConsumerGroup) }, nil))
	d.Handle(wire.CmdUpdateUser, s.checked(func() wire.Body { return new(wire.UpdateUser) }, func(b wire.Body) uint32 {
		if len(b.(*wire.UpdateUser).Options) > 0 {
			return wire.ErrUnsupportedOptionKey.Code
		}
		return 0
	}))
	d.Handle(wire.CmdDeleteUser, s.checked(func() wire.Body { return new(wire.DeleteUser) }, nil))
	d.Handle(wire.CmdUpdatePermissions, s.checked(func() wire.Body { return new(wire.UpdatePermissions) }, nil))
	d.Handle(wire.CmdDeletePersonalAccessToken, s.checked(func() wire.Body { return new(wire.DeletePersonalAccessToken) }, nil))
	d.Handle(wire.CmdCreateUser, s.createUserHandler)
	d.Handle(wire.CmdChangePassword, s.changePasswordHandler)
	d.Handle(wire.CmdCreatePersonalAccessToken, s.createPATHandler)
}

// createUserHandler hashes the password before commit (semantics.md §2.2:
// the admitting node hashes, the log holds only the hash) and commits the
// body with the password removed.
func (s *Store) createUserHandler(x *dispatch.Exchange) {
	var req wire.CreateUser
	if err := req.Decode(x.Body); err != nil {
		undecodable(x, err)
		return
	}
	if len(req.Options) > 0 {
		x.Deny(wire.ErrUnsupportedOptionKey.Code)
		return
	}
	hash, err := s.cfg.Hasher.Hash(req.Password)
	if err != nil {
		x.Deny(wire.ErrError.Code)
		return
	}
	req.Password = ""
	if c, ok := s.commit(x, req.AppendTo(nil), []byte(hash)); ok {
		x.SendCommitted(c.frame)
	}
}

// changePasswordHandler verifies the target user's current password
// against its committed hash before commit (Argon2 is too slow for the
// writer lock) and hashes the new one; apply accepts the change only if
// the hash is still the one verified. The body is committed without the
// passwords.
func (s *Store) changePasswordHandler(x *dispatch.Exchange) {
	var req wire.ChangePassword
	if err := req.Decode(x.Body); err != nil {
		undecodable(x, err)
		return
	}
	var secret []byte
	s.mu.RLock()
	u := s.st.user(req.UserID)
	var current string
	if u != nil {
		current = u.PasswordHash
	}
	s.mu.RUnlock()
	if u != nil {
		if ok, err := s.cfg.Hasher.Verify(current, req.CurrentPassword); err == nil && ok {
			hash, err := s.cfg.Hasher.Hash(req.NewPassword)
			if err != nil {
				x.Deny(wire.ErrError.Code)
				return
			}
			secret = passwordSecret(hash, current)
		}
	}
	req.CurrentPassword, req.NewPassword = "", ""
	if c, ok := s.commit(x, req.AppendTo(nil), secret); ok {
		x.SendCommitted(c.frame)
	}
}

// createPATHandler checks the per-user cap before commit (status-deny 52,
// semantics.md §2.6), draws the token, commits only its hash and answers
// the raw token once; the client table caches a 51 rejection in its place.
func (s *Store) createPATHandler(x *dispatch.Exchange) {
	var req wire.CreatePersonalAccessToken
	if err := req.Decode(x.Body); err != nil {
		undecodable(x, err)
		return
	}
	b, _ := x.Conn.Binding()
	s.mu.RLock()
	n := 0
	if u := s.st.users[uint32(b.UserID)]; u != nil {
		n = len(u.PATs)
	}
	s.mu.RUnlock()
	if uint32(n) >= s.cfg.MaxTokensPerUser {
		x.Deny(wire.ErrPersonalAccessTokensLimitReached.Code)
		return
	}
	raw, err := auth.NewToken(nil)
	if err != nil {
		x.Deny(wire.ErrError.Code)
		return
	}
	c, ok := s.commit(x, x.Body, []byte(auth.HashToken(raw)))
	if !ok {
		return
	}
	if !c.res.secret {
		x.SendCommitted(c.frame)
		return
	}
	tok := wire.RawToken{Token: raw}
	info, _ := wire.LookupCommand(x.Info.Code)
	x.SendCommitted(replyFrame(&c.entry, info.ReplyOperation, tok.AppendTo(wire.AppendResultOK(nil))))
}
