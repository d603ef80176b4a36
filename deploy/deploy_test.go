// Package deploy holds the deployment files (systemd unit, compose
// files, example configurations; the Dockerfile is at the repository
// root). Its tests check what can be checked without a container engine
// or an init system: the unit's directives (and systemd-analyze verify
// when installed), the exact build command of the Dockerfile producing a
// static binary, the compose files as YAML and the configurations they
// mount as our loader and validator see them.
package deploy

import (
	"bufio"
	"bytes"
	"context"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/config"
	"gopkg.in/yaml.v3"
)

// unit is a parsed systemd unit: section -> key -> values in order.
type unit map[string]map[string][]string

func parseUnit(t *testing.T, path string) unit {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	u := unit{}
	section := ""
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";"):
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			section = line[1 : len(line)-1]
			u[section] = map[string][]string{}
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok || section == "" {
				t.Fatalf("%s:%d: not a directive: %q", path, n, line)
			}
			u[section][k] = append(u[section][k], v)
		}
	}
	return u
}

func (u unit) one(t *testing.T, section, key string) string {
	t.Helper()
	vs := u[section][key]
	if len(vs) != 1 {
		t.Fatalf("[%s] %s: want exactly one value, got %q", section, key, vs)
	}
	return vs[0]
}

func TestSystemdUnit(t *testing.T) {
	u := parseUnit(t, "iggo.service")
	want := map[string]string{
		"Type": "notify", "NotifyAccess": "main", "NoNewPrivileges": "yes", "ProtectSystem": "strict",
		"PrivateTmp": "yes", "ProtectHome": "yes", "CapabilityBoundingSet": "", "AmbientCapabilities": "",
		"Restart": "on-failure", "User": "iggo",
	}
	for k, v := range want {
		if got := u.one(t, "Service", k); got != v {
			t.Errorf("[Service] %s=%q, want %q", k, got, v)
		}
	}
	if got := u.one(t, "Service", "ExecStart"); !strings.HasSuffix(strings.Fields(got)[0], "/iggo") || !strings.Contains(got, " server ") {
		t.Errorf("ExecStart=%q does not run iggo server", got)
	}
	if got := u.one(t, "Service", "ExecReload"); !strings.Contains(got, "-HUP $MAINPID") {
		t.Errorf("ExecReload=%q does not send SIGHUP", got)
	}
	wd, err := config.ParseDuration(u.one(t, "Service", "WatchdogSec"))
	if err != nil || wd < 2*time.Second {
		t.Errorf("WatchdogSec: %v, %v", wd, err)
	}
	if n, err := strconv.Atoi(u.one(t, "Service", "LimitNOFILE")); err != nil || n < 65536 {
		t.Errorf("LimitNOFILE: %d, %v", n, err)
	}
	fams := strings.Fields(u.one(t, "Service", "RestrictAddressFamilies"))
	for _, f := range []string{"AF_UNIX", "AF_INET", "AF_INET6"} {
		if !slices.Contains(fams, f) {
			t.Errorf("RestrictAddressFamilies lacks %s (AF_UNIX carries sd_notify)", f)
		}
	}
	if !slices.Contains(u["Service"]["SystemCallFilter"], "@system-service") {
		t.Errorf("SystemCallFilter lacks @system-service: %q", u["Service"]["SystemCallFilter"])
	}
	// The data directory is writable and is the one the server uses.
	var dataPath string
	for _, e := range u["Service"]["Environment"] {
		if v, ok := strings.CutPrefix(e, config.EnvName("system.path")+"="); ok {
			dataPath = v
		}
	}
	if dataPath == "" || u.one(t, "Service", "ReadWritePaths") != dataPath {
		t.Errorf("ReadWritePaths=%q, IGGY_SYSTEM_PATH=%q: want the same directory", u["Service"]["ReadWritePaths"], dataPath)
	}
	if u.one(t, "Install", "WantedBy") != "multi-user.target" {
		t.Error("not wanted by multi-user.target")
	}

	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Log("systemd-analyze is not installed: directives checked by the parser above only")
		return
	}
	// verify wants ExecStart to exist: point it at an executable that does.
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	text, _ := os.ReadFile("iggo.service")
	exe := strings.Fields(u.one(t, "Service", "ExecStart"))[0]
	copyPath := filepath.Join(t.TempDir(), "iggo.service")
	if err := os.WriteFile(copyPath, bytes.ReplaceAll(text, []byte(exe), []byte(self)), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, analyze, "verify", copyPath).CombinedOutput()
	// verify exits 0 on unknown keys and bad values but says so.
	if err != nil || len(bytes.TrimSpace(out)) != 0 {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}
}

