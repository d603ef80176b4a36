package itest

import (
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/broker"
	"github.com/iggo-dev/iggo/internal/config"
	"github.com/iggo-dev/iggo/wire"
)

// startHTTPCluster starts n cluster members with the HTTP API on roster
// ports and waits until replica 0 leads.
func startHTTPCluster(t *testing.T, n int, opts ...Option) *testCluster {
	t.Helper()
	ports := freePorts(t, 3*n)
	tc := &testCluster{dirs: make([]string, n), roster: make([]config.ClusterNode, n)}
	for i := range n {
		tc.roster[i] = config.ClusterNode{
			Name: "node-" + string(rune('a'+i)), IP: "127.0.0.1", ReplicaID: uint8(i),
			Ports: config.ClusterPorts{TCP: ports[i], TCPReplica: ports[n+i], HTTP: ports[2*n+i]},
		}
		tc.dirs[i] = t.TempDir()
	}
	for i := range n {
		tc.start(t, i, append([]Option{withHTTP()}, opts...)...)
	}
	tc.waitLeader(t, 0)
	return tc
}

// TestClusterHTTP: a token issued by a follower holds on the leader (the
// JWT key derived from the cluster secret); a metadata write sent to a
// follower is relayed to the leader and answered from there; a
// linearizable read on a follower is redirected to the leader; a request
// already relayed once is not relayed again; iggy-view carries the view.
func TestClusterHTTP(t *testing.T) {
	tc := startHTTPCluster(t, 3)
	leader, follower := newHTTPAPI(t, tc.nodes[0]), newHTTPAPI(t, tc.nodes[2])
	leader.token = follower.login(RootUsername, RootPassword)
	leader.ok(200, nil, "GET", "/streams", nil)

	var st struct {
		ID   uint32 `json:"id"`
		Name string `json:"name"`
	}
	r := follower.ok(200, &st, "POST", "/streams", map[string]any{"name": "relayed"})
	if st.Name != "relayed" {
		t.Fatalf("relayed create answered %s", r.Body)
	}
	if v, err := strconv.Atoi(r.Header.Get("iggy-view")); err != nil || v < 1 {
		t.Fatalf("iggy-view %q on a relayed answer, want the leader's term", r.Header.Get("iggy-view"))
	}
	leader.ok(200, nil, "GET", fmt.Sprintf("/streams/%d", st.ID), nil)
	follower.ok(204, nil, "PUT", fmt.Sprintf("/streams/%d", st.ID), map[string]any{"name": "renamed"})
	var got struct {
		Name string `json:"name"`
	}
	leader.ok(200, &got, "GET", fmt.Sprintf("/streams/%d", st.ID), nil)
	if got.Name != "renamed" {
		t.Fatalf("stream name on the leader %q after a relayed rename", got.Name)
	}

	follower.fail(503, 503, "POST", "/streams", map[string]any{"name": "twice"}, "Iggy-Forwarded", "1")

	follower.c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	rr := follower.do("GET", "/streams?consistency=linearizable", nil)
	want := fmt.Sprintf("http://127.0.0.1:%d/streams?consistency=linearizable", tc.roster[0].Ports.HTTP)
	if rr.Status != http.StatusTemporaryRedirect || rr.Header.Get("Location") != want {
		t.Fatalf("linearizable read on a follower = %d, Location %q; want 307 to %s", rr.Status, rr.Header.Get("Location"), want)
	}
	follower.ok(200, nil, "GET", "/streams", nil) // serializable: served locally
	leader.ok(200, nil, "GET", "/streams?consistency=linearizable", nil)

	// A password change through the binary protocol on the leader ends
	// the token the follower issued, on the follower too.
	c := tc.nodes[0].Dial(t)
	c.LoginRoot()
	ExpectOK(t, c.Command(wire.OpChangePassword, &wire.ChangePassword{UserID: wire.NamedID(RootUsername), CurrentPassword: RootPassword, NewPassword: "another-root-password"}))
	deadline := time.Now().Add(5 * time.Second)
	for follower.do("GET", "/streams", nil).Status != http.StatusUnauthorized {
		if time.Now().After(deadline) {
			t.Fatal("the follower still accepts a token issued before the password change")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestClusterHTTPWithoutSharedKey: without cluster auth each node draws
// its own JWT key, so a follower's token is refused by the leader and a
// follower answers metadata writes with the binary protocol's 58 instead
// of relaying them.
func TestClusterHTTPWithoutSharedKey(t *testing.T) {
	tc := startHTTPCluster(t, 3, WithConfig(func(c *config.Config) {
		c.Cluster.Auth.Enabled, c.Cluster.Auth.SharedSecret = false, ""
	}))
	leader, follower := newHTTPAPI(t, tc.nodes[0]), newHTTPAPI(t, tc.nodes[1])
	leader.token = follower.login(RootUsername, RootPassword)
	leader.fail(401, 40, "GET", "/streams", nil)
	follower.fail(503, 58, "POST", "/streams", map[string]any{"name": "local"})
}

// TestClusterHTTPLogoutEverywhere: a logout sent to one node ends the
// token on every node: sent to a follower (forwarded to the leader) or to
// the leader, the token is refused at once on the answering node and
// soon on the others, after a restart, and on a node that catches up from
// a raft snapshot taken after the logout. Tokens not logged out keep
// working everywhere.
func TestClusterHTTPLogoutEverywhere(t *testing.T) {
	opts := []Option{withHTTP(), WithBrokerOptions(broker.WithCompactEvery(10))}
	tc := startHTTPCluster(t, 3, opts[1:]...)
	api := func(i int) *httpAPI { return newHTTPAPI(t, tc.nodes[i]) }
	login := func(i int) string { return api(i).login(RootUsername, RootPassword) }
	refusedEverywhere := func(what, tok string, nodes ...int) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for _, i := range nodes {
			for api(i).as(tok).do("GET", "/streams", nil).Status != http.StatusUnauthorized {
				if time.Now().After(deadline) {
					t.Fatalf("node %d still accepts the token %s", i, what)
				}
				time.Sleep(20 * time.Millisecond)
			}
			api(i).as(tok).fail(401, 40, "GET", "/streams", nil)
		}
	}

	viaFollower, viaLeader, live := login(1), login(2), login(0)
	for i := range 3 {
		for _, tok := range []string{viaFollower, viaLeader, live} {
			api(i).as(tok).ok(200, nil, "GET", "/streams", nil)
		}
	}
	api(1).as(viaFollower).ok(204, nil, "DELETE", "/users/logout", nil)
	api(1).as(viaFollower).fail(401, 40, "GET", "/streams", nil) // at once where it was answered
	refusedEverywhere("logged out on a follower", viaFollower, 0, 2)
	api(0).as(viaLeader).ok(204, nil, "POST", "/users/logout", nil)
	api(0).as(viaLeader).fail(401, 40, "GET", "/streams", nil)
	refusedEverywhere("logged out on the leader", viaLeader, 1, 2)
	api(2).as("").fail(401, 40, "POST", "/users/refresh-token", map[string]any{"token": viaFollower})
	for i := range 3 {
		api(i).as(live).ok(200, nil, "GET", "/streams", nil)
	}

	// A restart keeps the revocations (refused at once, before any new
	// entry is applied).
	tc.nodes[2].Stop()
	tc.start(t, 2, opts...)
	api(2).as(viaFollower).fail(401, 40, "GET", "/streams", nil)
	api(2).as(viaLeader).fail(401, 40, "GET", "/streams", nil)
	api(2).as(live).ok(200, nil, "GET", "/streams", nil)

	// A node down during a logout catches up from a raft snapshot that
	// holds it.
	tc.nodes[2].Stop()
	tc.nodes[2] = nil
	late := login(0)
	api(1).as(late).ok(204, nil, "DELETE", "/users/logout", nil)
	refusedEverywhere("logged out while a node was down", late, 0)
	logoutOp := tc.nodes[0].Broker.Metadata().Op()
	c := tc.nodes[0].Dial(t)
	c.LoginRoot()
	for i := range 40 {
		ExpectOK(t, c.Command(wire.OpCreateStream, &wire.CreateStream{Name: fmt.Sprintf("s%02d", i)}))
	}
	deadline := time.Now().Add(10 * time.Second)
	for tc.nodes[0].Broker.MetadataCompacted() <= logoutOp {
		if time.Now().After(deadline) {
			t.Fatalf("leader's metadata log was not compacted past the logout at %d (at %d)", logoutOp, tc.nodes[0].Broker.MetadataCompacted())
		}
		time.Sleep(20 * time.Millisecond)
	}
	tc.start(t, 2, opts...)
	deadline = time.Now().Add(20 * time.Second)
	for {
		r := api(2).as(live).do("GET", "/streams/s39", nil)
		if r.Status == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("restarted node did not catch up: GET /streams/s39 = %d %s", r.Status, r.Body)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if at := tc.nodes[2].Broker.MetadataCompacted(); at <= logoutOp {
		t.Fatalf("the restarted node's log starts at %d, not after a snapshot past the logout at %d", at, logoutOp)
	}
	api(2).as(late).fail(401, 40, "GET", "/streams", nil)
}
