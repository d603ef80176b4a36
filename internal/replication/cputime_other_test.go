//go:build !unix

package replication

import "time"

// cpuTime is not measured where getrusage is missing: the scale test then
// reports 0 CPU.
func cpuTime() time.Duration { return 0 }