// dockerfile is the root Dockerfile as instructions (continuations
// joined).
func dockerfile(t *testing.T) [][2]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	var out [][2]string
	var cur strings.Builder
	for _, line := range strings.Split(string(data), "\n") {
		trimmed := strings.TrimSpace(line)
		if cur.Len() == 0 && (trimmed == "" || strings.HasPrefix(trimmed, "#")) {
			continue
		}
		if s, ok := strings.CutSuffix(trimmed, "\\"); ok {
			cur.WriteString(s + " ")
			continue
		}
		cur.WriteString(trimmed)
		op, arg, _ := strings.Cut(cur.String(), " ")
		out = append(out, [2]string{strings.ToUpper(op), strings.TrimSpace(arg)})
		cur.Reset()
	}
	return out
}

// imageEnv is the runtime stage's ENV as KEY=value strings.
func imageEnv(t *testing.T) []string {
	t.Helper()
	var env []string
	stage := 0
	for _, in := range dockerfile(t) {
		if in[0] == "FROM" {
			stage++
			env = nil
		}
		if in[0] == "ENV" {
			env = append(env, strings.Fields(in[1])...)
		}
	}
	if stage < 2 {
		t.Fatal("the Dockerfile is not multi-stage")
	}
	return env
}

func TestDockerfile(t *testing.T) {
	ins := dockerfile(t)
	var froms, runs, users, health, expose, entry []string
	for _, in := range ins {
		switch in[0] {
		case "FROM":
			froms = append(froms, in[1])
		case "RUN":
			runs = append(runs, in[1])
		case "USER":
			users = append(users, in[1])
		case "HEALTHCHECK":
			health = append(health, in[1])
		case "EXPOSE":
			expose = append(expose, strings.Fields(in[1])...)
		case "ENTRYPOINT":
			entry = append(entry, in[1])
		}
	}
	if len(froms) != 2 || !strings.HasPrefix(froms[0], "golang:1.26 ") || strings.Contains(froms[1], "golang") {
		t.Fatalf("want a golang:1.26 build stage and a minimal runtime stage, got %q", froms)
	}
	if len(users) != 1 || strings.HasPrefix(users[0], "0") || strings.HasPrefix(users[0], "root") {
		t.Fatalf("USER %q: want one non-root user", users)
	}
	if len(health) != 1 || !strings.Contains(health[0], `"ping"`) {
		t.Fatalf("HEALTHCHECK %q: want the iggo ping probe", health)
	}
	for _, p := range []string{"8090", "8080/udp", "8092", "3000"} {
		if !slices.Contains(expose, p) {
			t.Errorf("EXPOSE lacks %s", p)
		}
	}
	if len(entry) != 1 || !strings.Contains(entry[0], "/iggo") {
		t.Errorf("ENTRYPOINT %q", entry)
	}
	env := imageEnv(t)
	for _, k := range []string{"IGGY_TCP_ADDRESS=0.0.0.0:8090", "IGGY_QUIC_ADDRESS=0.0.0.0:8080", "IGGY_WEBSOCKET_ADDRESS=0.0.0.0:8092", "IGGY_HTTP_ADDRESS=0.0.0.0:3000"} {
		if !slices.Contains(env, k) {
			t.Errorf("ENV lacks %s (the defaults bind loopback only)", k)
		}
	}
	var build string
	for _, r := range runs {
		if strings.Contains(r, "go build") {
			build = r
		}
	}
	if !strings.Contains(build, "CGO_ENABLED=0") || !strings.Contains(build, "-trimpath") || !strings.Contains(build, "-o /out/iggo ./cmd/iggo") {
		t.Fatalf("build step %q: want CGO_ENABLED=0 go build -trimpath ... -o /out/iggo ./cmd/iggo", build)
	}

	if testing.Short() {
		t.Skip("builds the image's binary; skipped in -short mode")
	}
	// The build stage's exact command, run at the repository root (the
	// stage's COPY . . and WORKDIR).
	bin := filepath.Join(t.TempDir(), "iggo")
	cmdline := strings.Replace(build, "-o /out/iggo", "-o "+bin, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 9*time.Minute)
	defer cancel()
	c := exec.CommandContext(ctx, "sh", "-c", cmdline)
	c.Dir = ".."
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", cmdline, err, out)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatalf("not an ELF binary: %v", err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Fatal("the binary has a dynamic loader (PT_INTERP): not static")
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) != 0 {
		t.Fatalf("the binary needs shared libraries %q", libs)
	}
	if fileCmd, err := exec.LookPath("file"); err == nil {
		out, _ := exec.Command(fileCmd, bin).Output()
		if !bytes.Contains(out, []byte("statically linked")) {
			t.Fatalf("file says %s", out)
		}
	}
	// The image's environment with the mounted example configuration is
	// a valid configuration (no listener is opened).
	check := exec.CommandContext(ctx, bin, "server", "--check-config", "--config", "config.toml")
	check.Env = append(imageEnv(t), "IGGY_SYSTEM_PATH="+t.TempDir())
	if out, err := check.CombinedOutput(); err != nil || !bytes.Contains(out, []byte("configuration is valid")) {
		t.Fatalf("iggo server --check-config with the image's environment: %v\n%s", err, out)
	}
}

