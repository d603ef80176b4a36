package cli

import "testing"

// TestTopicCreateRefusesZeroPartitions: a topic without partitions would
// accept no message, so the CLI refuses to create one.
func TestTopicCreateRefusesZeroPartitions(t *testing.T) {
	e := newCLI(t)
	e.ok("stream", "create", "orders")
	e.run("topic", "create", "orders", "t2", "0").wantError(t, ExitUsage, "partitions 0", "at least 1 partition")
	e.run("topic", "get", "orders", "t2").wantError(t, ExitError, "TopicIdNotFound")
}
