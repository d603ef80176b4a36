package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/iggo-dev/iggo/client"
	"github.com/iggo-dev/iggo/wire"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func (pf *permFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&pf.global, "global", "", "global permissions, comma-separated: all, manage_servers, read_servers, manage_users, read_users, manage_streams, read_streams, manage_topics, read_topics, poll_messages, send_messages")
	fs.StringArrayVar(&pf.streams, "stream", nil, "STREAM=PERMS for one stream (all, manage_stream, read_stream, manage_topics, read_topics, poll_messages, send_messages); repeatable")
	fs.StringArrayVar(&pf.topics, "topic", nil, "STREAM/TOPIC=PERMS for one topic (all, manage_topic, read_topic, poll_messages, send_messages); repeatable")
}

// readSecret returns arg, or for "-" the first line of standard input, so
// passwords need not appear in the process list.
func readSecret(cmd *cobra.Command, what, arg string) (string, error) {
	if arg != "-" {
		return arg, nil
	}
	line, err := bufio.NewReader(cmd.InOrStdin()).ReadString('\n')
	if err != nil && err != io.EOF {
		return "", fmt.Errorf("read %s from standard input: %w", what, err)
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		return "", usagef("%s: standard input is empty", what)
	}
	return line, nil
}

func (a *app) userCmd() *cobra.Command {
	cmd := group("user", "Manage users, their permissions and passwords", "")
	var pf permFlags
	var inactive bool
	create := &cobra.Command{
		Use:   "create USERNAME PASSWORD [--inactive] [--global PERMS] [--stream S=PERMS] [--topic S/T=PERMS]",
		Short: "Create a user (PASSWORD \"-\" reads it from standard input)",
		Example: `  iggo user create alice s3cret --global read_streams,poll_messages
  iggo user create bob - --stream orders=all --topic orders/events=send_messages < password.txt`,
		Args: exactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			if isDigits(name) {
				return usagef("username %q: an all-digit name could only be addressed by id; choose another", name)
			}
			pass, err := readSecret(cmd, "password", args[1])
			if err != nil {
				return err
			}
			status := wire.UserActive
			if inactive {
				status = wire.UserInactive
			}
			return a.withClient(cmd, func(c *client.Client) error {
				var u *wire.UserDetails
				err := a.call(cmd, func(ctx context.Context) error {
					perms, err := pf.build(ctx, c)
					if err != nil {
						return err
					}
					u, err = c.CreateUser(ctx, name, pass, status, perms)
					return err
				})
				if err != nil {
					return wrapf(err, "create user %s", name)
				}
				v := newUserView(&u.User)
				v.Permissions = newPermissionsView(u.Permissions)
				return a.done(cmd, fmt.Sprintf("user %q created with id %d", u.User.Username, u.User.ID), v)
			})
		},
	}
	create.Flags().BoolVar(&inactive, "inactive", false, "create the user inactive (it cannot log in)")
	pf.register(create.Flags())

	get := &cobra.Command{
		Use:   "get USER",
		Short: "Show a user with its permissions",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			uid, err := parseID("user", args[0])
			if err != nil {
				return err
			}
			return a.withClient(cmd, func(c *client.Client) error {
				var u *wire.UserDetails
				if err := a.call(cmd, func(ctx context.Context) (err error) { u, err = c.GetUser(ctx, uid); return err }); err != nil {
					return wrapf(err, "get user %s", uid)
				}
				v := newUserView(&u.User)
				v.Permissions = newPermissionsView(u.Permissions)
				return a.print(cmd, v, func(tw *tabwriter.Writer) { userTable(tw, u) })
			})
		},
	}
	list := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List the users",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withClient(cmd, func(c *client.Client) error {
				var us wire.Users
				if err := a.call(cmd, func(ctx context.Context) (err error) { us, err = c.GetUsers(ctx); return err }); err != nil {
					return wrapf(err, "list users")
				}
				views := make([]userView, len(us))
				for i := range us {
					views[i] = newUserView(&us[i])
				}
				return a.print(cmd, views, func(tw *tabwriter.Writer) {
					row(tw, "ID", "USERNAME", "STATUS", "CREATED")
					for _, u := range us {
						row(tw, u.ID, u.Username, u.Status, fmtTime(u.CreatedAt))
					}
				})
			})
		},
	}
	var newName, status string
	update := &cobra.Command{
		Use:   "update USER [--name NEW_USERNAME] [--status active|inactive]",
		Short: "Rename a user or change its status",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			uid, err := parseID("user", args[0])
			if err != nil {
				return err
			}
			var st wire.UserStatus
			switch strings.ToLower(status) {
			case "":
			case "active":
				st = wire.UserActive
			case "inactive":
				st = wire.UserInactive
			default:
				return usagef("--status %q: want active or inactive", status)
			}
			if newName == "" && st == 0 {
				return usagef("user update: nothing to change (give --name or --status)")
			}
			return a.withClient(cmd, func(c *client.Client) error {
				if err := a.call(cmd, func(ctx context.Context) error { return c.UpdateUser(ctx, uid, newName, st) }); err != nil {
					return wrapf(err, "update user %s", uid)
				}
				return a.done(cmd, fmt.Sprintf("user %s updated", uid), map[string]any{"user": uid.String(), "updated": true})
			})
		},
	}
	update.Flags().StringVar(&newName, "name", "", "new username")
	update.Flags().StringVar(&status, "status", "", "active or inactive")

	del := &cobra.Command{
		Use:     "delete USER",
		Aliases: []string{"rm"},
		Short:   "Delete a user with its tokens and permissions",
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			uid, err := parseID("user", args[0])
			if err != nil {
				return err
			}
			return a.withClient(cmd, func(c *client.Client) error {
				if err := a.call(cmd, func(ctx context.Context) error { return c.DeleteUser(ctx, uid) }); err != nil {
					return wrapf(err, "delete user %s", uid)
				}
				return a.done(cmd, fmt.Sprintf("user %s deleted", uid), map[string]any{"user": uid.String(), "deleted": true})
			})
		},
	}
	var ppf permFlags
	var none bool
	perms := &cobra.Command{
		Use:   "permissions USER [--global PERMS] [--stream S=PERMS]... [--topic S/T=PERMS]... | --none",
		Short: "Replace a user's permissions",
		Long: `Replace a user's whole permission set with the one the flags describe (--none
clears it). Stream and topic names are resolved to their ids: permissions are
kept by id.`,
		Example: "  iggo user permissions alice --global read_streams --stream orders=poll_messages,send_messages",
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			uid, err := parseID("user", args[0])
			if err != nil {
				return err
			}
			if none == ppf.given() {
				return usagef("user permissions: give permission flags (--global, --stream, --topic) or --none")
			}
			return a.withClient(cmd, func(c *client.Client) error {
				err := a.call(cmd, func(ctx context.Context) error {
					p, err := ppf.build(ctx, c)
					if err != nil {
						return err
					}
					return c.UpdatePermissions(ctx, uid, p)
				})
				if err != nil {
					return wrapf(err, "update permissions of user %s", uid)
				}
				return a.done(cmd, fmt.Sprintf("permissions of user %s replaced", uid), map[string]any{"user": uid.String(), "updated": true})
			})
		},
	}
	ppf.register(perms.Flags())
	perms.Flags().BoolVar(&none, "none", false, "remove every permission")

	chpw := &cobra.Command{
		Use:     "change-password USER CURRENT NEW",
		Aliases: []string{"passwd"},
		Short:   "Change a user's password (the current one is always checked; \"-\" reads a password from standard input)",
		Args:    exactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			uid, err := parseID("user", args[0])
			if err != nil {
				return err
			}
			if args[1] == "-" && args[2] == "-" {
				return usagef("change-password: only one password can come from standard input")
			}
			cur, err := readSecret(cmd, "current password", args[1])
			if err != nil {
				return err
			}
			next, err := readSecret(cmd, "new password", args[2])
			if err != nil {
				return err
			}
			return a.withClient(cmd, func(c *client.Client) error {
				if err := a.call(cmd, func(ctx context.Context) error { return c.ChangePassword(ctx, uid, cur, next) }); err != nil {
					return wrapf(err, "change password of user %s", uid)
				}
				return a.done(cmd, fmt.Sprintf("password of user %s changed", uid), map[string]any{"user": uid.String(), "password_changed": true})
			})
		},
	}
	cmd.AddCommand(create, get, list, update, del, perms, chpw)
	setCompletion(cmd, a.completeArgs(argUser), "get", "update", "delete", "permissions", "change-password")
	return a.clientCommand(cmd)
}

