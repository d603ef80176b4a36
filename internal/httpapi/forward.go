package httpapi

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"
)

// Relaying metadata writes from a follower to the leader (cluster.go).
//
// The follower authenticates the caller first (a bad bearer never leaves
// the node), reads the body (at most http.max_request_size), and sends the
// same method, path, query, Authorization and Content-Type to the leader's
// HTTP address with the Iggy-Forwarded marker; the leader's answer —
// status, body, and the headers a client reads — is the answer. Failures
// that prove the request did not reach a leader (no leader known, a
// refused connection, the receiver no longer leading) are retried for up
// to forwardBudget; one attempt may take forwardAttempt. What the caller
// gets when relaying fails:
//   - 503 no_reachable_primary: no leader could be reached within the
//     budget (nothing was applied; retry);
//   - 503 forward_busy: forwardSlots relays are running on this node;
//   - 504 forward_timeout / forward_failed: the request reached the leader
//     but no answer came back (timed out, or the connection broke): the
//     outcome is unknown, as with a binary request answered 57.

const (
	forwardAttempt = 35 * time.Second
	forwardBudget  = 30 * time.Second
	forwardSlots   = 128
	forwardRetry   = 200 * time.Millisecond
)

// forwarder relays requests to the leader.
type forwarder struct {
	client *http.Client
	scheme string
	slots  chan struct{}
	// budget and retry are forwardBudget and forwardRetry.
	budget, retry time.Duration
}

func newForwarder(useTLS bool, certFile string) *forwarder {
	tr := &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConnsPerHost: 16,
		IdleConnTimeout:     90 * time.Second,
		ForceAttemptHTTP2:   false,
	}
	scheme := "http"
	if useTLS {
		scheme = "https"
		// The roster names nodes by IP, which server certificates rarely
		// list, so the name is not checked; the chain is (chainVerifier).
		tr.TLSClientConfig = &tls.Config{
			MinVersion: tls.VersionTLS12, InsecureSkipVerify: true, //nolint:gosec // verified below
			VerifyPeerCertificate: chainVerifier(certFile),
		}
	}
	return &forwarder{client: &http.Client{Transport: tr, CheckRedirect: noRedirect}, scheme: scheme,
		slots: make(chan struct{}, forwardSlots), budget: forwardBudget, retry: forwardRetry}
}

// chainVerifier checks that a leader's certificate chains to the system's
// roots or to the certificates of certFile (this node's own: a shared
// certificate, or one signed by the same CA), so a bearer is never handed
// to a server that cannot show one.
func chainVerifier(certFile string) func([][]byte, [][]*x509.Certificate) error {
	roots, err := x509.SystemCertPool()
	if err != nil {
		roots = x509.NewCertPool()
	}
	if data, err := os.ReadFile(certFile); err == nil {
		roots.AppendCertsFromPEM(data)
	}
	return func(raw [][]byte, _ [][]*x509.Certificate) error {
		if len(raw) == 0 {
			return errors.New("relay: the leader sent no certificate")
		}
		certs := make([]*x509.Certificate, len(raw))
		for i, r := range raw {
			c, err := x509.ParseCertificate(r)
			if err != nil {
				return fmt.Errorf("relay: leader certificate: %w", err)
			}
			certs[i] = c
		}
		inter := x509.NewCertPool()
		for _, c := range certs[1:] {
			inter.AddCert(c)
		}
		if _, err := certs[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter}); err != nil {
			return fmt.Errorf("%w: %w", errUntrustedLeader, err)
		}
		return nil
	}
}

func noRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// relayedHeaders are the answer headers copied back to the caller.
var relayedHeaders = []string{"Content-Type", "Content-Disposition", "Retry-After", "Location", "Iggy-View"}

