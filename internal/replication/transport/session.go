package transport

import (
	"fmt"
	"net"
	"time"
)

// sendReject writes a Reject frame (best effort) and returns the local
// error describing it.
func (t *Transport) sendReject(c net.Conn, r RejectReason, detail string) error {
	_, _ = c.Write(appendFrame(nil, frameReject, rejectPayload(r, detail)))
	return &HandshakeError{Reason: r, Local: true, Detail: detail}
}

// readHandshakeFrame reads one frame and turns a Reject into its error.
func (t *Transport) readHandshakeFrame(c net.Conn, want frameType) ([]byte, error) {
	ft, p, _, err := readFrame(c, nil, challengeBytes+maxRejectText+1)
	if err != nil {
		return nil, fmt.Errorf("read handshake: %w", err)
	}
	if ft == frameReject {
		return nil, decodeReject(p)
	}
	if ft != want {
		return nil, fmt.Errorf("%w: type %d, want %d", errUnexpectedFrame, ft, want)
	}
	return p, nil
}

// acceptHandshake runs the acceptor side: Hello in, Challenge out, Finish
// in, Welcome out. It returns the authenticated peer id.
func (t *Transport) acceptHandshake(c net.Conn) (NodeID, error) {
	if err := c.SetDeadline(time.Now().Add(t.cfg.HandshakeTimeout)); err != nil {
		return 0, fmt.Errorf("handshake deadline: %w", err)
	}
	p, err := t.readHandshakeFrame(c, frameHello)
	if err != nil {
		return 0, err
	}
	h, err := decodeHello(p, false)
	if err != nil {
		return 0, t.sendReject(c, RejectProtocol, err.Error())
	}
	switch {
	case h.version != handshakeVersion:
		return 0, t.sendReject(c, RejectVersion, fmt.Sprintf("peer speaks version %d, this node %d", h.version, handshakeVersion))
	case h.clusterID != t.clusterID:
		return 0, t.sendReject(c, RejectCluster, fmt.Sprintf("peer cluster id %s, this node's %s", shortID(h.clusterID), shortID(t.clusterID)))
	case h.to != t.cfg.Self:
		return 0, t.sendReject(c, RejectReplica, fmt.Sprintf("peer %d dialed replica %d, this node is %d", h.from, h.to, t.cfg.Self))
	case h.from >= t.cfg.Self:
		return 0, t.sendReject(c, RejectDirection, fmt.Sprintf("replica %d dialed replica %d", h.from, t.cfg.Self))
	}
	t.mu.Lock()
	_, known := t.peers[h.from]
	t.mu.Unlock()
	if !known {
		return 0, t.sendReject(c, RejectUnknownPeer, fmt.Sprintf("replica %d", h.from))
	}
	nonce, err := newNonce()
	if err != nil {
		return 0, err
	}
	ch := hello{version: handshakeVersion, clusterID: t.clusterID, from: t.cfg.Self, to: h.from, nonce: nonce}
	ch.proof = sign(t.keys, "acceptor", t.clusterID, h.from, t.cfg.Self, h.nonce, nonce)
	if _, err := c.Write(appendFrame(nil, frameChallenge, ch.append(nil, true))); err != nil {
		return 0, fmt.Errorf("write challenge: %w", err)
	}
	p, err = t.readHandshakeFrame(c, frameFinish)
	if err != nil {
		return 0, err
	}
	proof, err := decodeProof(p)
	if err != nil {
		return 0, t.sendReject(c, RejectProtocol, err.Error())
	}
	if !verifyProof(t.keys, proof, "dialer", t.clusterID, h.from, t.cfg.Self, h.nonce, nonce) {
		return 0, t.sendReject(c, RejectAuth, fmt.Sprintf("replica %d", h.from))
	}
	if _, err := c.Write(appendFrame(nil, frameWelcome, nil)); err != nil {
		return 0, fmt.Errorf("write welcome: %w", err)
	}
	if err := c.SetDeadline(time.Time{}); err != nil {
		return 0, fmt.Errorf("clear deadline: %w", err)
	}
	return h.from, nil
}

// dialHandshake runs the dialer side against peer to.
func (t *Transport) dialHandshake(c net.Conn, to NodeID) error {
	if err := c.SetDeadline(time.Now().Add(t.cfg.HandshakeTimeout)); err != nil {
		return fmt.Errorf("handshake deadline: %w", err)
	}
	nonce, err := newNonce()
	if err != nil {
		return err
	}
	h := hello{version: handshakeVersion, clusterID: t.clusterID, from: t.cfg.Self, to: to, nonce: nonce}
	if _, err := c.Write(appendFrame(nil, frameHello, h.append(nil, false))); err != nil {
		return fmt.Errorf("write hello: %w", err)
	}
	p, err := t.readHandshakeFrame(c, frameChallenge)
	if err != nil {
		return err
	}
	ch, err := decodeHello(p, true)
	if err != nil {
		return t.sendReject(c, RejectProtocol, err.Error())
	}
	switch {
	case ch.clusterID != t.clusterID:
		return t.sendReject(c, RejectCluster, fmt.Sprintf("peer cluster id %s, this node's %s", shortID(ch.clusterID), shortID(t.clusterID)))
	case ch.from != to || ch.to != t.cfg.Self:
		return t.sendReject(c, RejectReplica, fmt.Sprintf("expected replica %d, it says it is %d", to, ch.from))
	}
	if !verifyProof(t.keys, ch.proof, "acceptor", t.clusterID, t.cfg.Self, to, nonce, ch.nonce) {
		return t.sendReject(c, RejectAuth, fmt.Sprintf("replica %d", to))
	}
	fin := appendProof(nil, sign(t.keys, "dialer", t.clusterID, t.cfg.Self, to, nonce, ch.nonce))
	if _, err := c.Write(appendFrame(nil, frameFinish, fin)); err != nil {
		return fmt.Errorf("write finish: %w", err)
	}
	if _, err := t.readHandshakeFrame(c, frameWelcome); err != nil {
		return err
	}
	if err := c.SetDeadline(time.Time{}); err != nil {
		return fmt.Errorf("clear deadline: %w", err)
	}
	return nil
}