// compose is the part of a compose file the tests read.
type compose struct {
	Services map[string]struct {
		Image       string            `yaml:"image"`
		Build       map[string]string `yaml:"build"`
		Command     []string          `yaml:"command"`
		Environment map[string]string `yaml:"environment"`
		Ports       []string          `yaml:"ports"`
		Volumes     []string          `yaml:"volumes"`
		Healthcheck struct {
			Test []string `yaml:"test"`
		} `yaml:"healthcheck"`
		Networks map[string]struct {
			IPv4 string `yaml:"ipv4_address"`
		} `yaml:"networks"`
	} `yaml:"services"`
	Volumes map[string]any `yaml:"volumes"`
}

var interpolation = regexp.MustCompile(`\$\{([A-Z_]+)(:?[-?])([^}]*)\}`)

// interpolate resolves ${VAR:-default} to its default and ${VAR:?msg} to
// a stand-in value, as compose would with VAR unset (or set, for ?).
func interpolate(s string) string {
	return interpolation.ReplaceAllStringFunc(s, func(m string) string {
		p := interpolation.FindStringSubmatch(m)
		if strings.HasSuffix(p[2], "?") {
			return "compose-test-secret-of-at-least-32-bytes"
		}
		return p[3]
	})
}

func loadCompose(t *testing.T, name string) compose {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var c compose
	if err := yaml.Unmarshal(data, &c); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if len(c.Services) == 0 {
		t.Fatalf("%s: no services", name)
	}
	return c
}

