package wire

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// vectorsDir is the shared conformance vectors, relative to this package
// (the repository root's ../shared).
var vectorsDir = filepath.Join("..", "..", "shared", "protocol", "vectors")

// requestVector is one entry of requests.json.
type requestVector struct {
	Name         string          `json:"name"`
	Code         uint32          `json:"code"`
	Operation    uint8           `json:"operation"`
	Inputs       json.RawMessage `json:"inputs"`
	HeaderFields struct {
		Size      uint32 `json:"size"`
		Command   uint8  `json:"command"`
		ClientHi  uint64 `json:"client_hi_u64"`
		ClientLo  uint64 `json:"client_lo_u64"`
		Request   uint64 `json:"request"`
		Operation uint8  `json:"operation"`
		Session   uint64 `json:"session"`
		Code      uint32 `json:"reserved_196_code"`
		Timestamp uint64 `json:"timestamp"`
	} `json:"header_fields"`
	BodyHex  string `json:"body_hex"`
	FrameHex string `json:"frame_hex"`
	// Body is BodyHex decoded.
	Body []byte `json:"-"`
}

// replyVector is one entry of replies.json.
type replyVector struct {
	Name           string          `json:"name"`
	Operation      *uint8          `json:"operation"`
	Status         uint32          `json:"status"`
	BodyHex        string          `json:"body_hex"`
	PayloadHex     string          `json:"payload_after_result_section_hex"`
	FrameHex       string          `json:"frame_hex"`
	SDKDecoded     json.RawMessage `json:"sdk_decoded"`
	SDKDecodeError string          `json:"sdk_decode_error"`
	// Body and Payload are BodyHex and PayloadHex decoded.
	Body    []byte `json:"-"`
	Payload []byte `json:"-"`
}

// batchVector is one entry of batches.json, kept raw: each area decodes the
// fields it checks.
type batchVector struct {
	Name string          `json:"name"`
	Raw  json.RawMessage `json:"-"`
}

// The per-area conformance checks, keyed by vector name. Every vector must
// be claimed by exactly one entry of these maps; an unknown vector fails.
var (
	requestVectorChecks = []map[string]func(*testing.T, requestVector){
		systemRequestVectors, catalogRequestVectors, messageRequestVectors,
	}
	replyVectorChecks = []map[string]func(*testing.T, replyVector){
		frameReplyVectors, systemReplyVectors, catalogReplyVectors, messageReplyVectors,
	}
	batchVectorChecks = []map[string]func(*testing.T, batchVector){
		messageBatchVectors,
	}
)

func loadVectors(t *testing.T, file string, into any) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(vectorsDir, file))
	if os.IsNotExist(err) {
		if _, statErr := os.Stat(vectorsDir); os.IsNotExist(statErr) {
			t.Skipf("conformance vectors not found at %s (../shared is absent)", vectorsDir)
		}
	}
	if err != nil {
		t.Fatalf("read %s: %v", file, err)
	}
	if err := json.Unmarshal(data, into); err != nil {
		t.Fatalf("parse %s: %v", file, err)
	}
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatalf("bad hex %q: %v", s, err)
	}
	return b
}

func findCheck[V any](t *testing.T, maps []map[string]func(*testing.T, V), name string) func(*testing.T, V) {
	t.Helper()
	var found func(*testing.T, V)
	for _, m := range maps {
		if f, ok := m[name]; ok {
			if found != nil {
				t.Fatalf("vector %s is claimed twice", name)
			}
			found = f
		}
	}
	if found == nil {
		t.Fatalf("vector %s has no conformance check", name)
	}
	return found
}

