package cli

import (
	"bufio"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/config"
	"github.com/iggo-dev/iggo/internal/telemetry/otlptest"
	"github.com/iggo-dev/iggo/internal/testutil"
)

// quietServerTOML is a configuration serving TCP on a free port only.
func quietServerTOML(data, level string) string {
	return fmt.Sprintf(`[system]
path = %q

[system.logging]
level = %q

[tcp]
address = "127.0.0.1:0"

[quic]
enabled = false

[websocket]
enabled = false

[http]
enabled = false

[heartbeat]
enabled = false
`, data, level)
}

func writeTestFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestServerCheckConfig(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	// A port already taken: --check-config would fail on it if it bound.
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	good := filepath.Join(dir, "good.toml")
	writeTestFile(t, good, strings.Replace(quietServerTOML(data, "warn,server=debug"), `"127.0.0.1:0"`, fmt.Sprintf("%q", held.Addr().String()), 1)+"\n[bogus]\nkey = 1\n")
	var stdout, stderr testutil.SyncBuffer
	code := Execute(t.Context(), Env{Args: []string{"server", "--check-config", "--config", good}, Stdout: &stdout, Stderr: &stderr})
	if code != ExitOK || !strings.Contains(stdout.String(), "configuration is valid (built-in defaults, file "+good) {
		t.Fatalf("valid config: exit %d\nstdout: %s\nstderr: %s", code, stdout.String(), stderr.String())
	}
	if !strings.Contains(stderr.String(), "warning: unknown config key bogus.key") {
		t.Errorf("the unknown key is not reported:\n%s", stderr.String())
	}
	if _, err := os.Stat(data); !os.IsNotExist(err) {
		t.Fatalf("--check-config touched the data directory: %v", err)
	}

	bad := filepath.Join(dir, "bad.toml")
	writeTestFile(t, bad, quietServerTOML(data, "warn,server=loud")+"\n[metadata]\nclients_table_max = 1\n")
	stdout, stderr = testutil.SyncBuffer{}, testutil.SyncBuffer{}
	code = Execute(t.Context(), Env{Args: []string{"server", "--check-config", "--config", bad}, Environ: []string{"IGGY_SYSTEM_LOGGING_FORMAT=xml"}, Stdout: &stdout, Stderr: &stderr})
	if code != ExitError {
		t.Fatalf("invalid config: exit %d, want %d", code, ExitError)
	}
	for _, key := range []string{"system.logging.level", "metadata.clients_table_max", "system.logging.format"} {
		if !strings.Contains(stderr.String(), key) {
			t.Errorf("problem %s not reported:\n%s", key, stderr.String())
		}
	}
	if stdout.String() != "" {
		t.Errorf("invalid config printed %q", stdout.String())
	}
	if _, err := os.Stat(data); !os.IsNotExist(err) {
		t.Fatalf("--check-config touched the data directory: %v", err)
	}
	code = Execute(t.Context(), Env{Args: []string{"server", "--check-config", "--print-config"}, Stdout: io.Discard, Stderr: io.Discard})
	if code != ExitUsage {
		t.Fatalf("both flags: exit %d, want %d", code, ExitUsage)
	}
}

