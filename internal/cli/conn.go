package cli

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/iggo-dev/iggo/client"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Connection defaults: the address `iggo server` listens on and the root
// credentials it creates when IGGY_ROOT_USERNAME/PASSWORD are not set.
const (
	DefaultAddr     = "127.0.0.1:8090"
	DefaultUsername = "iggy"
	DefaultPassword = "iggy"
	// DefaultTimeout bounds connecting (with login) and each request.
	DefaultTimeout = 10 * time.Second
)

// DefaultQUICAddr and DefaultWebSocketAddr are the default addresses with
// --transport quic and ws.
const (
	DefaultQUICAddr      = "127.0.0.1:8080"
	DefaultWebSocketAddr = "127.0.0.1:8092"
)

// Environment variables read by the client commands. Precedence, later
// wins: built-in defaults, the selected saved context, these variables,
// then flags.
const (
	EnvAddr          = "IGGO_ADDR"
	EnvTransport     = "IGGO_TRANSPORT"
	EnvUsername      = "IGGO_USERNAME"
	EnvPassword      = "IGGO_PASSWORD"
	EnvToken         = "IGGO_TOKEN"
	EnvTLS           = "IGGO_TLS"
	EnvTLSCA         = "IGGO_TLS_CA"
	EnvTLSInsecure   = "IGGO_TLS_INSECURE"
	EnvTLSServerName = "IGGO_TLS_SERVER_NAME"
	EnvContext       = "IGGO_CONTEXT"
	EnvConfig        = "IGGO_CONFIG"
)

// sdkName is what the CLI reports as sdk_name at login (GET_CLIENTS).
const sdkName = "iggo-cli"

// target is where and how to connect: one layer of settings (a saved
// context, the environment, the flags) or their merged result. Empty
// strings and false mean "not set" in a layer.
type target struct {
	Addr string `toml:"addr,omitempty"`
	// Transport is tcp (default), quic or ws; Addr may instead be a
	// connection string (iggy://, iggy+quic://, iggy+ws://) naming it.
	Transport     string `toml:"transport,omitempty"`
	Username      string `toml:"username,omitempty"`
	Password      string `toml:"password,omitempty"`
	Token         string `toml:"token,omitempty"`
	TLS           bool   `toml:"tls,omitempty"`
	TLSCA         string `toml:"tls_ca,omitempty"`
	TLSInsecure   bool   `toml:"tls_insecure,omitempty"`
	TLSServerName string `toml:"tls_server_name,omitempty"`
}

// over applies layer l on top of t. Credentials travel as a unit: a layer
// naming a token replaces a lower layer's username and password, and a
// layer naming a username or password replaces a lower layer's token.
// Any of the TLS settings turns TLS on.
func (t *target) over(l target) {
	if l.Addr != "" {
		t.Addr = l.Addr
	}
	if l.Transport != "" {
		t.Transport = l.Transport
	}
	if l.Token != "" {
		t.Token, t.Username, t.Password = l.Token, "", ""
	}
	if l.Username != "" || l.Password != "" {
		t.Token = ""
		if l.Username != "" {
			t.Username = l.Username
		}
		if l.Password != "" {
			t.Password = l.Password
		}
	}
	if l.TLSCA != "" {
		t.TLSCA = l.TLSCA
	}
	if l.TLSServerName != "" {
		t.TLSServerName = l.TLSServerName
	}
	t.TLSInsecure = t.TLSInsecure || l.TLSInsecure
	t.TLS = t.TLS || l.TLS || t.TLSCA != "" || t.TLSInsecure || t.TLSServerName != ""
}

// connFlags are the values of the connection flags.
type connFlags struct {
	t       target
	context string
}

// addConnFlags defines the connection flags on fs.
func (a *app) addConnFlags(fs *pflag.FlagSet) {
	f := &a.conn
	fs.StringVar(&f.t.Addr, "addr", "", "server address host:port, several as host:port,host:port (tried in order; the client follows the cluster leader), or connection string iggy[+quic|+ws]://user:pass@host:port[,host:port]?tls=true (env "+EnvAddr+"; default "+DefaultAddr+", with --transport quic "+DefaultQUICAddr+", ws "+DefaultWebSocketAddr+")")
	fs.StringVar(&f.t.Transport, "transport", "", "transport: tcp, quic or ws; --tls with ws is WSS; quic verifies the server certificate only with --tls or --tls-ca (without, a note on standard error says so) (env "+EnvTransport+"; default tcp, or the connection string's)")
	fs.StringVar(&f.t.Username, "username", "", "username (env "+EnvUsername+"; default "+DefaultUsername+")")
	fs.StringVar(&f.t.Password, "password", "", "password (env "+EnvPassword+"; default "+DefaultPassword+")")
	fs.StringVar(&f.t.Token, "token", "", "personal access token, used instead of username and password (env "+EnvToken+")")
	fs.BoolVar(&f.t.TLS, "tls", false, "connect with TLS (env "+EnvTLS+")")
	fs.StringVar(&f.t.TLSCA, "tls-ca", "", "PEM file of the CA certificates to trust; implies --tls (env "+EnvTLSCA+")")
	fs.BoolVar(&f.t.TLSInsecure, "tls-insecure", false, "do not verify the server certificate; implies --tls (env "+EnvTLSInsecure+")")
	fs.StringVar(&f.t.TLSServerName, "tls-server-name", "", "name to verify the server certificate against (default: the host of the address dialed); implies --tls (env "+EnvTLSServerName+")")
}

