// Test harness: a real `iggo server` child process on free loopback ports in
// a fresh data directory, the `iggo` CLI to send messages, plain fetch for
// API set-up, and headless Chromium through playwright-core.

import { spawn, execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, mkdir, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createServer } from 'node:net';
import { chromium } from 'playwright-core';

const here = dirname(fileURLToPath(import.meta.url));
/** Where screenshots are written (committed). */
export const SHOTS = join(here, 'screenshots');
/** The iggo binary built by run.sh (IGGO_BIN overrides). */
export const IGGO = process.env.IGGO_BIN || join(here, '.build', 'iggo');

/** Viewports every page is captured at. */
export const VIEWPORTS = { desktop: { width: 1280, height: 800 }, phone: { width: 390, height: 844 } };

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function tomlAddress(text, table) {
  const re = new RegExp(`^\\[${table}\\]\\s*$([\\s\\S]*?)^\\[`, 'm');
  const m = re.exec(text + '\n[');
  if (!m) return null;
  const a = /^\s*address\s*=\s*"([^"]+)"/m.exec(m[1]);
  return a ? a[1] : null;
}

/** A running iggo server. */
export class Server {
  static async start() {
    const s = new Server();
    s.dir = await mkdtemp(join(tmpdir(), 'iggo-console-e2e-'));
    await s.spawn();
    return s;
  }

