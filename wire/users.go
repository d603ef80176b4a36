package wire

import (
	"bytes"
	"unicode/utf8"
)

// Limits of the user bodies.
const (
	// MaxUserOptionsLen bounds a user options block: an options block holds
	// at most 100000 bytes (encodings.md, "Options block").
	MaxUserOptionsLen = 100000
	// MaxUserOptionPairs bounds the key/value pairs of a user options block
	// (encodings.md, "Options block": at most 1024 pairs).
	MaxUserOptionPairs = 1024
	// MaxPasswordLen is the longest password the [len u8][bytes] shape can
	// carry; the server applies its own password rules on top.
	MaxPasswordLen = 255
)

// UserStatus is a user's status byte: 1 active, 2 inactive (commands.md,
// "User"). Decoders carry the byte as sent: the reference server stores an
// unknown status byte on create as active and echoes the raw byte in its
// reply (semantics.md 2.2), so refusing it would break that exchange.
type UserStatus uint8

// User statuses.
const (
	UserActive   UserStatus = 1
	UserInactive UserStatus = 2
)

// Valid reports whether s is one of the two defined statuses.
func (s UserStatus) Valid() bool { return s == UserActive || s == UserInactive }

// String returns "active", "inactive" or "unknown".
func (s UserStatus) String() string {
	switch s {
	case UserActive:
		return "active"
	case UserInactive:
		return "inactive"
	}
	return "unknown"
}

// User is one user header (commands.md, "User (UserHeader)"), the element of
// the GET_USERS reply and the prefix of UserDetails:
// [id u32][created_at u64 µs][status u8][username Name][options_len u32][options].
type User struct {
	ID        uint32
	CreatedAt uint64
	Status    UserStatus
	Username  string
	// Options is the raw options TLV block (without its length prefix),
	// nil when empty. The user option catalog is empty today.
	Options []byte
}

// Validate checks that u encodes to a decodable header: a 1..255 byte
// username and a well-formed options block.
func (u *User) Validate() error {
	if !validName(u.Username) {
		return ErrInvalidUsername
	}
	if !validUserOptions(u.Options) {
		return ErrInvalidCommand
	}
	return nil
}

// AppendTo appends the user header.
func (u *User) AppendTo(dst []byte) []byte {
	dst = appendU32(dst, u.ID)
	dst = appendU64(dst, u.CreatedAt)
	dst = appendU8(dst, uint8(u.Status))
	dst = appendName(dst, u.Username)
	dst = appendU32(dst, uint32(len(u.Options)))
	return append(dst, u.Options...)
}

// Decode decodes exactly one user header (no trailing bytes).
func (u *User) Decode(src []byte) error {
	r := newReader(src)
	u.read(&r)
	return r.finish()
}

func (u *User) read(r *reader) {
	u.ID = r.u32()
	u.CreatedAt = r.u64()
	u.Status = UserStatus(r.u8())
	u.Username = r.name()
	u.Options = r.userOptions(int(r.u32()))
}

// UserDetails is the payload of GET_USER and of a successful CREATE_USER
// (commands.md, "UserDetails"): a User followed by either [00 00 00 00]
// (no permissions) or [01][permissions_len u32][permissions].
//
// GET_USER answers an unknown user with an empty body (status 0) instead of
// UserDetails; a caller checks len(payload) == 0 (UserNotFound) before
// decoding, since Decode refuses an empty payload.
type UserDetails struct {
	User User
	// Permissions is nil when the user has none.
	Permissions *Permissions
}

// UserNotFound reports whether a GET_USER reply payload is the empty
// "no such user" answer rather than UserDetails.
func UserNotFound(payload []byte) bool { return len(payload) == 0 }

// Validate checks the header and, when present, the permissions.
func (d *UserDetails) Validate() error {
	if err := d.User.Validate(); err != nil {
		return err
	}
	if d.Permissions != nil {
		return d.Permissions.Validate()
	}
	return nil
}