func TestServerPrintConfigMasksSecrets(t *testing.T) {
	dir := t.TempDir()
	var environ, values []string
	for i, key := range config.SecretKeys() {
		if strings.Contains(key, "[]") {
			continue // inside an array of tables: no simple variable
		}
		v := fmt.Sprintf("topsecret-%02d-padding-to-thirty-two-bytes", i)
		if key == "system.encryption.key" {
			v = base64.StdEncoding.EncodeToString([]byte(fmt.Sprintf("topsecret-key-%02d-of-32-bytes-okay", i)[:32]))
		}
		environ = append(environ, config.EnvName(key)+"="+v)
		values = append(values, v)
	}
	if len(values) == 0 {
		t.Fatal("the schema has no secret keys to mask")
	}
	environ = append(environ, "RUST_LOG=debug")
	var stdout, stderr testutil.SyncBuffer
	code := Execute(t.Context(), Env{
		Args:    []string{"server", "--print-config", "--data-path", filepath.Join(dir, "d"), "--tcp-address", "127.0.0.1:9999"},
		Environ: environ, Stdout: &stdout, Stderr: &stderr,
	})
	out := stdout.String()
	if code != ExitOK {
		t.Fatalf("exit %d\nstderr: %s", code, stderr.String())
	}
	for _, v := range values {
		if strings.Contains(out, v) {
			t.Fatalf("secret %q printed:\n%s", v, out)
		}
	}
	if strings.Count(out, `"`+config.Masked+`"`) != len(values) {
		t.Errorf("want %d masked secrets in\n%s", len(values), out)
	}
	if !strings.Contains(out, "RUST_LOG replaces system.logging.level: debug") {
		t.Errorf("RUST_LOG not mentioned:\n%s", out)
	}
	got, _, err := config.Parse([]byte(out))
	if err != nil {
		t.Fatalf("printed configuration does not parse: %v", err)
	}
	want, _, err := config.Load("", environ)
	if err != nil {
		t.Fatal(err)
	}
	want.System.Path, want.TCP.Address = filepath.Join(dir, "d"), "127.0.0.1:9999"
	clearSecrets(reflect.ValueOf(&got).Elem())
	clearSecrets(reflect.ValueOf(&want).Elem())
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("printed configuration is not the effective one:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(dir, "d")); !os.IsNotExist(err) {
		t.Fatalf("--print-config touched the data directory: %v", err)
	}
}

// clearSecrets empties every secret field of a configuration value.
func clearSecrets(v reflect.Value) {
	t := v.Type()
	for i := range t.NumField() {
		f, fv := t.Field(i), v.Field(i)
		switch {
		case !f.IsExported():
		case config.IsSecret(f):
			fv.Set(reflect.Zero(f.Type))
		case fv.Kind() == reflect.Struct:
			clearSecrets(fv)
		case fv.Kind() == reflect.Slice && fv.Type().Elem().Kind() == reflect.Struct:
			for j := range fv.Len() {
				clearSecrets(fv.Index(j))
			}
		}
	}
}

// datagrams collects what a notify socket receives.
func datagrams(t *testing.T, path string) <-chan string {
	t.Helper()
	c, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ch := make(chan string, 256)
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := c.Read(buf)
			if err != nil {
				close(ch)
				return
			}
			select {
			case ch <- string(buf[:n]):
			default: // the test stopped reading
			}
		}
	}()
	return ch
}

// await returns the first datagram containing want.
func await(t *testing.T, ch <-chan string, want string) string {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case d, ok := <-ch:
			if !ok {
				t.Fatalf("notify socket closed before %q", want)
			}
			if strings.Contains(d, want) {
				return d
			}
		case <-deadline:
			t.Fatalf("no %q datagram", want)
		}
	}
}

