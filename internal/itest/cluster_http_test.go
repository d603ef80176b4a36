package itest

import (
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

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
