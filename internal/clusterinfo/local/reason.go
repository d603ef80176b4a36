package local

import (
	"errors"
	"net"
	"os"
	"strings"
)

// Reason renders a node's error for a table whose address column already
// names the node: every *net.OpError in err's message ("dial tcp
// 127.0.0.1:8090: connect: connection refused") is shortened to its
// operation and cause ("dial: connection refused"), and a leading
// "... at ADDR: " or "... from ADDR: " loses the address.
func Reason(err error, addr string) string {
	if err == nil {
		return ""
	}
	s := err.Error()
	if op, ok := errors.AsType[*net.OpError](err); ok && op.Err != nil {
		cause := op.Err
		if sc, ok := errors.AsType[*os.SyscallError](cause); ok {
			cause = sc.Err
		}
		short := op.Op + ": " + cause.Error()
		if op.Timeout() {
			short = op.Op + ": timed out"
		}
		s = strings.Replace(s, op.Error(), short, 1)
	}
	if addr != "" {
		s = strings.ReplaceAll(s, " at "+addr+":", ":")
		s = strings.ReplaceAll(s, " from "+addr+":", ":")
		s = strings.ReplaceAll(s, addr+" ", "")
	}
	return s
}