// waitUntil polls cond until it holds or 20 s pass.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A real `iggo server` process under a fake service manager: READY=1 with
// the bound address, watchdog pings, the log file, SIGHUP level reloads
// (good and bad), STOPPING=1 on SIGTERM and a clean exit.
func TestServerProcessNotifyReloadStop(t *testing.T) {
	bin := iggoBinary(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	cfgPath := filepath.Join(dir, "server.toml")
	writeTestFile(t, cfgPath, quietServerTOML(data, "info"))
	sock := filepath.Join(dir, "notify.sock")
	notes := datagrams(t, sock)

	cmd := exec.Command(bin, "server", "--config", cfgPath)
	cmd.Env = []string{"NOTIFY_SOCKET=" + sock, "WATCHDOG_USEC=200000", "HOME=" + dir, "PATH=" + os.Getenv("PATH")}
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr testutil.SyncBuffer
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			stderr.Write([]byte(sc.Text() + "\n"))
		}
		exited <- cmd.Wait()
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
		}
	})

	ready := await(t, notes, "READY=1")
	_, status, _ := strings.Cut(ready, "STATUS=serving tcp ")
	addr := strings.TrimSpace(status)
	if addr == "" || strings.HasSuffix(addr, ":0") || strings.Contains(addr, ",") {
		t.Fatalf("READY datagram %q lacks the bound tcp address alone", ready)
	}
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatalf("READY=1 sent but %s does not accept: %v", addr, err)
	}
	nc.Close()
	await(t, notes, "WATCHDOG=1")
	await(t, notes, "WATCHDOG=1")

	logFile := filepath.Join(data, "logs", "iggy-server.log")
	waitUntil(t, "the log file", func() bool {
		b, _ := os.ReadFile(logFile)
		return strings.Contains(string(b), "iggo server ready")
	})
	if strings.Contains(stderr.String(), "level=DEBUG") {
		t.Fatalf("debug records at level info:\n%s", stderr.String())
	}

	writeTestFile(t, cfgPath, quietServerTOML(data, "debug"))
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	const reloaded = `msg="SIGHUP: log level reloaded" from=info to=debug source=system.logging.level`
	waitUntil(t, "the reload line", func() bool { return strings.Contains(stderr.String(), reloaded) })
	waitUntil(t, "the reload line in the log file", func() bool {
		b, _ := os.ReadFile(logFile)
		return strings.Contains(string(b), reloaded)
	})

	writeTestFile(t, cfgPath, quietServerTOML(data, "loud"))
	cmd.Process.Signal(syscall.SIGHUP)
	waitUntil(t, "the refused reload", func() bool {
		return strings.Contains(stderr.String(), "system.logging.level is invalid; log level unchanged") &&
			strings.Contains(stderr.String(), "level=debug")
	})
	if n := strings.Count(stderr.String(), "SIGHUP"); n != 2 {
		t.Errorf("want one line per SIGHUP, got %d:\n%s", n, stderr.String())
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if d := await(t, notes, "STOPPING=1"); !strings.Contains(d, "STATUS=shutting down") {
		t.Errorf("STOPPING datagram %q", d)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("server exit: %v\n%s", err, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("server did not stop\n%s", stderr.String())
	}
	if !strings.Contains(stderr.String(), "iggo server stopped") {
		t.Errorf("no stop line:\n%s", stderr.String())
	}
}

// With [telemetry] on, the server logger fans out to OTLP as well as to
// standard error and the file.
func TestServerExportsLogsOverOTLP(t *testing.T) {
	col := otlptest.Start(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	cfgPath := filepath.Join(dir, "server.toml")
	writeTestFile(t, cfgPath, quietServerTOML(data, "info")+fmt.Sprintf(`
[telemetry]
enabled = true
service_name = "iggo-test"

[telemetry.logs]
transport = "http"
endpoint = %q

[telemetry.traces]
transport = "http"
endpoint = %q
`, col.HTTPURL+"/v1/logs", col.HTTPURL+"/v1/traces"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr testutil.SyncBuffer
	done := make(chan int, 1)
	go func() {
		done <- Execute(ctx, Env{Args: []string{"server", "--config", cfgPath}, Stdout: io.Discard, Stderr: &stderr})
	}()
	rec, err := col.WaitLog(20*time.Second, func(l otlptest.Log) bool {
		return l.Body.GetStringValue() == "iggo server ready"
	})
	if err != nil {
		t.Fatalf("no OTLP log record: %v\n%s", err, stderr.String())
	}
	if rec.Resource["service.name"] != "iggo-test" {
		t.Errorf("resource %v", rec.Resource)
	}
	file, _ := os.ReadFile(filepath.Join(data, "logs", "iggy-server.log"))
	if !strings.Contains(string(file), "iggo server ready") || !strings.Contains(stderr.String(), "iggo server ready") {
		t.Fatalf("the record did not reach the file and standard error too:\n%s", stderr.String())
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit %d\n%s", code, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("server did not stop")
	}
}