  /** Starts (or restarts) the server process; extraEnv adds IGGY_* overrides. */
  async spawn(extraEnv = {}) {
    const env = {
      ...process.env,
      ...extraEnv,
      HOME: this.dir,
      IGGY_HTTP_ENABLED: 'true',
      IGGY_HTTP_WEB_UI: 'true',
      IGGY_HTTP_ADDRESS: '127.0.0.1:0',
      IGGY_TCP_ADDRESS: '127.0.0.1:0',
      IGGY_QUIC_ENABLED: 'false',
      IGGY_WEBSOCKET_ENABLED: 'false',
    };
    this.log = '';
    this.proc = spawn(IGGO, ['server', '--data-path', join(this.dir, 'data')], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const onData = (d) => { this.log += d.toString(); };
    this.proc.stdout.on('data', onData);
    this.proc.stderr.on('data', onData);
    this.exited = new Promise((r) => this.proc.on('exit', r));
    const deadline = Date.now() + 30_000;
    const cfgPath = join(this.dir, 'data', 'runtime', 'current_config.toml');
    while (Date.now() < deadline) {
      if (this.proc.exitCode !== null) throw new Error('iggo server exited:\n' + this.log);
      if (/iggo server ready/.test(this.log) && existsSync(cfgPath)) {
        const cfg = await readFile(cfgPath, 'utf8');
        this.http = tomlAddress(cfg, 'http');
        this.tcp = tomlAddress(cfg, 'tcp');
        if (this.http && this.tcp && !this.http.endsWith(':0')) {
          this.base = `http://${this.http}`;
          return;
        }
      }
      await sleep(100);
    }
    throw new Error('iggo server did not become ready in 30 s:\n' + this.log);
  }

  /** Stops the server (SIGTERM, then SIGKILL after 10 s). */
  async stop() {
    if (!this.proc || this.proc.exitCode !== null) return;
    this.proc.kill('SIGTERM');
    const t = setTimeout(() => this.proc.kill('SIGKILL'), 10_000);
    await this.exited;
    clearTimeout(t);
  }

  async cleanup() {
    await this.stop();
    await rm(this.dir, { recursive: true, force: true });
  }

  /** Calls the HTTP API directly (test set-up and checks). */
  async api(method, path, body, token) {
    const headers = {};
    if (token) headers.Authorization = 'Bearer ' + token;
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const res = await fetch(this.base + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    return { status: res.status, body: text && (res.headers.get('content-type') || '').includes('json') ? JSON.parse(text) : text };
  }

  async login(username = 'iggy', password = 'iggy') {
    const r = await this.api('POST', '/users/login', { username, password });
    if (r.status !== 200) throw new Error(`login ${username}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body.access_token.token;
  }

  /** Runs the iggo CLI against this server's TCP listener. */
  cli(args, { input } = {}) {
    return new Promise((resolve, reject) => {
      const child = execFile(IGGO, [...args, '--addr', this.tcp, '--username', 'iggy', '--password', 'iggy'],
        { env: { ...process.env, HOME: this.dir }, timeout: 30_000, maxBuffer: 1 << 24 }, (err, stdout, stderr) => {
          if (err) reject(new Error(`iggo ${args.join(' ')}: ${err.message}\n${stderr}`));
          else resolve(stdout);
        });
      if (input !== undefined) {
        child.stdin.end(input);
      }
    });
  }

  /** Writes a file in the server's temp dir (payloads for --file). */
  async file(name, data) {
    const p = join(this.dir, name);
    await writeFile(p, data);
    return p;
  }
}

/** Resolves whether 127.0.0.1:port is free to listen on. */
function portFree(port) {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

/**
 * A local three-node cluster (`iggo cluster start --http`) in a fresh
 * directory, on a base port whose nine ports (TCP base+i, replica
 * base+100+i, HTTP base+200+i) are free. base is node 0's HTTP API.
 */
export class Cluster {
  static async start() {
    const c = new Cluster();
    c.dir = await mkdtemp(join(tmpdir(), 'iggo-console-cluster-'));
    for (let attempt = 0; ; attempt++) {
      const port = 20000 + Math.floor(Math.random() * 20000);
      const ports = [0, 1, 2, 100, 101, 102, 200, 201, 202].map((d) => port + d);
      if ((await Promise.all(ports.map(portFree))).every(Boolean)) {
        c.port = port;
        break;
      }
      if (attempt === 20) throw new Error('no free base port for a local cluster');
    }
    c.log = '';
    c.proc = spawn(IGGO, ['cluster', 'start', '--dir', join(c.dir, 'cluster'), '--http', '--base-port', String(c.port)],
      { env: { ...process.env, HOME: c.dir, IGGY_HTTP_WEB_UI: 'true' }, stdio: ['ignore', 'pipe', 'pipe'] });
    const onData = (d) => { c.log += d.toString(); };
    c.proc.stdout.on('data', onData);
    c.proc.stderr.on('data', onData);
    c.exited = new Promise((r) => c.proc.on('exit', r));
    const deadline = Date.now() + 90_000;
    while (!/^connect:/m.test(c.log)) {
      if (c.proc.exitCode !== null) throw new Error('iggo cluster start exited:\n' + c.log);
      if (Date.now() > deadline) throw new Error('the local cluster did not start in 90 s:\n' + c.log);
      await sleep(100);
    }
    c.base = `http://127.0.0.1:${c.port + 200}`;
    return c;
  }

  /** Stops the cluster (SIGINT, as Ctrl-C; SIGKILL after 15 s) and deletes its directory. */
  async cleanup() {
    if (this.proc && this.proc.exitCode === null) {
      this.proc.kill('SIGINT');
      const t = setTimeout(() => this.proc.kill('SIGKILL'), 15_000);
      await this.exited;
      clearTimeout(t);
    }
    await rm(this.dir, { recursive: true, force: true });
  }
}
Cluster.prototype.api = Server.prototype.api;
Cluster.prototype.login = Server.prototype.login;

/** Finds Debian's Chromium (CHROMIUM overrides). */
export function chromiumPath() {
  for (const p of [process.env.CHROMIUM, '/usr/bin/chromium', '/usr/bin/chromium-browser']) {
    if (p && existsSync(p)) return p;
  }
  throw new Error('Chromium not found: apt-get install -y chromium, or set CHROMIUM');
}

/** Launches headless Chromium. */
export async function launch() {
  await mkdir(SHOTS, { recursive: true });
  return chromium.launch({
    executablePath: chromiumPath(),
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
}

/**
 * Saves screenshots of the current page at desktop and phone width, then
 * restores the desktop viewport.
 */
export async function shoot(page, name, { before } = {}) {
  for (const [vp, size] of Object.entries(VIEWPORTS)) {
    await page.setViewportSize(size);
    if (before) await before(vp);
    await sleep(250);
    await page.screenshot({ path: join(SHOTS, `${name}-${vp}.png`), animations: 'disabled' });
  }
  await page.setViewportSize(VIEWPORTS.desktop);
}

export { sleep };
