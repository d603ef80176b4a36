package itest

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if dir := os.Getenv(crashChildEnv); dir != "" {
		// Re-executed by TestCrashRecovery: be the broker process.
		runCrashChild(dir)
		return
	}
	goleak.VerifyTestMain(m)
}
