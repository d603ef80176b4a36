package itest

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if dir := os.Getenv(childDirEnv); dir != "" {
		// Re-executed by a crash test: be the broker process.
		os.Exit(runChild(dir, os.Getenv(childModeEnv)))
	}
	goleak.VerifyTestMain(m)
}
