//go:build !linux || !(amd64 || arm64) || race

package rawio

import (
	"net"
	"os"
)

// WriteAt writes b at off in f: f.WriteAt.
func WriteAt(f *os.File, b []byte, off int64) (int, error) { return f.WriteAt(b, off) }

// Conn reads from and writes to one connection; on this platform every
// call is the ordinary one.
type Conn struct{ c net.Conn }

// NewConn returns the Conn of c.
func NewConn(c net.Conn) *Conn { return &Conn{c: c} }

// Read implements io.Reader: c.Read.
func (x *Conn) Read(p []byte) (int, error) { return x.c.Read(p) }

// Write implements io.Writer: c.Write.
func (x *Conn) Write(p []byte) (int, error) { return x.c.Write(p) }

// WriteBuffers writes every byte of v: v.WriteTo(c). v is consumed.
func (x *Conn) WriteBuffers(v net.Buffers) (int64, error) { return v.WriteTo(x.c) }
