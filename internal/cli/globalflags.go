package cli

import (
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// globalFlagsSection is the part of cobra's usage template that lists the
// flags a command inherits from the root.
const globalFlagsSection = `{{if .HasAvailableInheritedFlags}}

Global Flags:
{{.InheritedFlags.FlagUsages | trimTrailingWhitespaces}}{{end}}`

// ownFlagsOnly marks cmd and its subcommands as not taking the client
// flags the root defines for every client command (--addr, --tls,
// --timeout, ...): `iggo server` and `iggo bench` have flags of their
// own, and a client flag given to them (before or after the subcommand)
// that they do not define is a usage error rather than silently ignored.
// Their help does not list the client flags.
func (a *app) ownFlagsOnly(cmd *cobra.Command) *cobra.Command {
	prev := cmd.PersistentPreRunE
	cmd.PersistentPreRunE = func(c *cobra.Command, args []string) error {
		var bad string
		c.InheritedFlags().VisitAll(func(f *pflag.Flag) {
			if bad == "" && f.Changed && c.LocalFlags().Lookup(f.Name) == nil {
				bad = f.Name
			}
		})
		if bad != "" {
			return usagef("--%s is a client flag; '%s' does not take it (see '%s --help')", bad, c.CommandPath(), c.CommandPath())
		}
		if prev != nil {
			return prev(c, args)
		}
		return nil
	}
	cmd.SetUsageTemplate(strings.Replace(cmd.UsageTemplate(), globalFlagsSection, "", 1))
	return cmd
}