// relay forwards c to the leader. It returns errServeHere when this node
// has become the leader meanwhile (the caller serves it).
func (s *Server) relay(c *call) error {
	f := s.forward
	var body []byte
	if c.r.Body != nil && c.r.Body != http.NoBody {
		limit := int64(s.cfg.MaxRequestSize)
		if c.r.ContentLength > limit {
			return tooLarge()
		}
		b, err := io.ReadAll(http.MaxBytesReader(c.w, c.r.Body, limit))
		if err != nil {
			var mb *http.MaxBytesError
			if errors.As(err, &mb) {
				return tooLarge()
			}
			return errBadRequest("cannot read the request body")
		}
		body = b
	}
	select {
	case f.slots <- struct{}{}:
		defer func() { <-f.slots }()
	default:
		e := httpError(http.StatusServiceUnavailable, "forward_busy", "Too many requests are being relayed to the leader")
		e.RetryAfter = true
		return e
	}
	ctx := c.r.Context()
	deadline := time.Now().Add(f.budget)
	peer := peerAddr(c.r)
	for {
		p, ok := s.opts.Cluster.Primary(peer)
		if ok && p.Self {
			c.r.Body = io.NopCloser(bytes.NewReader(body))
			return errServeHere
		}
		if ok && p.Relay != "" {
			resp, err := f.attempt(ctx, c.r, p.Relay, body)
			switch {
			case err == nil && !refusedAsFollower(resp):
				defer resp.Body.Close()
				copyAnswer(c.w, resp)
				return nil
			case err == nil:
				_ = resp.Body.Close() // leadership moved: try the new leader
			case ctx.Err() != nil:
				return ctx.Err()
			case errors.Is(err, errUntrustedLeader):
				s.log.Warn("relay to the leader refused: its HTTP certificate does not chain to the system roots or to http.tls.cert_file",
					"leader", p.Relay, "err", err)
				return noReachablePrimary()
			case errors.Is(err, context.DeadlineExceeded):
				return httpError(http.StatusGatewayTimeout, "forward_timeout", "The leader did not answer in time; the outcome is unknown")
			case !undelivered(err):
				s.log.Warn("relay to the leader failed", "leader", p.Relay, "path", c.r.URL.Path, "err", err)
				return httpError(http.StatusGatewayTimeout, "forward_failed", "The connection to the leader broke; the outcome is unknown")
			}
		}
		if time.Now().Add(f.retry).After(deadline) {
			return noReachablePrimary()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(f.retry):
		}
	}
}

// noReachablePrimary answers a relay that found no leader to take it.
func noReachablePrimary() *apiError {
	e := httpError(http.StatusServiceUnavailable, "no_reachable_primary", "No metadata leader could be reached")
	e.RetryAfter = true
	return e
}

// errUntrustedLeader: the leader's TLS certificate does not verify.
var errUntrustedLeader = errors.New("relay: leader certificate not trusted")

// errServeHere: the relay found this node leading; serve locally.
var errServeHere = errors.New("serve here")

// attempt sends one relayed request to addr.
func (f *forwarder) attempt(ctx context.Context, in *http.Request, addr string, body []byte) (*http.Response, error) {
	ctx, cancel := context.WithTimeout(ctx, forwardAttempt)
	out, err := http.NewRequestWithContext(ctx, in.Method, f.scheme+"://"+addr+in.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		cancel()
		return nil, err
	}
	for _, h := range []string{"Authorization", "Content-Type", "Accept"} {
		if v := in.Header.Get(h); v != "" {
			out.Header.Set(h, v)
		}
	}
	out.Header.Set(forwardedHeader, "1")
	resp, err := f.client.Do(out)
	if err != nil {
		cancel()
		return nil, err
	}
	resp.Body = cancelOnClose{resp.Body, cancel}
	return resp, nil
}

// cancelOnClose ends an attempt's context with its body.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}

// undelivered reports whether err proves the request never reached the
// receiver (the connection could not be made).
func undelivered(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// refusedAsFollower reports an answer of a node that is no longer the
// leader (503 not_primary, or the binary protocol's 58 / 503): the request
// was not applied there.
func refusedAsFollower(resp *http.Response) bool {
	return resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get(notPrimaryHeader) != ""
}

// notPrimaryHeader is set on the answers of a node that refuses a request
// because it does not lead, so a relaying node knows to retry elsewhere.
const notPrimaryHeader = "Iggy-Not-Primary"

// copyAnswer writes the leader's answer to w.
func copyAnswer(w http.ResponseWriter, resp *http.Response) {
	h := w.Header()
	h.Del("iggy-view")
	for _, k := range relayedHeaders {
		if v := resp.Header.Values(k); len(v) > 0 {
			h[http.CanonicalHeaderKey(k)] = v
		}
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}
