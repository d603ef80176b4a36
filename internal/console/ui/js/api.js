// The console's only way to the server: Iggo's HTTP API, called with the
// signed-in user's JWT.
//
// Token storage: the JWT lives in memory and in sessionStorage (key
// "iggo.session"), so a reload of the tab keeps the user signed in while a new
// tab or a closed browser does not; it is never written to localStorage or a
// cookie. It is refreshed through POST /users/refresh-token shortly before it
// expires. Replies are parsed with bigjson so u64/u128 values stay exact.

import { parse, stringify } from './bigjson.js';

const STORAGE_KEY = 'iggo.session';
/** Refresh this long before expiry (or at 80 % of a shorter lifetime). */
const REFRESH_LEAD_MS = 60_000;
/** setTimeout cannot wait longer than 2^31-1 ms. */
const MAX_TIMER_MS = 2 ** 31 - 1;
/** Bound on a single request so a hung server shows "unreachable", not a frozen page. */
const REQUEST_TIMEOUT_MS = 30_000;

/** An API failure: an error reply ({id, code, reason, field}) or no reply at all. */
export class ApiError extends Error {
  /**
   * @param {object} o
   * @param {number} o.status HTTP status, 0 when the server was not reached
   * @param {'http'|'unreachable'|'timeout'} o.kind
   */
  constructor({ status, kind, id = null, code = null, reason = '', field = null, path = '' }) {
    super(reason || (kind === 'http' ? `HTTP ${status}` : 'server unreachable'));
    this.name = 'ApiError';
    this.status = status;
    this.kind = kind;
    this.id = id;
    this.code = code;
    this.reason = reason;
    this.field = field;
    this.path = path;
  }

  /** A one-line description for toasts and error panels. */
  describe() {
    if (this.kind === 'unreachable') return 'The server is unreachable. Check that it is running and that the HTTP listener is on.';
    if (this.kind === 'timeout') return 'The server did not answer in time.';
    const code = this.code ? ` (${this.code}${this.id !== null ? ' ' + this.id : ''})` : '';
    if (this.status === 403) return `Not allowed: your user lacks the permission for this${code}.`;
    if (this.status === 404 && !this.reason) return 'Not found.';
    return `${this.reason || 'HTTP ' + this.status}${code}`;
  }
}

async function errorFromResponse(res, path) {
  const text = await res.text().catch(() => '');
  let body = null;
  try {
    body = text ? parse(text) : null;
  } catch {
    body = null;
  }
  if (body && typeof body === 'object' && !Array.isArray(body)) {
    return new ApiError({ status: res.status, kind: 'http', id: body.id ?? null, code: body.code ?? null, reason: body.reason ?? '', field: body.field ?? null, path });
  }
  return new ApiError({ status: res.status, kind: 'http', reason: text.slice(0, 200) || res.statusText, path });
}

/** Decodes the payload of a JWT without verifying it (for sub and exp only). */
export function decodeJWT(token) {
  try {
    const part = String(token).split('.')[1];
    const b64 = part.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (part.length % 4)) % 4);
    return JSON.parse(atob(b64));
  } catch {
    return null;
  }
}

/**
 * Session: the signed-in credential plus the request function every page uses.
 * Listeners: onAuthLost(message) when the server rejects the credential (401)
 * or it expires; onReachability(ok) when the server stops or starts answering.
 */
export class Session {
  /** @param {{base?: string, storage?: Storage, fetchFn?: typeof fetch}} [opts] */
  constructor(opts = {}) {
    this.base = opts.base ?? '';
    this.storage = opts.storage ?? globalThis.sessionStorage;
    this.fetchFn = opts.fetchFn ?? globalThis.fetch.bind(globalThis);
    this.token = null;
    this.expiry = 0; // unix seconds
    this.userId = null;
    this.onAuthLost = () => {};
    this.onReachability = () => {};
    this.reachable = true;
    this.timer = null;
  }

  /** Restores a token saved in this tab; returns true when one is usable. */
  restore() {
    try {
      const saved = JSON.parse(this.storage.getItem(STORAGE_KEY) || 'null');
      if (saved && saved.token && saved.expiry * 1000 > Date.now()) {
        this.setToken(saved.token, saved.expiry, saved.userId);
        return true;
      }
    } catch {
      // unreadable storage: start signed out
    }
    this.storage.removeItem(STORAGE_KEY);
    return false;
  }

  /** Installs a credential and schedules its refresh. */
  setToken(token, expiry, userId) {
    this.token = token;
    this.expiry = Number(expiry);
    const claims = decodeJWT(token);
    this.userId = userId ?? (claims && claims.sub !== undefined ? Number(claims.sub) : null);
    this.storage.setItem(STORAGE_KEY, JSON.stringify({ token, expiry: this.expiry, userId: this.userId }));
    this.scheduleRefresh();
  }