func userTable(tw *tabwriter.Writer, u *wire.UserDetails) {
	kv(tw, "ID", u.User.ID)
	kv(tw, "Username", u.User.Username)
	kv(tw, "Status", u.User.Status)
	kv(tw, "Created", fmtTime(u.User.CreatedAt))
	p := u.Permissions
	if p == nil {
		kv(tw, "Permissions", "none")
		return
	}
	kv(tw, "Global", permList(names(globalPermissionFields(&p.Global))))
	for i := range p.Streams {
		s := &p.Streams[i]
		kv(tw, fmt.Sprintf("Stream %d", s.StreamID), permList(names(streamPermissionFields(s))))
		for j := range s.Topics {
			t := &s.Topics[j]
			kv(tw, fmt.Sprintf("Stream %d topic %d", s.StreamID, t.TopicID), permList(names(topicPermissionFields(t))))
		}
	}
}

func permList(ns []string) string {
	if len(ns) == 0 {
		return "-"
	}
	return strings.Join(ns, ", ")
}

func (a *app) patCmd() *cobra.Command {
	cmd := group("pat", "Manage your personal access tokens",
		`Manage the personal access tokens of the logged-in user. A token logs in without a
password: --token TOKEN, IGGO_TOKEN, or a saved context.`)
	var expiry string
	create := &cobra.Command{
		Use:   "create NAME [--expiry 30d|never]",
		Short: "Create a token and print it (the server shows it only this once)",
		Example: `  TOKEN=$(iggo pat create ci --expiry 90d)
  iggo context create ci --token "$TOKEN"`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var d time.Duration
			if cmd.Flags().Changed("expiry") {
				us, err := parseExpiry("--expiry", expiry)
				if err != nil {
					return err
				}
				switch {
				case us == wire.ExpiryNever:
					d = client.PATNeverExpires
				default:
					d = time.Duration(min(us, uint64(client.PATNeverExpires/time.Microsecond)-1)) * time.Microsecond
				}
			}
			return a.withClient(cmd, func(c *client.Client) error {
				var tok string
				if err := a.call(cmd, func(ctx context.Context) (err error) {
					tok, err = c.CreatePersonalAccessToken(ctx, args[0], d)
					return err
				}); err != nil {
					return wrapf(err, "create token %s", args[0])
				}
				return a.print(cmd, map[string]string{"name": args[0], "token": tok}, func(tw *tabwriter.Writer) { fmt.Fprintln(tw, tok) })
			})
		},
	}
	create.Flags().StringVar(&expiry, "expiry", "", "lifetime such as 30d or 12h, or never (default: the server's, which never expires)")
	list := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List your tokens",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withClient(cmd, func(c *client.Client) error {
				var ts wire.PersonalAccessTokens
				if err := a.call(cmd, func(ctx context.Context) (err error) { ts, err = c.GetPersonalAccessTokens(ctx); return err }); err != nil {
					return wrapf(err, "list tokens")
				}
				type patView struct {
					Name     string     `json:"name"`
					ExpiryAt *time.Time `json:"expiry_at"`
				}
				views := make([]patView, len(ts))
				for i, t := range ts {
					views[i].Name = t.Name
					if t.ExpiryAt != 0 && t.ExpiryAt != wire.ExpiryNever {
						at := microsTime(t.ExpiryAt)
						views[i].ExpiryAt = &at
					}
				}
				return a.print(cmd, views, func(tw *tabwriter.Writer) {
					row(tw, "NAME", "EXPIRES")
					for _, v := range views {
						exp := "never"
						if v.ExpiryAt != nil {
							exp = v.ExpiryAt.Format("2006-01-02 15:04:05")
						}
						row(tw, v.Name, exp)
					}
				})
			})
		},
	}
	del := &cobra.Command{
		Use:     "delete NAME",
		Aliases: []string{"rm"},
		Short:   "Delete one of your tokens",
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withClient(cmd, func(c *client.Client) error {
				if err := a.call(cmd, func(ctx context.Context) error { return c.DeletePersonalAccessToken(ctx, args[0]) }); err != nil {
					return wrapf(err, "delete token %s", args[0])
				}
				return a.done(cmd, fmt.Sprintf("token %q deleted", args[0]), map[string]any{"name": args[0], "deleted": true})
			})
		},
	}
	cmd.AddCommand(create, list, del)
	setCompletion(cmd, a.completeArgs(argPAT), "delete")
	return a.clientCommand(cmd)
}