// AppendTo appends the details. No permissions are written as a u32 0, as
// the reference server does.
func (d *UserDetails) AppendTo(dst []byte) []byte {
	dst = d.User.AppendTo(dst)
	if d.Permissions == nil {
		return appendU32(dst, 0)
	}
	dst = appendU8(dst, 1)
	return appendPermissionsBlock(dst, d.Permissions)
}

// Decode decodes the details, rejecting trailing bytes. The "no
// permissions" form must be the four zero bytes the server writes; a flag
// other than 0 or 1 is refused.
func (d *UserDetails) Decode(src []byte) error {
	r := newReader(src)
	d.User.read(&r)
	d.Permissions = nil
	switch flag := r.u8(); {
	case r.err != nil:
	case flag == 0:
		if z := r.take(3); z != nil && (z[0]|z[1]|z[2]) != 0 {
			r.fail(ErrInvalidCommand)
		}
	case flag == 1:
		d.Permissions = r.permissionsBlock()
	default:
		r.fail(ErrInvalidCommand)
	}
	return r.finish()
}

// Users is the payload of GET_USERS: User headers back to back until the
// end of the payload, no count (commands.md §32). An empty payload decodes
// to no users; the Go SDK treats it as an error, but a server always has
// the root user so it does not arise.
type Users []User

// AppendTo appends every user header.
func (us *Users) AppendTo(dst []byte) []byte {
	for i := range *us {
		dst = (*us)[i].AppendTo(dst)
	}
	return dst
}

// Decode decodes user headers until the end of src. Each header consumes
// at least 19 bytes, so the list grows with the input only.
func (us *Users) Decode(src []byte) error {
	r := newReader(src)
	list := (*us)[:0]
	for r.remaining() > 0 && r.err == nil {
		var u User
		u.read(&r)
		list = append(list, u)
	}
	if err := r.finish(); err != nil {
		*us = nil
		return err
	}
	*us = list
	return nil
}

// GetUser is the body of GET_USER (code 31): [user_id Identifier].
type GetUser struct {
	UserID Identifier
}

// Validate checks the identifier.
func (g *GetUser) Validate() error { return g.UserID.Validate() }

// AppendTo appends the body.
func (g *GetUser) AppendTo(dst []byte) []byte { return g.UserID.AppendTo(dst) }

// Decode decodes the identifier and ignores trailing bytes.
func (g *GetUser) Decode(src []byte) error { return decodeIdentifiers(src, &g.UserID) }

// DeleteUser is the body of DELETE_USER (code 34, operation 143):
// [user_id Identifier].
type DeleteUser struct {
	UserID Identifier
}

// Validate checks the identifier.
func (d *DeleteUser) Validate() error { return d.UserID.Validate() }

// AppendTo appends the body.
func (d *DeleteUser) AppendTo(dst []byte) []byte { return d.UserID.AppendTo(dst) }

// Decode decodes the identifier and ignores trailing bytes.
func (d *DeleteUser) Decode(src []byte) error { return decodeIdentifiers(src, &d.UserID) }

// CreateUser is the body of CREATE_USER (code 33, operation 141):
//
//	[username Name][password_len u8][password][status u8]
//	[has_permissions u8] ([permissions_len u32][permissions] when 1)
//	[options TLV to end]
//
// The status byte is carried as sent (see UserStatus). The options block
// must be structurally valid; the server refuses any key (the user catalog
// is empty) with 4041.
type CreateUser struct {
	Username string
	// Password may be empty on the wire (0..255 bytes).
	Password string
	Status   UserStatus
	// Permissions is nil for has_permissions = 0.
	Permissions *Permissions
	// Options is the raw options block, nil when empty.
	Options []byte
}

// Validate checks what an SDK should refuse before sending: username
// 1..255 bytes, password at most 255 bytes, status 1 or 2, valid
// permissions and options.
func (c *CreateUser) Validate() error {
	switch {
	case !validName(c.Username):
		return ErrInvalidUsername
	case len(c.Password) > MaxPasswordLen || !utf8.ValidString(c.Password):
		return ErrInvalidPassword
	case !c.Status.Valid():
		return ErrInvalidUserStatus
	case !validUserOptions(c.Options):
		return ErrInvalidCommand
	case c.Permissions != nil:
		return c.Permissions.Validate()
	}
	return nil
}

