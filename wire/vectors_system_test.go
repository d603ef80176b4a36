package wire

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"testing"
)

// Conformance checks for system, user, PAT, client and login vectors.
var (
	systemRequestVectors = map[string]func(*testing.T, requestVector){
		"login_register": func(t *testing.T, v requestVector) {
			var in struct {
				Password, Username, SDKName, SDKVersion string
				ProtocolVersion                         uint32 `json:"protocol_version"`
			}
			unmarshalInputs(t, v.Inputs, &in, map[string]*string{"password": &in.Password, "username": &in.Username, "sdk_name": &in.SDKName, "sdk_version": &in.SDKVersion})
			want := LoginRegister{Version: ClientVersionInfo{ProtocolVersion: in.ProtocolVersion, SDKName: in.SDKName, SDKVersion: in.SDKVersion}, Username: in.Username, Password: in.Password}
			checkBody(t, v.Body, &want, &LoginRegister{})
		},
		"login_register_with_pat": func(t *testing.T, v requestVector) {
			var in struct {
				Token, SDKName, SDKVersion string
				ProtocolVersion            uint32 `json:"protocol_version"`
			}
			unmarshalInputs(t, v.Inputs, &in, map[string]*string{"token": &in.Token, "sdk_name": &in.SDKName, "sdk_version": &in.SDKVersion})
			want := LoginRegisterWithPAT{Version: ClientVersionInfo{ProtocolVersion: in.ProtocolVersion, SDKName: in.SDKName, SDKVersion: in.SDKVersion}, Token: in.Token}
			checkBody(t, v.Body, &want, &LoginRegisterWithPAT{})
		},
		"ping_before_login":          sysCheckEmptyRequest,
		"ping":                       sysCheckEmptyRequest,
		"get_stats":                  sysCheckEmptyRequest,
		"get_cluster_metadata":       sysCheckEmptyRequest,
		"get_users":                  sysCheckEmptyRequest,
		"get_personal_access_tokens": sysCheckEmptyRequest,
		"logout":                     sysCheckEmptyRequest,
		"get_client": func(t *testing.T, v requestVector) {
			var in struct {
				ClientID uint32 `json:"client_id"`
			}
			sysMustUnmarshal(t, v.Inputs, &in)
			checkBody(t, v.Body, &GetClient{ClientID: in.ClientID}, &GetClient{})
		},
		"get_user": func(t *testing.T, v requestVector) {
			var in struct {
				UserID json.RawMessage `json:"user_id"`
			}
			sysMustUnmarshal(t, v.Inputs, &in)
			checkBody(t, v.Body, &GetUser{UserID: sysInputIdentifier(t, in.UserID)}, &GetUser{})
		},
		"delete_user": func(t *testing.T, v requestVector) {
			var in struct {
				UserID json.RawMessage `json:"user_id"`
			}
			sysMustUnmarshal(t, v.Inputs, &in)
			checkBody(t, v.Body, &DeleteUser{UserID: sysInputIdentifier(t, in.UserID)}, &DeleteUser{})
		},
		"create_user_with_permissions": sysCheckCreateUser,
		"create_user_no_permissions":   sysCheckCreateUser,
		"update_user": func(t *testing.T, v requestVector) {
			var in struct {
				UserID   json.RawMessage `json:"user_id"`
				Username *string         `json:"username"`
				Status   *uint8          `json:"status"`
			}
			sysMustUnmarshal(t, v.Inputs, &in)
			want := UpdateUser{UserID: sysInputIdentifier(t, in.UserID)}
			if in.Username != nil {
				want.Username = *in.Username
			}
			if in.Status != nil {
				want.Status = UserStatus(*in.Status)
			}
			checkBody(t, v.Body, &want, &UpdateUser{})
		},
		"update_permissions_none": func(t *testing.T, v requestVector) {
			var in struct {
				UserID      json.RawMessage      `json:"user_id"`
				Permissions *sysPermissionsInput `json:"permissions"`
			}
			sysMustUnmarshal(t, v.Inputs, &in)
			want := UpdatePermissions{UserID: sysInputIdentifier(t, in.UserID), Permissions: in.Permissions.toPermissions()}
			checkBody(t, v.Body, &want, &UpdatePermissions{})
		},
		"change_password": func(t *testing.T, v requestVector) {
			var in struct {
				UserID          json.RawMessage `json:"user_id"`
				CurrentPassword string          `json:"current_password"`
				NewPassword     string          `json:"new_password"`
			}
			sysMustUnmarshal(t, v.Inputs, &in)
			want := ChangePassword{UserID: sysInputIdentifier(t, in.UserID), CurrentPassword: in.CurrentPassword, NewPassword: in.NewPassword}
			checkBody(t, v.Body, &want, &ChangePassword{})
		},
		"create_personal_access_token": func(t *testing.T, v requestVector) {
			var in struct {
				Name string `json:"name"`
				// ExpiryArg is the Go SDK's u32 argument, which it writes
				// into the high half of the u64 field (vectors/README.md).
				ExpiryArg uint32 `json:"expiry_go_u32_argument"`
			}
			sysMustUnmarshal(t, v.Inputs, &in)
			want := CreatePersonalAccessToken{Name: in.Name, Expiry: uint64(in.ExpiryArg) << 32}
			checkBody(t, v.Body, &want, &CreatePersonalAccessToken{})
		},
		"delete_personal_access_token": func(t *testing.T, v requestVector) {
			var in struct {
				Name string `json:"name"`
			}
			sysMustUnmarshal(t, v.Inputs, &in)
			checkBody(t, v.Body, &DeletePersonalAccessToken{Name: in.Name}, &DeletePersonalAccessToken{})
		},
	}
	systemReplyVectors = map[string]func(*testing.T, replyVector){
		"login_register_ok": func(t *testing.T, v replyVector) {
			var sdk struct {
				UserID                uint32
				Session               uint64
				ServerProtocolVersion uint32
				ServerVersion         string
			}
			if err := json.Unmarshal(v.SDKDecoded, &sdk); err != nil {
				t.Fatal(err)
			}
			want := LoginRegisterReply(sdk)
			checkBody(t, v.Payload, &want, &LoginRegisterReply{})
		},
		"get_user_with_permissions": sysCheckUserDetails,
		"get_user_no_permissions":   sysCheckUserDetails,
		"create_user_ok":            sysCheckUserDetails,
		"create_pat_ok": func(t *testing.T, v replyVector) {
			var sdk struct {
				Token string `json:"token"`
			}
			sysMustUnmarshal(t, v.SDKDecoded, &sdk)
			checkBody(t, v.Payload, &RawToken{Token: sdk.Token}, &RawToken{})
		},
		"get_pats": func(t *testing.T, v replyVector) {
			// The vector's sdk_decoded is null (the SDK's list decoder
			// yields nothing to record); its description gives the entries:
			// "ci" never expiring and "deploy" expiring at 1.8e15 µs.
			if string(v.SDKDecoded) != "null" {
				t.Fatalf("sdk_decoded is now %s: build the expectation from it", v.SDKDecoded)
			}
			want := PersonalAccessTokens{{Name: "ci", ExpiryAt: 0}, {Name: "deploy", ExpiryAt: 1_800_000_000_000_000}}
			checkBody(t, v.Payload, &want, &PersonalAccessTokens{})
		},
		"get_client": func(t *testing.T, v replyVector) {
			var sdk struct {
				ID                  uint32 `json:"id"`
				Address             string `json:"address"`
				UserID              uint32 `json:"userId"`
				Transport           string `json:"transport"`
				ConsumerGroupsCount uint32 `json:"consumerGroupsCount"`
				ConsumerGroups      []struct {
					StreamID uint32 `json:"streamId"`
					TopicID  uint32 `json:"topicId"`
					GroupID  uint32 `json:"groupId"`
				} `json:"consumerGroups"`
			}
			sysMustUnmarshal(t, v.SDKDecoded, &sdk)
			want := ClientDetails{ClientID: sdk.ID, UserID: sdk.UserID, Address: sdk.Address}
			switch sdk.Transport {
			case "tcp":
				want.Transport = TransportTCP
			case "quic":
				want.Transport = TransportQUIC
			default:
				t.Fatalf("transport %q", sdk.Transport)
			}
			for _, g := range sdk.ConsumerGroups {
				want.ConsumerGroups = append(want.ConsumerGroups, ClientConsumerGroup(g))
			}
			if int(sdk.ConsumerGroupsCount) != len(want.ConsumerGroups) {
				t.Fatalf("consumerGroupsCount %d, %d groups", sdk.ConsumerGroupsCount, len(want.ConsumerGroups))
			}
			checkBody(t, v.Payload, &want, &ClientDetails{})
		},
	}
)

