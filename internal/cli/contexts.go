package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"text/tabwriter"

	"github.com/BurntSushi/toml"
	"github.com/spf13/cobra"
)

// contextsFileName is the file under the user configuration directory
// (os.UserConfigDir()/iggo/contexts.toml, e.g. ~/.config/iggo on Linux)
// that holds the saved contexts; IGGO_CONFIG names another file.
const contextsFileName = "contexts.toml"

// contextsFile is the saved-contexts file:
//
//	current = "local"
//	[contexts.local]
//	addr = "127.0.0.1:8090"
//	username = "iggy"
//	password = "iggy"
//
// It may hold passwords and tokens, so it is written with mode 0600.
type contextsFile struct {
	Current  string            `toml:"current,omitempty"`
	Contexts map[string]target `toml:"contexts,omitempty"`
}

// contextsPath is the file the contexts are kept in.
func (a *app) contextsPath() string {
	if p := a.getenv(EnvConfig); p != "" {
		return p
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		dir = "."
	}
	return filepath.Join(dir, "iggo", contextsFileName)
}

// loadContexts reads the contexts file; a missing file is empty.
func (a *app) loadContexts() (*contextsFile, error) {
	f := &contextsFile{Contexts: map[string]target{}}
	path := a.contextsPath()
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read contexts: %w", err)
	}
	if _, err := toml.Decode(string(data), f); err != nil {
		return nil, fmt.Errorf("contexts file %s: %w", path, err)
	}
	if f.Contexts == nil {
		f.Contexts = map[string]target{}
	}
	return f, nil
}

// saveContexts writes the file atomically (temporary file, rename) with
// mode 0600, creating its directory.
func (a *app) saveContexts(f *contextsFile) error {
	path := a.contextsPath()
	var buf bytes.Buffer
	buf.WriteString("# iggo saved contexts (iggo context --help). May contain passwords and tokens.\n")
	if err := toml.NewEncoder(&buf).Encode(f); err != nil {
		return fmt.Errorf("encode contexts: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("create config directory: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".contexts-*.toml")
	if err != nil {
		return fmt.Errorf("write contexts: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(buf.Bytes()); err != nil {
		tmp.Close()
		return fmt.Errorf("write contexts: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write contexts: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write contexts: %w", err)
	}
	return nil
}

// contextView is a context in `context list/show` output; secrets are
// reported as set or not, never printed.
type contextView struct {
	Name          string `json:"name"`
	Current       bool   `json:"current"`
	Addr          string `json:"addr,omitempty"`
	Username      string `json:"username,omitempty"`
	Password      bool   `json:"password_set"`
	Token         bool   `json:"token_set"`
	TLS           bool   `json:"tls"`
	TLSCA         string `json:"tls_ca,omitempty"`
	TLSInsecure   bool   `json:"tls_insecure,omitempty"`
	TLSServerName string `json:"tls_server_name,omitempty"`
}

func newContextView(name string, t target, current bool) contextView {
	return contextView{
		Name: name, Current: current, Addr: t.Addr, Username: t.Username,
		Password: t.Password != "", Token: t.Token != "", TLS: t.TLS || t.TLSCA != "" || t.TLSInsecure || t.TLSServerName != "",
		TLSCA: t.TLSCA, TLSInsecure: t.TLSInsecure, TLSServerName: t.TLSServerName,
	}
}

func (a *app) contextCmd() *cobra.Command {
	cmd := group("context", "Manage saved connection contexts",
		`A context is a named set of connection settings (address, credentials or token,
TLS) saved in `+"`"+`os.UserConfigDir()/iggo/contexts.toml`+"`"+` (IGGO_CONFIG names another file).
The current context is used when --context and IGGO_CONTEXT are not given.
Settings combine, later wins: defaults (127.0.0.1:8090, iggy/iggy), the
context, IGGO_* environment variables, then flags.`)
	cmd.AddCommand(a.contextCreateCmd(), a.contextUseCmd(), a.contextListCmd(), a.contextShowCmd(), a.contextDeleteCmd())
	return cmd
}

func (a *app) contextCreateCmd() *cobra.Command {
	var use, force bool
	cmd := &cobra.Command{
		Use:     "create NAME [--addr HOST:PORT] [--username U --password P | --token T] [--tls ...]",
		Short:   "Save a context from the connection flags",
		Example: "  iggo context create prod --addr iggy.example.com:8090 --token \"$TOKEN\" --tls --use",
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			f, err := a.loadContexts()
			if err != nil {
				return err
			}
			if _, ok := f.Contexts[name]; ok && !force {
				return fmt.Errorf("context %q already exists (use --force to replace it)", name)
			}
			t := a.flagLayer(cmd)
			t.TLS = t.TLS || t.TLSCA != "" || t.TLSInsecure || t.TLSServerName != ""
			f.Contexts[name] = t
			if use || f.Current == "" {
				f.Current = name
			}
			if err := a.saveContexts(f); err != nil {
				return err
			}
			return a.done(cmd, fmt.Sprintf("context %q saved in %s", name, a.contextsPath()), map[string]any{"context": name, "current": f.Current == name})
		},
	}
	a.addConnFlags(cmd.Flags())
	cmd.Flags().BoolVar(&use, "use", false, "make it the current context (the first context saved always is)")
	cmd.Flags().BoolVar(&force, "force", false, "replace an existing context of that name")
	return cmd
}

func (a *app) contextUseCmd() *cobra.Command {
	return &cobra.Command{
		Use:               "use NAME",
		Short:             "Make a saved context the current one",
		Args:              exactArgs(1),
		ValidArgsFunction: a.completeContexts,
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := a.loadContexts()
			if err != nil {
				return err
			}
			if _, ok := f.Contexts[args[0]]; !ok {
				return fmt.Errorf("no context named %q (see 'iggo context list')", args[0])
			}
			f.Current = args[0]
			if err := a.saveContexts(f); err != nil {
				return err
			}
			return a.done(cmd, fmt.Sprintf("current context is %q", args[0]), map[string]any{"current": args[0]})
		},
	}
}

