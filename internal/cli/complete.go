package cli

import (
	"context"
	"strings"
	"time"

	"github.com/iggo-dev/iggo/client"
	"github.com/spf13/cobra"
)

// completeTimeout bounds the server lookups of shell completion, so a
// down server does not freeze the shell.
const completeTimeout = 2 * time.Second

// Argument kinds completed from the server.
const (
	argStream = "stream"
	argTopic  = "topic"
	argGroup  = "group"
	argUser   = "user"
	argPAT    = "pat"
)

// completeArgs completes positional arguments by kind, asking the server
// (with the command's connection settings) for the names: a topic is
// looked up in the stream given before it, a group in the stream and
// topic before it. An empty kind completes nothing.
func (a *app) completeArgs(kinds ...string) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) >= len(kinds) || kinds[len(args)] == "" {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		if a.timeout <= 0 || a.timeout > completeTimeout {
			a.timeout = completeTimeout
		}
		names, err := a.names(cmd, kinds[len(args)], args)
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		var out []string
		for _, n := range names {
			if strings.HasPrefix(n, toComplete) {
				out = append(out, n)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// names lists the resources of kind; args are the arguments before it.
func (a *app) names(cmd *cobra.Command, kind string, args []string) ([]string, error) {
	if cmd.Context() == nil {
		cmd.SetContext(context.Background())
	}
	var out []string
	err := a.withClient(cmd, func(c *client.Client) error {
		return a.call(cmd, func(ctx context.Context) error {
			switch kind {
			case argStream:
				ss, err := c.GetStreams(ctx)
				for _, s := range ss {
					out = append(out, s.Name)
				}
				return err
			case argTopic:
				sid, err := parseID("stream", args[len(args)-1])
				if err != nil {
					return err
				}
				ts, err := c.GetTopics(ctx, sid)
				for _, t := range ts {
					out = append(out, t.Name)
				}
				return err
			case argGroup:
				sid, tid, err := parseTopic(args[len(args)-2], args[len(args)-1])
				if err != nil {
					return err
				}
				gs, err := c.GetConsumerGroups(ctx, sid, tid)
				for _, g := range gs {
					out = append(out, g.Name)
				}
				return err
			case argUser:
				us, err := c.GetUsers(ctx)
				for _, u := range us {
					out = append(out, u.Username)
				}
				return err
			case argPAT:
				ps, err := c.GetPersonalAccessTokens(ctx)
				for _, p := range ps {
					out = append(out, p.Name)
				}
				return err
			}
			return nil
		})
	})
	return out, err
}

// setCompletion attaches argument completion to the subcommands of a
// command group by name.
func setCompletion(group *cobra.Command, f func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective), names ...string) {
	for _, c := range group.Commands() {
		for _, n := range names {
			if c.Name() == n {
				c.ValidArgsFunction = f
			}
		}
	}
}