// unmarshalInputs decodes a vector's inputs into dst and then copies the
// named string fields (snake_case keys) into the given pointers.
func unmarshalInputs(t *testing.T, raw json.RawMessage, dst any, strs map[string]*string) {
	t.Helper()
	if err := json.Unmarshal(raw, dst); err != nil {
		t.Fatalf("inputs: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("inputs: %v", err)
	}
	for k, p := range strs {
		s, ok := m[k].(string)
		if !ok {
			t.Fatalf("inputs: %q missing or not a string", k)
		}
		*p = s
	}
}

// checkBody asserts that want encodes to exactly wire, that wire decodes
// into a value equal to want, and that re-encoding the decoded value gives
// wire again. fresh must be a zero value of want's type.
func checkBody[B Body](t *testing.T, wire []byte, want, fresh B) {
	t.Helper()
	if got := want.AppendTo(nil); !bytes.Equal(got, wire) {
		t.Errorf("encode:\n got %x\nwant %x", got, wire)
	}
	if err := fresh.Decode(wire); err != nil {
		t.Fatalf("decode: %v", err)
	}
	if d := cmpDiff(want, fresh); d != "" {
		t.Errorf("decode mismatch (-want +got):\n%s", d)
	}
	if got := fresh.AppendTo(nil); !bytes.Equal(got, wire) {
		t.Errorf("re-encode:\n got %x\nwant %x", got, wire)
	}
}

// sysCheckEmptyRequest checks a vector whose request body is empty.
func sysCheckEmptyRequest(t *testing.T, v requestVector) {
	checkBody(t, v.Body, Empty{}, Empty{})
}

// sysCheckCreateUser checks a CREATE_USER request vector.
func sysCheckCreateUser(t *testing.T, v requestVector) {
	var in struct {
		Username    string               `json:"username"`
		Password    string               `json:"password"`
		Status      uint8                `json:"status"`
		Permissions *sysPermissionsInput `json:"permissions"`
	}
	sysMustUnmarshal(t, v.Inputs, &in)
	want := CreateUser{Username: in.Username, Password: in.Password, Status: UserStatus(in.Status), Permissions: in.Permissions.toPermissions()}
	checkBody(t, v.Body, &want, &CreateUser{})
}

// sysCheckUserDetails checks a UserDetails reply payload against the Go
// SDK's decoded user. The SDK's status enum is 0 = active, 1 = inactive
// (wire bytes 1 and 2); its permission maps are keyed by id and become
// entries in ascending id order, the order the vectors are written in.
func sysCheckUserDetails(t *testing.T, v replyVector) {
	var sdk struct {
		ID          uint32 `json:"Id"`
		CreatedAt   uint64
		Status      int
		Username    string
		Permissions *struct {
			Global  GlobalPermissions
			Streams map[string]struct {
				ManageStream, ReadStream, ManageTopics, ReadTopics, PollMessages, SendMessages bool
				Topics                                                                         map[string]TopicPermissions
			}
		}
	}
	sysMustUnmarshal(t, v.SDKDecoded, &sdk)
	want := UserDetails{User: User{ID: sdk.ID, CreatedAt: sdk.CreatedAt, Status: UserStatus(sdk.Status + 1), Username: sdk.Username}}
	if p := sdk.Permissions; p != nil {
		want.Permissions = &Permissions{Global: p.Global}
		for _, sid := range sysSortedIDKeys(t, p.Streams) {
			s := p.Streams[strconv.FormatUint(uint64(sid), 10)]
			sp := StreamPermissions{StreamID: sid, ManageStream: s.ManageStream, ReadStream: s.ReadStream,
				ManageTopics: s.ManageTopics, ReadTopics: s.ReadTopics, PollMessages: s.PollMessages, SendMessages: s.SendMessages}
			for _, tid := range sysSortedIDKeys(t, s.Topics) {
				tp := s.Topics[strconv.FormatUint(uint64(tid), 10)]
				tp.TopicID = tid
				sp.Topics = append(sp.Topics, tp)
			}
			want.Permissions.Streams = append(want.Permissions.Streams, sp)
		}
	}
	checkBody(t, v.Payload, &want, &UserDetails{})
}

// sysSortedIDKeys returns the numeric keys of a JSON id-keyed map, ascending.
func sysSortedIDKeys[V any](t *testing.T, m map[string]V) []uint32 {
	t.Helper()
	ids := make([]uint32, 0, len(m))
	for k := range m {
		id, err := strconv.ParseUint(k, 10, 32)
		if err != nil {
			t.Fatalf("map key %q: %v", k, err)
		}
		ids = append(ids, uint32(id))
	}
	slices.Sort(ids)
	return ids
}

// sysPermissionsInput is a permission set as requests.json inputs spell it:
// snake_case keys, only the true booleans present.
type sysPermissionsInput struct {
	Global struct {
		ManageServers bool `json:"manage_servers"`
		ReadServers   bool `json:"read_servers"`
		ManageUsers   bool `json:"manage_users"`
		ReadUsers     bool `json:"read_users"`
		ManageStreams bool `json:"manage_streams"`
		ReadStreams   bool `json:"read_streams"`
		ManageTopics  bool `json:"manage_topics"`
		ReadTopics    bool `json:"read_topics"`
		PollMessages  bool `json:"poll_messages"`
		SendMessages  bool `json:"send_messages"`
	} `json:"global"`
	Streams []struct {
		StreamID     uint32 `json:"stream_id"`
		ManageStream bool   `json:"manage_stream"`
		ReadStream   bool   `json:"read_stream"`
		ManageTopics bool   `json:"manage_topics"`
		ReadTopics   bool   `json:"read_topics"`
		PollMessages bool   `json:"poll_messages"`
		SendMessages bool   `json:"send_messages"`
		Topics       []struct {
			TopicID      uint32 `json:"topic_id"`
			ManageTopic  bool   `json:"manage_topic"`
			ReadTopic    bool   `json:"read_topic"`
			PollMessages bool   `json:"poll_messages"`
			SendMessages bool   `json:"send_messages"`
		} `json:"topics"`
	} `json:"streams"`
}

// toPermissions converts the input form; nil stays nil (no permissions).
func (in *sysPermissionsInput) toPermissions() *Permissions {
	if in == nil {
		return nil
	}
	p := &Permissions{Global: GlobalPermissions(in.Global)}
	for _, s := range in.Streams {
		sp := StreamPermissions{StreamID: s.StreamID, ManageStream: s.ManageStream, ReadStream: s.ReadStream,
			ManageTopics: s.ManageTopics, ReadTopics: s.ReadTopics, PollMessages: s.PollMessages, SendMessages: s.SendMessages}
		for _, tp := range s.Topics {
			sp.Topics = append(sp.Topics, TopicPermissions(tp))
		}
		p.Streams = append(p.Streams, sp)
	}
	return p
}

// sysInputIdentifier converts an identifier input: a JSON number is a numeric
// id, a JSON string a named one.
func sysInputIdentifier(t *testing.T, raw json.RawMessage) Identifier {
	t.Helper()
	var num uint32
	if err := json.Unmarshal(raw, &num); err == nil {
		return NumericID(num)
	}
	var name string
	if err := json.Unmarshal(raw, &name); err != nil {
		t.Fatalf("identifier input %s: %v", raw, err)
	}
	return NamedID(name)
}

// sysMustUnmarshal decodes a vector's JSON field into dst.
func sysMustUnmarshal(t *testing.T, raw json.RawMessage, dst any) {
	t.Helper()
	if err := json.Unmarshal(raw, dst); err != nil {
		t.Fatalf("vector json %s: %v", raw, err)
	}
}
