package objstoretest

import (
	"errors"
	"fmt"
	"go/build"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// EnvBinary names the environment variable that points at the versitygw
// binary; it takes precedence over PATH and $(go env GOPATH)/bin.
const EnvBinary = "IGGO_VERSITYGW"

// InstallHint says how to get the binary.
const InstallHint = "go install github.com/versity/versitygw/cmd/versitygw@v1.8.0 (or set " + EnvBinary + " to the binary)"

// errNoBinary reports that versitygw is in none of the places looked at.
var errNoBinary = errors.New("versitygw not found")

// findBinary returns the versitygw binary: $IGGO_VERSITYGW, else
// versitygw in PATH, else $(go env GOPATH)/bin/versitygw. It returns an
// error wrapping errNoBinary when there is none, and another error when
// IGGO_VERSITYGW is set but unusable.
func findBinary() (string, error) {
	if p := os.Getenv(EnvBinary); p != "" {
		st, err := os.Stat(p)
		if err != nil {
			return "", fmt.Errorf("%s=%s: %w", EnvBinary, p, err)
		}
		if st.IsDir() {
			return "", fmt.Errorf("%s=%s is a directory", EnvBinary, p)
		}
		return p, nil
	}
	if p, err := exec.LookPath("versitygw"); err == nil {
		return p, nil
	}
	name := "versitygw"
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	var looked []string
	for _, dir := range filepath.SplitList(goPath()) {
		p := filepath.Join(dir, "bin", name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
		looked = append(looked, p)
	}
	return "", fmt.Errorf("%w ($%s is unset, none in PATH, none at %s)", errNoBinary, EnvBinary, strings.Join(looked, ", "))
}

// goPath returns $(go env GOPATH), or the default GOPATH when the go
// command is not available.
func goPath() string {
	out, err := exec.Command("go", "env", "GOPATH").Output()
	if p := strings.TrimSpace(string(out)); err == nil && p != "" {
		return p
	}
	return build.Default.GOPATH
}