// addClientFlags defines the connection, context, output and timeout
// flags shared by every client command. They are persistent flags of the
// root, so they may come before or after the subcommand
// (`iggo --addr X --tls stream list` and `iggo stream list --addr X --tls`)
// and `iggo --help` lists them; `iggo server` and `iggo bench` refuse them
// (ownFlagsOnly).
func (a *app) addClientFlags(cmd *cobra.Command) {
	fs := cmd.PersistentFlags()
	a.addConnFlags(fs)
	fs.StringVar(&a.conn.context, "context", "", "saved context to use (env "+EnvContext+"; default: the current context, see 'iggo context')")
	fs.StringVarP(&a.output, "output", "o", "table", "output format: table (text), json or yaml")
	fs.DurationVar(&a.timeout, "timeout", DefaultTimeout, "bound on connecting and on each request; 0 means none")
	cmd.RegisterFlagCompletionFunc("context", a.completeContexts)
	cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{outputTable, outputJSON, outputYAML}, cobra.ShellCompDirectiveNoFileComp))
}

// flagLayer returns the connection flags given on the command line.
func (a *app) flagLayer(cmd *cobra.Command) target {
	var l target
	fs := cmd.Flags()
	set := func(name string) bool { return fs.Changed(name) }
	if set("addr") {
		l.Addr = a.conn.t.Addr
	}
	if set("transport") {
		l.Transport = a.conn.t.Transport
	}
	if set("username") {
		l.Username = a.conn.t.Username
	}
	if set("password") {
		l.Password = a.conn.t.Password
	}
	if set("token") {
		l.Token = a.conn.t.Token
	}
	if set("tls-ca") {
		l.TLSCA = a.conn.t.TLSCA
	}
	if set("tls-server-name") {
		l.TLSServerName = a.conn.t.TLSServerName
	}
	l.TLS = set("tls") && a.conn.t.TLS
	l.TLSInsecure = set("tls-insecure") && a.conn.t.TLSInsecure
	return l
}

// envLayer returns the connection settings of the environment.
func (a *app) envLayer() (target, error) {
	l := target{
		Addr:          a.getenv(EnvAddr),
		Transport:     a.getenv(EnvTransport),
		Username:      a.getenv(EnvUsername),
		Password:      a.getenv(EnvPassword),
		Token:         a.getenv(EnvToken),
		TLSCA:         a.getenv(EnvTLSCA),
		TLSServerName: a.getenv(EnvTLSServerName),
	}
	for _, b := range []struct {
		name string
		dst  *bool
	}{{EnvTLS, &l.TLS}, {EnvTLSInsecure, &l.TLSInsecure}} {
		if v := a.getenv(b.name); v != "" {
			x, err := strconv.ParseBool(v)
			if err != nil {
				return target{}, usagef("%s=%q: want true or false", b.name, v)
			}
			*b.dst = x
		}
	}
	return l, nil
}

// getenv reads the injected environment.
func (a *app) getenv(key string) string { return lookup(a.env.Environ, key) }

// resolve merges defaults, the selected context, the environment and the
// flags into the connection target.
func (a *app) resolve(cmd *cobra.Command) (target, error) {
	var t target
	var origin tlsOrigin
	name := a.conn.context
	if !cmd.Flags().Changed("context") {
		name = a.getenv(EnvContext)
	}
	f, err := a.loadContexts()
	if err != nil {
		return target{}, err
	}
	explicit := name != ""
	if name == "" {
		name = f.Current
	}
	if name != "" {
		c, ok := f.Contexts[name]
		switch {
		case ok:
			t.over(c)
			origin = tlsOrigin{context: name, from: tlsSource(c, tlsFromContext)}
		case explicit:
			return target{}, usagef("no context named %q (see 'iggo context list')", name)
		default:
			return target{}, fmt.Errorf("current context %q is not in %s (run 'iggo context use NAME')", name, a.contextsPath())
		}
	}
	env, err := a.envLayer()
	if err != nil {
		return target{}, err
	}
	t.over(env)
	if from := tlsSource(env, tlsFromEnv); from != "" {
		origin.from = from
	}
	fl := a.flagLayer(cmd)
	t.over(fl)
	if from := tlsSource(fl, tlsFromFlags); from != "" {
		origin.from = from
	}
	a.origin = origin
	if err := t.resolveTransport(); err != nil { // transport.go
		return target{}, err
	}
	if err := t.checkAddrList(); err != nil {
		return target{}, err
	}
	if t.Token == "" {
		if t.Username == "" {
			t.Username = DefaultUsername
		}
		if t.Password == "" {
			t.Password = DefaultPassword
		}
	}
	return t, nil
}

