// Package httpapi is Iggo's HTTP REST API (../shared/design/http-api.md):
// JSON routes over streams, topics, partitions, segments, messages,
// consumer groups, offsets, users, tokens, clients and the system
// commands, JWT login, CORS, metrics and an OpenAPI 3.1 document.
//
// The package only translates. Every route encodes its request with the
// wire package's request encoders, runs it through the same
// dispatch.Dispatcher the binary transports use (same permissions, limits
// and client table), decodes the binary reply with wire's reply decoders
// and renders JSON. One route table (routes.go) both registers the
// handlers on an http.ServeMux and generates /openapi.json, so the two
// cannot drift.
//
// Credentials: a bearer is verified as a self-issued JWT (HS256/384/512)
// and otherwise tried as a raw personal access token. Reads run on a
// connection bound to the caller without any session; writes run on one
// per-credential session registered in the client table on first use
// (http-api.md §8), with control-plane writes serialised per credential.
// Beyond the reference, logout and password changes revoke tokens
// (revoke.go); a logout's revocation goes through the metadata log, so it
// holds on every node of a cluster.
package httpapi
