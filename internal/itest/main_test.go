package itest

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if os.Getenv(childBrokerEnv) != "" {
		os.Exit(runChildBroker())
	}
	goleak.VerifyTestMain(m)
}
