package bench

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/iggo-dev/iggo/client"
	"github.com/iggo-dev/iggo/internal/config"
	"github.com/iggo-dev/iggo/internal/httpapi"
	"github.com/iggo-dev/iggo/wire"
)

// DefaultHTTPAddr is the HTTP API address --transport http uses against
// an external server when --http-addr is not given.
const DefaultHTTPAddr = "127.0.0.1:3000"

// maxHTTPReply bounds one HTTP reply the benchmark reads.
const maxHTTPReply = 256 << 20

// httpData is an actor's data path over the HTTP API (--transport http):
// produce and poll are JSON requests on one keep-alive connection with a
// JWT from /users/login. Setup, the fill and consumer-group membership
// stay on the binary connection (groups need a binary transport).
type httpData struct {
	base  string
	token string
	c     *http.Client
	// msgs is the JSON "messages" array of the actor's batch, encoded once
	// (the batch's payloads and ids never change; the origin timestamp is
	// the server's decode time over HTTP).
	msgs []byte
}

// httpAddress is the HTTP API to benchmark: the embedded broker's bound
// address (from its runtime configuration), else --http-addr.
func (t *target) httpAddress(cfg *Config) (string, error) {
	if t.label == "embedded" {
		data, err := os.ReadFile(filepath.Join(t.dataDir, "runtime", "current_config.toml"))
		if err != nil {
			return "", fmt.Errorf("find the embedded HTTP address: %w", err)
		}
		eff, _, err := config.Parse(data)
		if err != nil {
			return "", fmt.Errorf("find the embedded HTTP address: %w", err)
		}
		return eff.HTTP.Address, nil
	}
	if cfg.HTTPAddr != "" {
		return cfg.HTTPAddr, nil
	}
	return DefaultHTTPAddr, nil
}

// connectHTTP gives the actor its HTTP data path when the transport is
// http (nothing otherwise).
func (a *actor) connectHTTP(ctx context.Context, t *target, cfg *Config) error {
	if cfg.Transport != "http" {
		return nil
	}
	addr, err := t.httpAddress(cfg)
	if err != nil {
		return err
	}
	scheme := "http"
	tr := &http.Transport{MaxIdleConnsPerHost: 2, IdleConnTimeout: time.Minute}
	if cfg.TLS {
		scheme, tr.TLSClientConfig = "https", t.tls
	}
	h := &httpData{base: scheme + "://" + addr, c: &http.Client{Transport: tr, Timeout: time.Minute}}
	var id struct {
		AccessToken struct {
			Token string `json:"token"`
		} `json:"access_token"`
	}
	body, _ := json.Marshal(map[string]string{"username": cfg.Username, "password": cfg.Password})
	if err := h.do(ctx, http.MethodPost, "/users/login", body, http.StatusOK, &id); err != nil {
		return fmt.Errorf("http login: %w", err)
	}
	h.token = id.AccessToken.Token
	a.web = h
	return nil
}

// do sends one request and decodes a JSON answer into out (nil: none).
func (h *httpData) do(ctx context.Context, method, path string, body []byte, want int, out any) error {
	data, err := h.doRaw(ctx, method, path, body, want)
	if err != nil || out == nil {
		return err
	}
	return json.Unmarshal(data, out)
}

// doRaw sends one request and returns the answer's body.
func (h *httpData) doRaw(ctx context.Context, method, path string, body []byte, want int) ([]byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, h.base+path, rd)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if h.token != "" {
		req.Header.Set("Authorization", "Bearer "+h.token)
	}
	resp, err := h.c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxHTTPReply))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != want {
		return nil, fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, bytes.TrimSpace(data))
	}
	return data, nil
}

// segment is an identifier as a path segment.
func segment(id wire.Identifier) string {
	if id.IsNumeric() {
		return strconv.FormatUint(uint64(id.Num), 10)
	}
	return url.PathEscape(id.Str)
}

