// Package auth holds what login needs: Argon2id password hashing in PHC
// form, personal-access-token hashing, the user and token lookup seam
// (Store) with an in-memory implementation, the Authenticator that applies
// the login rules of semantics.md §1.4 and §2, and the permission model.
//
// The Store is deliberately small: the metadata state machine of the next
// step implements it over committed state; MemStore serves until then and
// in tests.
package auth
