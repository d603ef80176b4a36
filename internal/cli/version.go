package cli

import (
	"runtime/debug"
	"strings"

	"github.com/iggo-dev/iggo/internal/broker"
	"github.com/iggo-dev/iggo/wire"
	"github.com/spf13/cobra"
)

// versionText is what `iggo --version` and `iggo version` print: the
// Iggo version, the Iggy protocol version it speaks, and the build
// information the Go toolchain recorded (Go version; VCS revision, time
// and modified flag when the binary was built from a checkout).
func versionText() string {
	var b strings.Builder
	b.WriteString("iggo " + broker.Version + "\n")
	b.WriteString("Iggy protocol " + wire.ProtocolVersionString + "\n")
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return b.String()
	}
	b.WriteString("built with " + bi.GoVersion + "\n")
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		b.WriteString("module " + bi.Main.Path + " " + v + "\n")
	}
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	if rev := settings["vcs.revision"]; rev != "" {
		line := "revision " + rev
		if t := settings["vcs.time"]; t != "" {
			line += " (" + t + ")"
		}
		if settings["vcs.modified"] == "true" {
			line += ", modified"
		}
		b.WriteString(line + "\n")
	}
	return b.String()
}

// versionCmd is `iggo version`, the same text as `iggo --version`.
func (a *app) versionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the iggo version, the Iggy protocol version and build information",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := cmd.OutOrStdout().Write([]byte(versionText()))
			return wrapf(err, "write version")
		},
	}
}