  /** Forgets the credential locally. */
  clear() {
    this.token = null;
    this.expiry = 0;
    this.userId = null;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.storage.removeItem(STORAGE_KEY);
  }

  scheduleRefresh() {
    if (this.timer) clearTimeout(this.timer);
    const left = this.expiry * 1000 - Date.now();
    const lead = Math.min(REFRESH_LEAD_MS, left * 0.2);
    const delay = Math.max(1000, Math.min(MAX_TIMER_MS, left - lead));
    this.timer = setTimeout(() => this.refresh().catch(() => {}), delay);
  }

  /** Exchanges the current JWT for a new one (POST /users/refresh-token). */
  async refresh() {
    if (!this.token) return;
    try {
      const r = await this.request('POST', '/users/refresh-token', { body: { token: this.token }, noAuth: true });
      this.setToken(r.access_token.token, r.access_token.expiry, r.user_id);
    } catch (e) {
      if (e instanceof ApiError && e.status === 401) {
        this.clear();
        this.onAuthLost('Your session has expired. Please sign in again.');
      } else {
        // transient: try again in 10 s while the token still lives
        if (this.token && this.expiry * 1000 > Date.now()) {
          this.timer = setTimeout(() => this.refresh().catch(() => {}), 10_000);
        }
      }
    }
  }

  /** Signs in with username and password. */
  async login(username, password) {
    const r = await this.request('POST', '/users/login', { body: { username, password }, noAuth: true });
    this.setToken(r.access_token.token, r.access_token.expiry, r.user_id);
    return r;
  }

  /** Signs in with a personal access token. */
  async loginPAT(token) {
    const r = await this.request('POST', '/personal-access-tokens/login', { body: { token }, noAuth: true });
    this.setToken(r.access_token.token, r.access_token.expiry, r.user_id);
    return r;
  }

  /** Ends the HTTP session on the server (best effort) and forgets the token. */
  async logout() {
    if (this.token) {
      await this.request('DELETE', '/users/logout', { quiet: true }).catch(() => {});
    }
    this.clear();
  }

  setReachable(ok) {
    if (ok !== this.reachable) {
      this.reachable = ok;
      this.onReachability(ok);
    }
  }

  /**
   * Calls the API. Returns the parsed JSON (bigjson), the raw Response when
   * opts.raw, or null for an empty body. Throws ApiError.
   * @param {string} method
   * @param {string} path starting with "/"
   * @param {{query?: object, body?: any, raw?: boolean, noAuth?: boolean, quiet?: boolean, signal?: AbortSignal}} [opts]
   */
  async request(method, path, opts = {}) {
    let url = this.base + path;
    if (opts.query) {
      const q = new URLSearchParams();
      for (const [k, v] of Object.entries(opts.query)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
      const s = q.toString();
      if (s) url += '?' + s;
    }
    const headers = {};
    if (!opts.noAuth && this.token) headers.Authorization = 'Bearer ' + this.token;
    let body;
    if (opts.body !== undefined) {
      headers['Content-Type'] = 'application/json';
      body = stringify(opts.body);
    }
    const ctl = new AbortController();
    const timer = setTimeout(() => ctl.abort(), REQUEST_TIMEOUT_MS);
    if (opts.signal) opts.signal.addEventListener('abort', () => ctl.abort());
    let res;
    try {
      res = await this.fetchFn(url, { method, headers, body, signal: ctl.signal, cache: 'no-store' });
    } catch (e) {
      clearTimeout(timer);
      if (opts.signal && opts.signal.aborted) throw e;
      const timedOut = ctl.signal.aborted;
      this.setReachable(false);
      throw new ApiError({ status: 0, kind: timedOut ? 'timeout' : 'unreachable', path });
    }
    clearTimeout(timer);
    this.setReachable(true);
    if (!res.ok) {
      const err = await errorFromResponse(res, path);
      if (res.status === 401 && !opts.noAuth && !opts.quiet) {
        this.clear();
        this.onAuthLost(err.code === 'access_token_missing' ? 'Please sign in.' : 'Your session is no longer valid (expired or revoked). Please sign in again.');
      }
      throw err;
    }
    if (opts.raw) return res;
    const text = await res.text();
    if (!text) return null;
    const ct = res.headers.get('content-type') || '';
    if (!ct.includes('json')) return text;
    return parse(text);
  }

  get(path, query, opts = {}) {
    return this.request('GET', path, { ...opts, query });
  }
  post(path, body, opts = {}) {
    return this.request('POST', path, { ...opts, body });
  }
  put(path, body, opts = {}) {
    return this.request('PUT', path, { ...opts, body });
  }
  del(path, query, opts = {}) {
    return this.request('DELETE', path, { ...opts, query });
  }
}

/** Encodes one path segment (stream/topic names may contain anything). */
export function seg(v) {
  return encodeURIComponent(String(v));
}
