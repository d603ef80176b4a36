package httpapi

import (
	"encoding/hex"
	"net/http"
	"net/netip"
	"strconv"

	"github.com/zeebo/blake3"
)

// The HTTP API in cluster mode (http-api.md §9).
//
// A follower serves reads from its own committed state. A read route with
// ?consistency=linearizable is redirected (307) to the metadata leader's
// HTTP address as the caller should reach it (the roster's advertised
// address for the caller's IP), or answered 503 not_primary while no
// leader is known. Writes of the routes marked flagForward (metadata
// writes: users, tokens, streams, topics, partitions, segments, consumer
// groups) are relayed to the leader (forward.go) when the JWT key is the
// same on every node — derived from the cluster secret, or configured —
// and answered with the binary protocol's 58 (503) otherwise. Message
// and offset writes are never relayed: they are served where they
// arrive, as the binary protocol does. Logout is not relayed either: the
// node that answers it ends the credential's session there through the
// dispatcher (which in cluster mode forwards the binary logout itself),
// and commits the token's revocation through the metadata log
// (Options.TokenLog), whose entry a follower forwards to the leader over
// the replica transport (one hop). Every node applies it, so the token is
// refused on every node; the answering node answers once it applied it
// (or 58 / 57 when it could not be committed, see (*call).logout).

// Cluster is what the HTTP API needs to know about the cluster.
type Cluster interface {
	// Primary returns the metadata leader as this node knows it, for a
	// caller at peer (the zero Addr when unknown); false while none is
	// known.
	Primary(peer netip.Addr) (Primary, bool)
	// View is the current view, sent as the iggy-view header.
	View() uint32
}

// Primary is the metadata leader as seen from one node.
type Primary struct {
	// Self says this node is the leader.
	Self bool
	// Relay is the leader's HTTP address for relaying (roster ip and
	// http port).
	Relay string
	// Advertised is the leader's HTTP address for the caller (host:port),
	// used in the Location of a redirect.
	Advertised string
}

// clusterJWTContext is the BLAKE3 key-derivation context of the
// cluster-wide JWT key (http-api.md §3).
const clusterJWTContext = "apache-iggy server http-jwt v1 psk->hs256-key"

// ClusterJWTKey returns the JWT key of a cluster whose shared secret is
// psk: the lowercase hex of BLAKE3's derive_key with the context above, as
// bytes. Every node derives the same key, so a token issued by one node
// is valid on all of them.
func ClusterJWTKey(psk []byte) []byte {
	var k [32]byte
	blake3.DeriveKey(clusterJWTContext, psk, k[:])
	return []byte(hex.EncodeToString(k[:]))
}

// forwardedHeader marks a request relayed by a follower: the receiver
// relays it no further (one hop).
const forwardedHeader = "Iggy-Forwarded"

// errNotPrimary answers a request that needs the leader on a node that is
// not the leader and cannot reach one.
func errNotPrimary() *apiError {
	e := httpError(http.StatusServiceUnavailable, "not_primary", "This node is not the metadata leader")
	e.RetryAfter = true
	return e
}

// viewHeader is the iggy-view value (0 on a single node).
func (s *Server) viewHeader() string {
	if s.opts.Cluster == nil {
		return "0"
	}
	return strconv.FormatUint(uint64(s.opts.Cluster.View()), 10)
}

// peerAddr is the caller's IP (the zero Addr when unparsable).
func peerAddr(r *http.Request) netip.Addr {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return netip.Addr{}
	}
	return ap.Addr().Unmap()
}

// linearizable redirects a linearizable read on a follower to the leader;
// it reports whether it answered.
func (s *Server) linearizable(w http.ResponseWriter, r *http.Request) bool {
	cl := s.opts.Cluster
	if cl == nil || r.URL.Query().Get("consistency") != "linearizable" {
		return false
	}
	p, ok := cl.Primary(peerAddr(r))
	switch {
	case ok && p.Self:
		return false
	case !ok || p.Advertised == "":
		writeError(w, r, errNotPrimary())
	default:
		scheme := "http"
		if s.cfg.TLS.Enabled {
			scheme = "https"
		}
		w.Header().Set("Location", scheme+"://"+p.Advertised+r.URL.RequestURI())
		w.WriteHeader(http.StatusTemporaryRedirect)
	}
	return true
}
