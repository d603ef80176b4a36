package objstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// OwnerMarker is the key, relative to the prefix, of the ownership marker
// [Claim] writes.
const OwnerMarker = "iggo-owner"

// maxMarkerSize bounds the ownership marker read back.
const maxMarkerSize = 64 << 10

// ownerDoc is the ownership marker's content.
type ownerDoc struct {
	Owner   string `json:"owner"`
	Created string `json:"created"` // RFC 3339
}

// Claim makes sure the bucket prefix of s belongs to the server owner (a
// stable identity such as the cluster id). It reads the marker
// s.Key(OwnerMarker); when there is none it writes one holding
// {"owner": owner, "created": <RFC 3339 time>}, with "If-None-Match: *"
// where the store honours it, and reads it back. A marker naming another
// owner, or one that cannot be parsed, gives an error wrapping
// [ErrForeignOwner] whose text names tiered_storage.prefix. A marker with
// the same owner is accepted.
func Claim(ctx context.Context, s *Store, owner string) error {
	if owner == "" {
		return errors.New("objstore: claim: empty owner")
	}
	key := s.Key(OwnerMarker)
	data, err := s.GetSmall(ctx, key, maxMarkerSize)
	if err == nil {
		return checkOwner(s, key, data, owner)
	}
	if !errors.Is(err, ErrNotFound) {
		return err
	}
	doc, err := json.Marshal(ownerDoc{Owner: owner, Created: time.Now().UTC().Format(time.RFC3339)})
	if err != nil {
		return fmt.Errorf("objstore: claim: %w", err)
	}
	// Another server may write its marker at the same time. A store that
	// honours If-None-Match refuses the second write; with one that does
	// not, the last write wins and the read below sees who won.
	_, err = s.put(ctx, key, bytes.NewReader(doc), int64(len(doc)), nil, true)
	if err != nil && !errors.Is(err, errExists) {
		return err
	}
	data, err = s.GetSmall(ctx, key, maxMarkerSize)
	if err != nil {
		return err
	}
	return checkOwner(s, key, data, owner)
}

// checkOwner checks that the marker data names owner.
func checkOwner(s *Store, key string, data []byte, owner string) error {
	var doc ownerDoc
	if err := json.Unmarshal(data, &doc); err != nil || doc.Owner == "" {
		why := "it has no owner"
		if err != nil {
			why = err.Error()
		}
		return configErr("tiered_storage.prefix",
			fmt.Sprintf("the ownership marker %q in bucket %q is not readable (%s); remove it or choose another prefix", key, s.bucket, why),
			ErrForeignOwner)
	}
	if doc.Owner != owner {
		return configErr("tiered_storage.prefix",
			fmt.Sprintf("the bucket prefix %q already holds another Iggo server's objects (owner %s, this server %s); choose another prefix", s.prefix, doc.Owner, owner),
			ErrForeignOwner)
	}
	return nil
}
