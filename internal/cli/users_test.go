package cli

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestUserCommands(t *testing.T) {
	e := newCLI(t)
	e.ok("stream", "create", "orders")
	e.ok("topic", "create", "orders", "events")

	wantLines(t, e.ok("user", "create", "alice", "secret1", "--global", "read_streams,poll-messages",
		"--stream", "orders=send_messages", "--topic", "orders/events=all"), `user "alice" created with id 1`)
	var u userView
	e.okJSON(&u, "user", "get", "alice")
	want := &permissionsView{
		Global: []string{"read_streams", "poll_messages"},
		Streams: []streamPermissionView{{StreamID: 0, Permissions: []string{"send_messages"}, Topics: []topicPermissionView{
			{TopicID: 0, Permissions: []string{"manage_topic", "read_topic", "poll_messages", "send_messages"}},
		}}},
	}
	if u.ID != 1 || u.Username != "alice" || u.Status != "active" || !cmp.Equal(u.Permissions, want) {
		t.Fatalf("user get alice = %+v, permissions diff %s", u, cmp.Diff(want, u.Permissions))
	}
	wantLines(t, e.ok("user", "get", "1"), "Username:", "alice", "Global:", "read_streams, poll_messages", "Stream 0 topic 0:")

	// Password from standard input; an inactive user cannot log in.
	e.runStdin("pw-from-stdin\n", "user", "create", "bob", "-", "--inactive").wantCode(t, ExitOK)
	e.okJSON(&u, "user", "get", "bob")
	if u.Status != "inactive" || u.Permissions != nil {
		t.Fatalf("bob = %+v", u)
	}
	e.run("me", "--username", "bob", "--password", "pw-from-stdin").wantError(t, ExitAuth, "log in as bob", "InvalidCredentials") // semantics.md §1.4: reason 9 for an inactive user
	e.ok("user", "update", "bob", "--status", "active", "--name", "robert")
	e.ok("me", "--username", "robert", "--password", "pw-from-stdin")

	var us []userView
	e.okJSON(&us, "user", "list")
	if names := []string{us[0].Username, us[1].Username, us[2].Username}; !cmp.Equal(names, []string{"iggy", "alice", "robert"}) {
		t.Fatalf("user list = %v", names)
	}
	wantLines(t, e.ok("user", "list"), "USERNAME", "STATUS", "robert")

	// Permissions are replaced as a whole; --none clears them.
	e.ok("user", "permissions", "alice", "--global", "all")
	e.okJSON(&u, "user", "get", "alice")
	if len(u.Permissions.Global) != 10 || len(u.Permissions.Streams) != 0 {
		t.Fatalf("after --global all: %+v", u.Permissions)
	}
	e.ok("user", "permissions", "alice", "--none")
	e.okJSON(&u, "user", "get", "alice")
	if u.Permissions != nil {
		t.Fatalf("after --none: %+v", u.Permissions)
	}
	e.run("user", "permissions", "alice").wantError(t, ExitUsage, "--none")
	e.run("user", "permissions", "alice", "--global", "fly").wantError(t, ExitUsage, `unknown permission "fly"`)
	e.run("user", "permissions", "alice", "--stream", "nope=all").wantError(t, ExitError, "StreamIdNotFound")
	e.run("user", "permissions", "iggy", "--global", "read_users").wantError(t, ExitError, "CannotChangePermissions")

	// Without permissions alice is refused, with the server's error name.
	e.run("stream", "list", "--username", "alice", "--password", "secret1").wantError(t, ExitError, "Unauthorized (error 41)")

	e.run("user", "change-password", "alice", "wrong", "new-secret").wantError(t, ExitError, "InvalidCredentials")
	e.runStdin("new-secret\n", "user", "change-password", "alice", "secret1", "-").wantCode(t, ExitOK)
	e.ok("me", "--username", "alice", "--password", "new-secret")
	e.run("me", "--username", "alice", "--password", "secret1").wantError(t, ExitAuth, "InvalidCredentials (error 42)")

	e.run("user", "create", "al", "x").wantError(t, ExitError, "InvalidUsername")
	e.run("user", "create", "alice", "x").wantError(t, ExitError, "UserAlreadyExists")
	e.run("user", "update", "alice").wantError(t, ExitUsage, "nothing to change")
	e.run("user", "update", "alice", "--status", "sleepy").wantError(t, ExitUsage, "--status")
	wantLines(t, e.ok("user", "delete", "robert"), "user robert deleted")
	e.run("user", "get", "robert").wantError(t, ExitError, "get user robert", "ResourceNotFound")
	e.run("user", "delete", "0").wantError(t, ExitError, "CannotDeleteUser")
}

func TestPATCommands(t *testing.T) {
	e := newCLI(t)
	token := strings.TrimSpace(e.ok("pat", "create", "ci", "--expiry", "30d"))
	if len(token) < 20 || strings.ContainsAny(token, " \n") {
		t.Fatalf("pat create printed %q, want the bare token", token)
	}
	var me clientView
	e.okJSON(&me, "me", "--token", token)
	if me.UserID == nil || *me.UserID != 0 {
		t.Fatalf("me with the token = %+v", me)
	}
	var created map[string]string
	e.okJSON(&created, "pat", "create", "forever", "--expiry", "never")
	if created["name"] != "forever" || created["token"] == "" {
		t.Fatalf("pat create -o json = %v", created)
	}
	var list []struct {
		Name     string  `json:"name"`
		ExpiryAt *string `json:"expiry_at"`
	}
	e.okJSON(&list, "pat", "list")
	if len(list) != 2 || list[0].Name != "ci" || list[0].ExpiryAt == nil || list[1].Name != "forever" || list[1].ExpiryAt != nil {
		t.Fatalf("pat list = %+v", list)
	}
	wantLines(t, e.ok("pat", "list"), "NAME", "EXPIRES", "never")
	e.run("pat", "create", "ci").wantError(t, ExitError, "PersonalAccessTokenAlreadyExists")
	e.run("pat", "create", "x", "--expiry", "later").wantError(t, ExitUsage, "--expiry")
	wantLines(t, e.ok("pat", "delete", "ci"), `token "ci" deleted`)
	e.run("me", "--token", token).wantError(t, ExitAuth, "log in with a token", "InvalidPersonalAccessToken")
	e.run("pat", "delete", "ci").wantError(t, ExitError, "ResourceNotFound")
}