// AppendTo appends the body.
func (c *CreateUser) AppendTo(dst []byte) []byte {
	dst = appendName(dst, c.Username)
	dst = appendShortString(dst, c.Password)
	dst = appendU8(dst, uint8(c.Status))
	dst = appendOptPermissions(dst, c.Permissions)
	return append(dst, c.Options...)
}

// Decode decodes the body; the options run to the end (no trailing bytes
// by definition: anything after the permissions must be a valid block).
func (c *CreateUser) Decode(src []byte) error {
	r := newReader(src)
	c.Username = r.name()
	c.Password = r.shortString()
	c.Status = UserStatus(r.u8())
	c.Permissions = r.optPermissions()
	c.Options = r.userOptions(r.remaining())
	return r.finish()
}

// UpdateUser is the body of UPDATE_USER (code 35, operation 142):
//
//	[user_id Identifier]
//	[has_username u8] ([username Name] when 1)
//	[has_status u8] ([status u8] when 1)
//	[options TLV to end]
//
// An empty Username means "unchanged" (has_username = 0): a Name is never
// empty. A zero Status means "unchanged" (has_status = 0); the decoder
// therefore refuses has_status = 1 with a status byte of 0, which it could
// not represent. Other status bytes are carried as sent.
type UpdateUser struct {
	UserID   Identifier
	Username string
	Status   UserStatus
	// Options is the raw options block, nil when empty.
	Options []byte
}

// Validate checks the identifier, a username (when set) of 1..255 bytes, a
// status (when set) of 1 or 2, and the options.
func (u *UpdateUser) Validate() error {
	if err := u.UserID.Validate(); err != nil {
		return err
	}
	switch {
	case u.Username != "" && !validName(u.Username):
		return ErrInvalidUsername
	case u.Status != 0 && !u.Status.Valid():
		return ErrInvalidUserStatus
	case !validUserOptions(u.Options):
		return ErrInvalidCommand
	}
	return nil
}

// AppendTo appends the body; both flag bytes are always written.
func (u *UpdateUser) AppendTo(dst []byte) []byte {
	dst = u.UserID.AppendTo(dst)
	if u.Username == "" {
		dst = appendU8(dst, 0)
	} else {
		dst = appendU8(dst, 1)
		dst = appendName(dst, u.Username)
	}
	if u.Status == 0 {
		dst = appendU8(dst, 0)
	} else {
		dst = append(dst, 1, byte(u.Status))
	}
	return append(dst, u.Options...)
}

// Decode decodes the body; flags other than 0 or 1 are refused. The
// options run to the end (no trailing bytes by definition).
func (u *UpdateUser) Decode(src []byte) error {
	r := newReader(src)
	u.UserID = r.identifier()
	u.Username = ""
	if r.flag() {
		u.Username = r.name()
	}
	u.Status = 0
	if r.flag() {
		u.Status = UserStatus(r.u8())
		if r.err == nil && u.Status == 0 {
			r.fail(ErrInvalidCommand)
		}
	}
	u.Options = r.userOptions(r.remaining())
	return r.finish()
}

// UpdatePermissions is the body of UPDATE_PERMISSIONS (code 36, operation
// 145): [user_id Identifier][has_permissions u8] and, when the flag is 1,
// [permissions_len u32][permissions]. A flag of 0 ends the body and clears
// the user's permissions.
type UpdatePermissions struct {
	UserID Identifier
	// Permissions is nil to clear the permission set.
	Permissions *Permissions
}

// Validate checks the identifier and the permissions.
func (u *UpdatePermissions) Validate() error {
	if err := u.UserID.Validate(); err != nil {
		return err
	}
	if u.Permissions != nil {
		return u.Permissions.Validate()
	}
	return nil
}

// AppendTo appends the body.
func (u *UpdatePermissions) AppendTo(dst []byte) []byte {
	dst = u.UserID.AppendTo(dst)
	return appendOptPermissions(dst, u.Permissions)
}