// checkAddrList checks the address, or each of a list
// ("host:port,host:port"; the SDK tries the entries in order and then
// follows the cluster leader), or each address of a connection string:
// host:port with a port from 1 to 65535. A malformed address is a usage
// error (exit 2), not a connection failure.
func (t *target) checkAddrList() error {
	addrs := strings.Split(t.Addr, ",")
	if client.IsConnectionString(t.Addr) {
		cs, err := client.ParseConnectionString(t.Addr)
		if err != nil {
			return usagef("--addr: %v", err)
		}
		addrs = cs.Addrs
	}
	for _, a := range addrs {
		a = strings.TrimSpace(a)
		host, port, err := net.SplitHostPort(a)
		if err != nil || host == "" && strings.Contains(t.Addr, ",") {
			return usagef("--addr %q: want host:port or a comma-separated list of host:port", a)
		}
		if n, err := strconv.ParseUint(port, 10, 16); err != nil || n == 0 {
			return usagef("--addr %q: the port must be a number from 1 to 65535", a)
		}
	}
	return nil
}

// tlsConfig builds the client TLS configuration of t (nil without TLS).
func (t *target) tlsConfig() (*tls.Config, error) {
	if !t.TLS {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: t.TLSServerName, InsecureSkipVerify: t.TLSInsecure}
	if t.TLSCA != "" {
		pem, err := os.ReadFile(t.TLSCA)
		if err != nil {
			return nil, usagef("--tls-ca: %v", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, usagef("--tls-ca %s: no PEM certificate found", t.TLSCA)
		}
		cfg.RootCAs = pool
	}
	return cfg, nil
}

// dial connects to the resolved target and, when login is set, logs in.
// Connection failures are wrapped as connError (ExitConnection); refused
// logins stay *wire.EvictionError (ExitAuth).
func (a *app) dial(cmd *cobra.Command, login bool) (*client.Client, error) {
	t, err := a.resolve(cmd)
	if err != nil {
		return nil, err
	}
	tc, err := t.tlsConfig()
	if err != nil {
		return nil, err
	}
	a.dialed = &t // for explainTLSMismatch
	opts := []client.Option{client.WithSDKInfo(sdkName, client.DefaultSDKVersion), client.WithDialTimeout(a.timeout)}
	if a.timeout > 0 {
		// A reply that does not come within the timeout makes the SDK treat
		// the connection as broken; the request context ends it anyway.
		opts = append(opts, client.WithResponseTimeout(a.timeout))
	}
	if tc != nil {
		opts = append(opts, client.WithTLS(tc))
	}
	if tr := t.clientTransport(); tr != nil { // transport.go
		opts = append(opts, client.WithTransport(tr))
	}
	if t.quicUnverified(tc) { // transport.go
		fmt.Fprintln(a.env.Stderr, quicUnverifiedNote)
	}
	if login && !t.credsInAddr() {
		if t.Token != "" {
			opts = append(opts, client.WithToken(t.Token))
		} else {
			opts = append(opts, client.WithCredentials(t.Username, t.Password))
		}
	}
	ctx, cancel := a.reqCtx(cmd.Context())
	defer cancel()
	a.unanswered = true
	ctx, stopWatch := a.watchPlainTLS(ctx, &t) // tlsmismatch.go
	c, err := client.Dial(ctx, t.Addr, opts...)
	if merr := stopWatch(); merr != nil {
		if c != nil {
			c.Close()
		}
		return nil, merr
	}
	if !login {
		a.unanswered = true // nothing was sent yet: watch the first call
	}
	if err != nil {
		if isEviction(err) || isWireError(err) {
			who := "as " + t.Username
			if t.Token != "" {
				who = "with a token"
			}
			return nil, wrapf(err, "log in %s to %s", who, t.Addr)
		}
		return nil, &connError{addr: t.Addr, err: err}
	}
	return c, nil
}

// reqCtx bounds one request (or the connect and login) by --timeout.
func (a *app) reqCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	if a.timeout <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, a.timeout)
}

// withClient dials (logged in), runs f with the client and closes it.
func (a *app) withClient(cmd *cobra.Command, f func(c *client.Client) error) error {
	c, err := a.dial(cmd, true)
	if err != nil {
		return err
	}
	defer c.Close()
	return f(c)
}

// call runs one request under the request timeout.
func (a *app) call(cmd *cobra.Command, f func(ctx context.Context) error) error {
	ctx, cancel := a.reqCtx(cmd.Context())
	defer cancel()
	ctx, stopWatch := a.watchPlainTLS(ctx, a.dialed) // tlsmismatch.go
	err := f(ctx)
	if merr := stopWatch(); merr != nil {
		return merr
	}
	return err
}