// serviceConfig loads the configuration a service runs with: the file
// its --config names (through its volume mounts), the image's ENV, its
// environment and its --replica-id; then validates it.
func serviceConfig(t *testing.T, file, name string, c compose) config.Config {
	t.Helper()
	s := c.Services[name]
	if s.Image == "" || s.Build["dockerfile"] != "Dockerfile" || s.Build["context"] != ".." {
		t.Fatalf("%s/%s: want the repository's image (build context .., Dockerfile), got %q %v", file, name, s.Image, s.Build)
	}
	if !slices.Contains(s.Healthcheck.Test, "ping") {
		t.Errorf("%s/%s: healthcheck %q does not ping", file, name, s.Healthcheck.Test)
	}
	if len(s.Command) < 1 || s.Command[0] != "server" {
		t.Fatalf("%s/%s: command %q does not run the server", file, name, s.Command)
	}
	mounts := map[string]string{}
	hasData := false
	for _, v := range s.Volumes {
		parts := strings.Split(v, ":")
		if len(parts) < 2 {
			t.Fatalf("%s/%s: volume %q", file, name, v)
		}
		if strings.HasPrefix(parts[0], "./") {
			if _, err := os.Stat(parts[0]); err != nil {
				t.Errorf("%s/%s: mounted file %s: %v", file, name, parts[0], err)
			}
			mounts[parts[1]] = parts[0]
		} else if _, ok := c.Volumes[parts[0]]; !ok {
			t.Errorf("%s/%s: volume %s is not declared", file, name, parts[0])
		}
		if parts[1] == "/app/local_data" {
			hasData = true
		}
	}
	if !hasData {
		t.Errorf("%s/%s: the data directory /app/local_data is not a volume", file, name)
	}
	var cfgFile string
	replica := -1
	for i, a := range s.Command {
		if i+1 < len(s.Command) && a == "--config" {
			cfgFile = mounts[s.Command[i+1]]
		}
		if i+1 < len(s.Command) && a == "--replica-id" {
			replica, _ = strconv.Atoi(s.Command[i+1])
		}
	}
	if cfgFile == "" {
		t.Fatalf("%s/%s: --config does not name a mounted file", file, name)
	}
	environ := imageEnv(t)
	for k, v := range s.Environment {
		environ = append(environ, k+"="+interpolate(v))
	}
	cfg, notices, err := config.Load(cfgFile, environ)
	if err != nil {
		t.Fatalf("%s/%s: %s does not load: %v", file, name, cfgFile, err)
	}
	for _, n := range notices {
		if strings.HasPrefix(n.Message, "unknown") {
			t.Errorf("%s/%s: %s", file, name, n.Message)
		}
	}
	if replica >= 0 {
		cfg.Cluster.ReplicaID = replica
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("%s/%s: the configuration is invalid:\n%v", file, name, err)
	}
	for _, p := range s.Ports {
		if !strings.Contains(p, ":") {
			t.Errorf("%s/%s: port %q publishes no host port", file, name, p)
		}
	}
	return cfg
}

func TestComposeSingleNode(t *testing.T) {
	c := loadCompose(t, "docker-compose.yml")
	if len(c.Services) != 1 {
		t.Fatalf("want one service, got %d", len(c.Services))
	}
	for name, s := range c.Services {
		cfg := serviceConfig(t, "docker-compose.yml", name, c)
		if cfg.TCP.Address != "0.0.0.0:8090" || cfg.Cluster.Enabled {
			t.Errorf("tcp.address %s, cluster %v", cfg.TCP.Address, cfg.Cluster.Enabled)
		}
		for _, p := range []string{"8090:8090", "8080:8080/udp", "8092:8092", "3000:3000"} {
			if !slices.Contains(s.Ports, p) {
				t.Errorf("port %s not published", p)
			}
		}
	}
}

func TestComposeCluster(t *testing.T) {
	const file = "docker-compose.cluster.yml"
	c := loadCompose(t, file)
	if len(c.Services) != 3 {
		t.Fatalf("want three nodes, got %d", len(c.Services))
	}
	hostPorts := map[string]string{}
	for name, s := range c.Services {
		cfg := serviceConfig(t, file, name, c)
		if !cfg.Cluster.Enabled || len(cfg.Cluster.Nodes) != 3 || !cfg.Cluster.Auth.Enabled {
			t.Fatalf("%s: cluster %+v", name, cfg.Cluster)
		}
		node := cfg.Cluster.Nodes[cfg.Cluster.ReplicaID]
		if int(node.ReplicaID) != cfg.Cluster.ReplicaID || node.Name != name {
			t.Errorf("%s: --replica-id %d picks roster entry %q", name, cfg.Cluster.ReplicaID, node.Name)
		}
		var ip string
		for _, n := range s.Networks {
			ip = n.IPv4
		}
		if ip != node.IP {
			t.Errorf("%s: network address %s, roster ip %s", name, ip, node.IP)
		}
		for _, p := range s.Ports {
			host, _, _ := strings.Cut(p, ":")
			if other, dup := hostPorts[host+udpSuffix(p)]; dup {
				t.Errorf("host port %s published by %s and %s", host, other, name)
			}
			hostPorts[host+udpSuffix(p)] = name
		}
		containerTCP := "8090"
		if !slices.ContainsFunc(s.Ports, func(p string) bool { return strings.HasSuffix(p, ":"+containerTCP) }) ||
			strconv.Itoa(int(node.Ports.TCP)) != containerTCP {
			t.Errorf("%s: TCP port %d not published as %s", name, node.Ports.TCP, containerTCP)
		}
	}
}

func udpSuffix(p string) string {
	if strings.HasSuffix(p, "/udp") {
		return "/udp"
	}
	return ""
}
