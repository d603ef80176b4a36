// Package dispatch turns one decoded request into one answer: header
// validation (framing.md, "Header validation rules"), the session gate
// (semantics.md §1.3), the client table for metadata-plane requests
// (§1.5), and a command table (code -> Handler) that later steps fill with
// metadata, partition and read handlers.
//
// Answers, in the order they are decided:
//
//   - client id 0, Register with session or request non-zero, or another
//     non-NonReplicated operation with session or request 0: status-deny
//     InvalidCommand (3). The reference drops such frames silently; Iggo
//     answers so the client does not wait for a timeout.
//   - operation 0, 64..127 or undefined: Eviction(4 InvalidRequestOperation).
//     (The reference drops 0 and undefined values silently.)
//   - request_checksum non-zero and not XXH3-64 of the body: status-deny
//     InvalidFormat (4).
//   - NonReplicated: legacy login codes 38/44 -> Eviction(15); unbound and
//     not PING -> status-deny Unauthenticated (40); unknown code -> 3; a
//     replicated code sent as NonReplicated -> FeatureUnavailable (5).
//   - ATTACH_SESSION (an Iggo extension, also on an unbound connection)
//     -> Manager.Attach (the login evictions, 7, status 58, or success);
//   - Register -> login (evictions 9, 10, 11, 14, 15 or success);
//     Logout -> logout (plain empty success, also when unbound).
//   - metadata or partition operation on an unbound connection ->
//     Eviction(1 NoSession); metadata-plane requests then pass the client
//     table (evictions 1, 7, 12; results 57, 59; cached replay; status 4).
//   - a command without a handler yet -> status-deny FeatureUnavailable (5).
//
// After an eviction the connection's session ends (it is unbound and its
// Logout committed, fenced by epoch) but the transport stays open, so a
// client can log in again on it.
package dispatch