func TestRequestVectors(t *testing.T) {
	var file struct {
		Version uint32          `json:"protocol_version_packed"`
		Vectors []requestVector `json:"vectors"`
	}
	loadVectors(t, "requests.json", &file)
	if file.Version != ProtocolVersion {
		t.Errorf("vectors are for version %d, package speaks %d", file.Version, ProtocolVersion)
	}
	if len(file.Vectors) == 0 {
		t.Fatal("requests.json has no vectors")
	}
	for _, v := range file.Vectors {
		t.Run(v.Name, func(t *testing.T) {
			frame := mustHex(t, v.FrameHex)
			v.Body = mustHex(t, v.BodyHex)
			if len(frame) != HeaderSize+len(v.Body) || !bytes.Equal(frame[HeaderSize:], v.Body) {
				t.Fatalf("frame does not end with the body")
			}
			var h RequestHeader
			if err := h.Decode(frame); err != nil {
				t.Fatalf("decode header: %v", err)
			}
			hf := v.HeaderFields
			want := RequestHeader{
				Prologue:  Prologue{Size: hf.Size},
				Client:    Uint128{Lo: hf.ClientLo, Hi: hf.ClientHi},
				Timestamp: hf.Timestamp,
				Request:   hf.Request,
				Operation: Operation(hf.Operation),
				Session:   hf.Session,
				Code:      Command(hf.Code),
			}
			if h != want {
				t.Errorf("header = %+v, want %+v", h, want)
			}
			if h.Client.IsZero() {
				t.Errorf("client id is zero")
			}
			if PeekSize(frame) != uint32(len(frame)) || PeekKind(frame) != KindRequest {
				t.Errorf("peek size/kind = %d/%v", PeekSize(frame), PeekKind(frame))
			}
			enc := want.AppendTo(nil)
			if !bytes.Equal(enc, frame[:HeaderSize]) {
				t.Errorf("encoded header differs:\n got %x\nwant %x", enc, frame[:HeaderSize])
			}
			if h.Operation != Operation(v.Operation) {
				t.Errorf("operation %d, vector says %d", h.Operation, v.Operation)
			}
			code, ok := h.Command()
			if h.Operation == OpRegister {
				code, ok = Command(v.Code), true
			}
			info, found := LookupCommand(Command(v.Code))
			if !ok || code != Command(v.Code) || !found || info.Operation != h.Operation {
				t.Errorf("registry: command %d/%v, info %+v for operation %v", code, ok, info, h.Operation)
			}
			findCheck(t, requestVectorChecks, v.Name)(t, v)
		})
	}
}

func TestReplyVectors(t *testing.T) {
	var file struct {
		Vectors []replyVector `json:"vectors"`
	}
	loadVectors(t, "replies.json", &file)
	if len(file.Vectors) == 0 {
		t.Fatal("replies.json has no vectors")
	}
	for _, v := range file.Vectors {
		t.Run(v.Name, func(t *testing.T) {
			frame := mustHex(t, v.FrameHex)
			v.Body = mustHex(t, v.BodyHex)
			v.Payload = mustHex(t, v.PayloadHex)
			if PeekSize(frame) != uint32(len(frame)) {
				t.Fatalf("size %d, frame is %d bytes", PeekSize(frame), len(frame))
			}
			if PeekKind(frame) == KindReply {
				var h ReplyHeader
				if err := h.Decode(frame); err != nil {
					t.Fatalf("decode reply header: %v", err)
				}
				if v.Operation == nil || h.Operation != Operation(*v.Operation) || h.Status != v.Status {
					t.Errorf("operation/status = %v/%d", h.Operation, h.Status)
				}
				if enc := h.AppendTo(nil); !bytes.Equal(enc, frame[:HeaderSize]) {
					t.Errorf("re-encoded reply header differs:\n got %x\nwant %x", enc, frame[:HeaderSize])
				}
				if !bytes.Equal(frame[HeaderSize:], v.Body) {
					t.Fatalf("frame body differs from body_hex")
				}
				if h.Status == 0 && (h.Operation.ResultFramed() || (h.Operation == OpRegister && len(v.Body) > 0)) {
					payload, err := SplitResult(v.Body)
					if err == nil && !bytes.Equal(payload, v.Payload) {
						t.Errorf("payload after result section = %x, want %x", payload, v.Payload)
					}
					if (err != nil) != (v.SDKDecodeError != "") {
						t.Errorf("result section error %v, sdk error %q", err, v.SDKDecodeError)
					}
				}
			}
			findCheck(t, replyVectorChecks, v.Name)(t, v)
		})
	}
}

func TestBatchVectors(t *testing.T) {
	var file struct {
		Vectors []json.RawMessage `json:"vectors"`
	}
	loadVectors(t, "batches.json", &file)
	if len(file.Vectors) == 0 {
		t.Fatal("batches.json has no vectors")
	}
	for _, raw := range file.Vectors {
		var v batchVector
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatal(err)
		}
		v.Raw = raw
		t.Run(v.Name, func(t *testing.T) {
			findCheck(t, batchVectorChecks, v.Name)(t, v)
		})
	}
}
