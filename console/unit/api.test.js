// Unit tests of the API session: error mapping, 401 handling, exact
// integers in replies and bodies, token storage.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Session, ApiError } from '../../internal/console/ui/js/api.js';

class MemStorage {
  constructor() { this.m = new Map(); }
  getItem(k) { return this.m.has(k) ? this.m.get(k) : null; }
  setItem(k, v) { this.m.set(k, String(v)); }
  removeItem(k) { this.m.delete(k); }
}

function jwt(claims) {
  return `h.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.s`;
}

function fakeFetch(handler) {
  const calls = [];
  const fn = async (url, init) => {
    calls.push({ url, init });
    const r = handler(url, init);
    if (r instanceof Error) throw r;
    return new Response(r.body ?? '', { status: r.status ?? 200, headers: { 'content-type': r.type ?? 'application/json' } });
  };
  return { fn, calls };
}

test('replies keep u64/u128 exact and bodies write BigInt bare', async () => {
  const f = fakeFetch(() => ({ body: '{"current_offset":18446744073709551615,"id":340282366920938463463374607431768211455}' }));
  const s = new Session({ storage: new MemStorage(), fetchFn: f.fn });
  const r = await s.post('/x', { offset: 18446744073709551615n });
  assert.equal(r.current_offset, 18446744073709551615n);
  assert.equal(r.id, 340282366920938463463374607431768211455n);
  assert.equal(f.calls[0].init.body, '{"offset":18446744073709551615}');
  assert.equal(f.calls[0].init.headers['Content-Type'], 'application/json');
});

test('login stores the token in session storage and sends it as a bearer', async () => {
  const storage = new MemStorage();
  const exp = Math.floor(Date.now() / 1000) + 3600;
  const token = jwt({ sub: '5', exp });
  const f = fakeFetch((url) => (url.endsWith('/users/login') ? { body: JSON.stringify({ user_id: 5, access_token: { token, expiry: exp } }) } : { body: '[]' }));
  const s = new Session({ storage, fetchFn: f.fn });
  await s.login('u', 'p');
  assert.equal(s.userId, 5);
  assert.equal(JSON.parse(storage.getItem('iggo.session')).token, token);
  await s.get('/streams');
  assert.equal(f.calls[1].init.headers.Authorization, 'Bearer ' + token);
  assert.equal(f.calls[0].init.headers.Authorization, undefined, 'login sends no bearer');
  const again = new Session({ storage, fetchFn: f.fn });
  assert.equal(again.restore(), true);
  assert.equal(again.userId, 5);
  s.clear();
  again.clear();
  assert.equal(storage.getItem('iggo.session'), null);
});

test('an expired saved token is not restored', () => {
  const storage = new MemStorage();
  storage.setItem('iggo.session', JSON.stringify({ token: 't', expiry: 1, userId: 1 }));
  const s = new Session({ storage, fetchFn: fakeFetch(() => ({})).fn });
  assert.equal(s.restore(), false);
  assert.equal(storage.getItem('iggo.session'), null);
});

test('401 signs out with a message; 403 does not', async () => {
  let status = 403;
  const f = fakeFetch(() => ({ status, body: JSON.stringify({ id: status === 403 ? 41 : 40, code: status === 403 ? 'unauthorized' : 'unauthenticated', reason: 'r', field: null }) }));
  const s = new Session({ storage: new MemStorage(), fetchFn: f.fn });
  s.token = 'tok';
  const lost = [];
  s.onAuthLost = (m) => lost.push(m);
  await assert.rejects(s.get('/users'), (e) => e instanceof ApiError && e.status === 403 && e.id === 41 && /Not allowed/.test(e.describe()));
  assert.equal(lost.length, 0);
  assert.equal(s.token, 'tok');
  status = 401;
  await assert.rejects(s.get('/users'), (e) => e.status === 401);
  assert.equal(lost.length, 1);
  assert.match(lost[0], /no longer valid/);
  assert.equal(s.token, null);
});

test('a network failure is "unreachable" and reported once', async () => {
  let down = true;
  const f = fakeFetch(() => (down ? new TypeError('fetch failed') : { body: '{}' }));
  const s = new Session({ storage: new MemStorage(), fetchFn: f.fn });
  const seen = [];
  s.onReachability = (ok) => seen.push(ok);
  await assert.rejects(s.get('/stats'), (e) => e.kind === 'unreachable' && e.status === 0 && /unreachable/.test(e.describe()));
  await assert.rejects(s.get('/stats'));
  down = false;
  await s.get('/stats');
  assert.deepEqual(seen, [false, true]);
});

test('non-JSON error bodies still become ApiError', async () => {
  const f = fakeFetch(() => ({ status: 415, body: 'Unsupported Media Type', type: 'text/plain' }));
  const s = new Session({ storage: new MemStorage(), fetchFn: f.fn });
  await assert.rejects(s.get('/x'), (e) => e instanceof ApiError && e.status === 415 && e.reason === 'Unsupported Media Type');
});

test('refresh replaces the token; a 401 on refresh signs out', async () => {
  const exp = Math.floor(Date.now() / 1000) + 3600;
  let ok = true;
  const f = fakeFetch(() => (ok ? { body: JSON.stringify({ user_id: 2, access_token: { token: 'new', expiry: exp } }) } : { status: 401, body: '{"id":40,"code":"unauthenticated","reason":"","field":null}' }));
  const s = new Session({ storage: new MemStorage(), fetchFn: f.fn });
  s.setToken('old', exp, 2);
  await s.refresh();
  assert.equal(s.token, 'new');
  assert.equal(JSON.parse(f.calls[0].init.body).token, 'old');
  ok = false;
  const lost = [];
  s.onAuthLost = (m) => lost.push(m);
  await s.refresh();
  assert.equal(s.token, null);
  assert.match(lost[0], /expired/);
  s.clear();
});