// Decode decodes the fields and ignores trailing bytes after them (after
// the flag when it is 0, after the permissions otherwise). permissions_len
// must still equal the decoded permission set exactly.
func (u *UpdatePermissions) Decode(src []byte) error {
	r := newReader(src)
	u.UserID = r.identifier()
	u.Permissions = r.optPermissions()
	return r.done()
}

// ChangePassword is the body of CHANGE_PASSWORD (code 37, operation 144):
// [user_id Identifier][current_len u8][current][new_len u8][new]. Both
// passwords may be empty on the wire.
type ChangePassword struct {
	UserID          Identifier
	CurrentPassword string
	NewPassword     string
}

// Validate checks the identifier and that each password fits 255 bytes.
func (c *ChangePassword) Validate() error {
	if err := c.UserID.Validate(); err != nil {
		return err
	}
	if len(c.CurrentPassword) > MaxPasswordLen || len(c.NewPassword) > MaxPasswordLen ||
		!utf8.ValidString(c.CurrentPassword) || !utf8.ValidString(c.NewPassword) {
		return ErrInvalidPassword
	}
	return nil
}

// AppendTo appends the body.
func (c *ChangePassword) AppendTo(dst []byte) []byte {
	dst = c.UserID.AppendTo(dst)
	dst = appendShortString(dst, c.CurrentPassword)
	return appendShortString(dst, c.NewPassword)
}

// Decode decodes the fields and ignores trailing bytes.
func (c *ChangePassword) Decode(src []byte) error {
	r := newReader(src)
	c.UserID = r.identifier()
	c.CurrentPassword = r.shortString()
	c.NewPassword = r.shortString()
	return r.done()
}

// appendOptPermissions appends [has_permissions u8] and, when p is set,
// [permissions_len u32][permissions].
func appendOptPermissions(dst []byte, p *Permissions) []byte {
	if p == nil {
		return appendU8(dst, 0)
	}
	dst = appendU8(dst, 1)
	return appendPermissionsBlock(dst, p)
}

// optPermissions reads [has_permissions u8] (0 or 1) and, when 1, the
// length-prefixed permissions.
func (r *reader) optPermissions() *Permissions {
	if !r.flag() {
		return nil
	}
	return r.permissionsBlock()
}

// userOptions reads n bytes as an options block, checks its structure and
// returns a copy (nil when empty).
func (r *reader) userOptions(n int) []byte {
	if r.err == nil && (n < 0 || n > MaxUserOptionsLen) {
		r.fail(ErrInvalidCommand)
	}
	b := r.take(n)
	if len(b) == 0 {
		return nil
	}
	if !validUserOptions(b) {
		r.fail(ErrInvalidCommand)
		return nil
	}
	return append([]byte(nil), b...)
}

// validUserOptions checks the structural rules of an options block
// (encodings.md, "User-headers TLV block" and "Options block"): fields
// [kind u8][len u32][data] with kind ≠ 0 and len 1..255, consumed exactly,
// in key/value pairs; keys of kind 2 (String) with UTF-8 bytes and no
// duplicates; at most MaxUserOptionPairs pairs and MaxUserOptionsLen bytes.
func validUserOptions(b []byte) bool {
	if len(b) > MaxUserOptionsLen {
		return false
	}
	var keys [][]byte
	for off, field := 0, 0; off < len(b); field++ {
		if len(b)-off < 5 {
			return false
		}
		kind := b[off]
		n := uint32(b[off+1]) | uint32(b[off+2])<<8 | uint32(b[off+3])<<16 | uint32(b[off+4])<<24
		off += 5
		if kind == 0 || n == 0 || n > 255 || int(n) > len(b)-off {
			return false
		}
		data := b[off : off+int(n)]
		off += int(n)
		if field%2 == 1 {
			continue
		}
		if kind != 2 || !utf8.Valid(data) || len(keys) == MaxUserOptionPairs {
			return false
		}
		for _, k := range keys {
			if bytes.Equal(k, data) {
				return false
			}
		}
		keys = append(keys, data)
		if off == len(b) {
			return false // a key without a value
		}
	}
	return true
}