func (a *app) contextListCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List the saved contexts (passwords and tokens are not shown)",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f, err := a.loadContexts()
			if err != nil {
				return err
			}
			names := make([]string, 0, len(f.Contexts))
			for n := range f.Contexts {
				names = append(names, n)
			}
			slices.Sort(names)
			views := make([]contextView, 0, len(names))
			for _, n := range names {
				views = append(views, newContextView(n, f.Contexts[n], n == f.Current))
			}
			return a.print(cmd, views, func(tw *tabwriter.Writer) {
				row(tw, "CURRENT", "NAME", "ADDRESS", "LOGIN", "TLS")
				for _, v := range views {
					row(tw, mark(v.Current), v.Name, orDefault(v.Addr, DefaultAddr), v.login(), yesNo(v.TLS))
				}
			})
		},
	}
}

// login describes how a context logs in.
func (v contextView) login() string {
	switch {
	case v.Token:
		return "token"
	case v.Username != "":
		return v.Username
	}
	return "(default)"
}

func (a *app) contextShowCmd() *cobra.Command {
	return &cobra.Command{
		Use:               "show [NAME]",
		Short:             "Show a saved context (default: the current one)",
		Args:              maxArgs(1),
		ValidArgsFunction: a.completeContexts,
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := a.loadContexts()
			if err != nil {
				return err
			}
			name := f.Current
			if len(args) == 1 {
				name = args[0]
			}
			if name == "" {
				return errors.New("no current context (see 'iggo context create')")
			}
			t, ok := f.Contexts[name]
			if !ok {
				return fmt.Errorf("no context named %q (see 'iggo context list')", name)
			}
			v := newContextView(name, t, name == f.Current)
			return a.print(cmd, v, func(tw *tabwriter.Writer) {
				kv(tw, "Name", v.Name)
				kv(tw, "Current", yesNo(v.Current))
				kv(tw, "Address", orDefault(v.Addr, DefaultAddr))
				kv(tw, "Login", v.login())
				kv(tw, "Password set", yesNo(v.Password))
				kv(tw, "TLS", yesNo(v.TLS))
				if v.TLSCA != "" {
					kv(tw, "TLS CA", v.TLSCA)
				}
				if v.TLSServerName != "" {
					kv(tw, "TLS server name", v.TLSServerName)
				}
				if v.TLSInsecure {
					kv(tw, "TLS verification", "disabled")
				}
			})
		},
	}
}

func (a *app) contextDeleteCmd() *cobra.Command {
	return &cobra.Command{
		Use:               "delete NAME",
		Aliases:           []string{"rm"},
		Short:             "Delete a saved context",
		Args:              exactArgs(1),
		ValidArgsFunction: a.completeContexts,
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := a.loadContexts()
			if err != nil {
				return err
			}
			if _, ok := f.Contexts[args[0]]; !ok {
				return fmt.Errorf("no context named %q (see 'iggo context list')", args[0])
			}
			delete(f.Contexts, args[0])
			if f.Current == args[0] {
				f.Current = ""
			}
			if err := a.saveContexts(f); err != nil {
				return err
			}
			return a.done(cmd, fmt.Sprintf("context %q deleted", args[0]), map[string]any{"deleted": args[0]})
		},
	}
}

// completeContexts completes saved context names.
func (a *app) completeContexts(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	f, err := a.loadContexts()
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	names := make([]string, 0, len(f.Contexts))
	for n := range f.Contexts {
		names = append(names, n)
	}
	slices.Sort(names)
	return names, cobra.ShellCompDirectiveNoFileComp
}