// messagesJSON encodes a batch's messages as the produce body's array.
func messagesJSON(batch []byte) ([]byte, error) {
	v, _, err := wire.ParseBatch(batch)
	if err != nil {
		return nil, err
	}
	// The id goes as a decimal string: JSON numbers in requests are at
	// most u64 (http-api.md §5) and the batch's ids use the high half.
	type msg struct {
		ID      string `json:"id"`
		Payload string `json:"payload"`
	}
	var out []msg
	it := v.Messages()
	for m, ok := it.Next(); ok; m, ok = it.Next() {
		id, err := httpapi.U128(m.ID()).MarshalJSON()
		if err != nil {
			return nil, err
		}
		out = append(out, msg{ID: string(id), Payload: base64.StdEncoding.EncodeToString(m.Payload())})
	}
	return json.Marshal(out)
}

func partitioningJSON(p wire.Partitioning) string {
	switch p.Kind {
	case wire.PartitionByID:
		return `{"kind":"partition_id","value":"` + base64.StdEncoding.EncodeToString(binary.LittleEndian.AppendUint32(nil, p.PartitionID)) + `"}`
	case wire.PartitionByKey:
		return `{"kind":"messages_key","value":"` + base64.StdEncoding.EncodeToString(p.Key) + `"}`
	}
	return `{"kind":"balanced","value":""}`
}

// sendBatch sends a batch over the actor's transport.
func (a *actor) sendBatch(ctx context.Context, stream, topic wire.Identifier, p wire.Partitioning, batch []byte) error {
	if a.web == nil {
		_, err := a.c.SendBatch(ctx, stream, topic, p, batch)
		return err
	}
	h := a.web
	if h.msgs == nil {
		m, err := messagesJSON(batch)
		if err != nil {
			return fmt.Errorf("encode the JSON batch: %w", err)
		}
		h.msgs = m
	}
	body := make([]byte, 0, len(h.msgs)+96)
	body = append(body, `{"partitioning":`...)
	body = append(body, partitioningJSON(p)...)
	body = append(body, `,"messages":`...)
	body = append(body, h.msgs...)
	body = append(body, '}')
	return h.do(ctx, http.MethodPost, "/streams/"+segment(stream)+"/topics/"+segment(topic)+"/messages", body, http.StatusCreated, nil)
}

// errHTTPGroups: consumer-group polls need a binary transport.
var errHTTPGroups = errors.New("consumer-group polls are not served over HTTP")

// pollBuffer polls over the actor's transport. Over HTTP the JSON reply
// is turned back into a wire.PolledMessages (one batch stamped with the
// first offset and the broker timestamp), so the accounting is the same.
func (a *actor) pollBuffer(ctx context.Context, req wire.PollMessages, pb *client.PollBuffer) (*wire.PolledMessages, error) {
	if a.web == nil {
		return a.c.PollMessagesBuffer(ctx, req, pb)
	}
	if req.Consumer.Kind != wire.ConsumerSingle {
		return nil, errHTTPGroups
	}
	kinds := map[wire.PollingKind]string{wire.PollOffset: "offset", wire.PollTimestamp: "timestamp", wire.PollFirst: "first", wire.PollLast: "last", wire.PollNext: "next"}
	q := url.Values{}
	q.Set("consumer_id", segment(req.Consumer.ID))
	q.Set("partition_id", strconv.FormatUint(uint64(req.Partition.ID), 10))
	q.Set("kind", kinds[req.Strategy.Kind])
	q.Set("value", strconv.FormatUint(req.Strategy.Value, 10))
	q.Set("count", strconv.FormatUint(uint64(req.Count), 10))
	q.Set("auto_commit", strconv.FormatBool(req.AutoCommit))
	data, err := a.web.doRaw(ctx, http.MethodGet, "/streams/"+segment(req.StreamID)+"/topics/"+segment(req.TopicID)+"/messages?"+q.Encode(), nil, http.StatusOK)
	if err != nil {
		return nil, err
	}
	res, err := readPoll(data)
	if err != nil {
		return nil, err
	}
	out := &wire.PolledMessages{PartitionID: res.partitionID, CurrentOffset: res.currentOffset}
	if len(res.msgs) == 0 {
		return out, nil
	}
	batch, err := res.batch()
	if err != nil {
		return nil, err
	}
	out.Count, out.Records = uint32(len(res.msgs)), batch
	return out, nil
}
