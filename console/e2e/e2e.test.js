// End-to-end tests of the web console in headless Chromium against a real
// iggo server. The steps share one server and run in order.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Server, launch, shoot, sleep } from './harness.js';

const EVIL = '<img src=x onerror=alert(1)>';
let server;
let browser;
let context;
let page;
const dialogs = [];
const pageErrors = [];

async function newPage() {
  context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const p = await context.newPage();
  p.on('dialog', (d) => { dialogs.push(d.message()); d.dismiss().catch(() => {}); });
  p.on('pageerror', (e) => pageErrors.push(String(e)));
  return p;
}

const ui = (hash = '') => `${server.base}/ui/${hash ? '#' + hash : ''}`;
const byTest = (id) => page.getByTestId(id);

async function signIn(username, password) {
  await page.goto(ui('/sign-in'));
  await page.evaluate(() => sessionStorage.clear());
  await page.reload();
  await byTest('username').fill(username);
  await byTest('password').fill(password);
  await byTest('signin').click();
  await byTest('current-user').filter({ hasText: username }).waitFor();
}

async function title() {
  return (await byTest('page-title').first().textContent()).trim();
}

before(async () => {
  server = await Server.start();
  browser = await launch();
  page = await newPage();
});

after(async () => {
  if (browser) await browser.close();
  if (server) await server.cleanup();
});

test('console end to end', async (t) => {
  let streamId;
  let topicId;

  await t.test('sign-in page, a wrong password and signing in', async () => {
    await page.goto(ui());
    await byTest('signin').waitFor();
    await shoot(page, '01-sign-in');
    await byTest('username').fill('iggy');
    await byTest('password').fill('wrong-password');
    await byTest('signin').click();
    await byTest('signin-error').filter({ hasText: 'Wrong username or password' }).waitFor();
    await signIn('iggy', 'iggy');
    assert.equal(await title(), 'Overview');
    await byTest('stats-cards').waitFor();
  });

  await t.test('create a stream and a topic with storage options', async () => {
    await page.goto(ui('/streams'));
    await byTest('new-stream').click();
    await byTest('stream-name').fill('orders');
    await byTest('stream-submit').click();
    await page.waitForFunction(() => /#\/streams\/\d+$/.test(location.hash));
    streamId = Number((await page.evaluate(() => location.hash)).split('/').pop());
    assert.equal(await title(), 'orders');
    await byTest('new-topic').click();
    await byTest('topic-name').fill('events');
    await byTest('topic-partitions').fill('2');
    await page.locator('select[name="message_expiry_mode"]').selectOption('custom');
    await byTest('expiry-input').fill('7d');
    await page.locator('details.opts summary').click();
    await page.locator('input[name="segment_size"]').fill('16 MiB');
    await page.locator('select[name="enforce_fsync"]').selectOption('true');
    await byTest('topic-submit').click();
    await page.waitForFunction(() => /#\/streams\/\d+\/topics\/\d+$/.test(location.hash));
    topicId = Number((await page.evaluate(() => location.hash)).split('/').pop());
    assert.equal(await title(), 'events');
    const kv = await byTest('topic-kv').textContent();
    assert.match(kv, /Partitions\s*2/);
    assert.match(kv, /Message expiry\s*7d/);
    const token = await server.login();
    const topic = (await server.api('GET', `/streams/${streamId}/topics/${topicId}`, undefined, token)).body;
    assert.equal(topic.partitions_count, 2);
    assert.equal(topic.message_expiry, 7 * 86400 * 1e6);
    assert.equal(topic.options.enforce_fsync.value, 'true');
    assert.equal(topic.options.enforce_fsync.explicit, true);
    assert.equal(topic.options.segment_size.value, String(16 * 1024 * 1024));
  });

  await t.test('names with HTML render as text and run nothing', async () => {
    await page.goto(ui('/streams'));
    await byTest('new-stream').click();
    await byTest('stream-name').fill(EVIL);
    await byTest('stream-submit').click();
    await byTest('page-title').filter({ hasText: EVIL }).waitFor();
    assert.equal(await title(), EVIL);
    await page.goto(ui('/streams'));
    await byTest('streams-table').getByText(EVIL).waitFor();
    await sleep(500);
    assert.equal(await page.locator('img[src="x"]').count(), 0, 'no <img> element was created from the name');
    assert.deepEqual(dialogs, [], 'no dialog fired');
    await shoot(page, '03-streams');
  });

  await t.test('messages sent through the CLI appear in the live tail', async () => {
    await page.goto(ui(`/streams/${streamId}/topics/${topicId}/messages`));
    await byTest('tail-toggle').click();
    await byTest('tail-status').filter({ hasText: 'Live' }).waitFor();
    await server.cli(['send', 'orders', 'events', '--header', 'source=cli', '--header', 'attempt:uint32=3',
      '{"order":1,"big":18446744073709551615,"items":[{"sku":"a"}]}', '{"order":2}', 'plain text line']);
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="message-row"]').length >= 3, null, { timeout: 15_000 });
    const table = await byTest('messages-table').textContent();
    assert.match(table, /plain text line/);
    assert.match(table, /"order":1/);
    // pause: a message sent now does not appear until resumed
    await byTest('tail-toggle').click();
    await byTest('tail-status').filter({ hasText: 'Paused' }).waitFor();
    await server.cli(['send', 'orders', 'events', 'after pause']);
    await sleep(2500);
    assert.doesNotMatch(await byTest('messages-table').textContent(), /after pause/);
    await byTest('tail-toggle').click();
    await byTest('messages-table').getByText('after pause').waitFor({ timeout: 10_000 });
    await byTest('tail-toggle').click();
  });

  await t.test('inspect a message: JSON tree with exact big numbers, headers, hex', async () => {
    await page.locator('[data-testid="message-row"]', { hasText: '"order":1' }).click();
    const details = byTest('message-details');
    await details.waitFor();
    const tree = await byTest('json-tree').textContent();
    assert.match(tree, /18446744073709551615/, 'u64 max shown exactly in the tree');
    const headers = await byTest('headers-table').textContent();
    assert.match(headers, /source/);
    assert.match(headers, /cli/);
    assert.match(headers, /attempt/);
    assert.match(headers, /uint32/);
    assert.match(headers, /3/);
    await shoot(page, '05-messages');
    await byTest('view-hex').click();
    const hex = await byTest('payload-hex').textContent();
    assert.match(hex, /^00000000 {2}7b 22 6f 72 64 65 72 22/, 'hex dump starts with {"order"');
    await byTest('view-text').click();
    assert.match(await byTest('payload-text').textContent(), /"items":\[\{"sku":"a"\}\]/);
  });

  await t.test('produce from the console with headers, a partition and a u128 id', async () => {
    await byTest('produce').click();
    await byTest('produce-payload').fill('{"from":"console"}');
    await byTest('produce-partitioning').selectOption('partition_id');
    await byTest('produce-partition').selectOption('1');
    await byTest('produce-id').fill('340282366920938463463374607431768211455');
    await byTest('add-header').click();
    await page.locator('.header-row .hk').fill('level');
    await page.locator('.header-row .hkind').selectOption('int16');
    await page.locator('.header-row .hv').fill('-2');
    await byTest('produce-submit').click();
    await byTest('toast-ok').filter({ hasText: 'partition 1' }).waitFor();
    await byTest('seek-kind').selectOption('last');
    await byTest('seek').click();
    await page.locator('[data-testid="message-row"]', { hasText: 'console' }).click();
    const kv = await byTest('message-kv').textContent();
    assert.match(kv, /340282366920938463463374607431768211455/, 'u128 id exact');
    assert.match(kv, /ffffffff-ffff-ffff-ffff-ffffffffffff/);
    assert.match(kv, /Partition\s*1/);
    assert.match(await byTest('headers-table').textContent(), /level.*-2.*int16/s);
  });

  await t.test('binary, invalid UTF-8 and a 10 MB payload each show a clear view', async () => {
    const bin = await server.file('bin.dat', Buffer.from([0x00, 0xff, 0xfe, 0x41, 0x0a, 0x80]));
    const big = await server.file('big.txt', Buffer.alloc(10 * 1024 * 1024, 'x'));
    await server.cli(['send', 'orders', 'events', '--partition', '0', '--raw', '--file', bin]);
    await server.cli(['send', 'orders', 'events', '--partition', '0', '--raw', '--file', big]);
    await page.goto(ui(`/streams/${streamId}/topics/${topicId}/messages?partition=0`));
    await byTest('seek-kind').selectOption('last');
    await byTest('seek-count').fill('2');
    await byTest('seek').click();
    await page.locator('[data-testid="message-row"]', { hasText: 'binary, 6 bytes' }).click();
    assert.match(await byTest('payload-hex').textContent(), /00 ff fe 41 0a 80/);
    await byTest('view-text').click();
    await page.getByText('not valid UTF-8').waitFor();
    await page.locator('[data-testid="message-row"]', { hasText: 'xxxx' }).click();
    await byTest('view-text').click();
    await page.getByText('Showing the first').waitFor();
    await byTest('view-hex').click();
    assert.match(await byTest('payload-hex').textContent(), /more bytes not shown/);
  });

  await t.test('merged view across partitions and seek by offset', async () => {
    await byTest('partition-select').selectOption('all');
    await byTest('seek-kind').selectOption('first');
    await byTest('seek-count').fill('100');
    await byTest('seek').click();
    await byTest('tail-status').filter({ hasText: 'merged' }).waitFor();
    const pcol = await page.locator('[data-testid="message-row"] td:first-child').allTextContents();
    assert.ok(new Set(pcol).size >= 2, `rows from both partitions, got ${pcol}`);
    await byTest('partition-select').selectOption('0');
    await byTest('seek-kind').selectOption('offset');
    await byTest('seek-offset').fill('1');
    await byTest('seek-count').fill('1');
    await byTest('seek').click();
    await byTest('tail-status').filter({ hasText: '1 messages loaded' }).waitFor();
  });

  await t.test('consumer group page and offset reset', async () => {
    const token = await server.login();
    const g = await server.api('POST', `/streams/${streamId}/topics/${topicId}/consumer-groups`, { name: 'billing' }, token);
    assert.equal(g.status, 200, JSON.stringify(g.body));
    await page.goto(ui(`/streams/${streamId}/topics/${topicId}`));
    await byTest('groups-table').getByText('billing').click();
    await byTest('page-title').filter({ hasText: 'billing' }).waitFor();
    await byTest('offsets-panel').waitFor();
    // Group offsets are read-only here: members commit them.
    await byTest('group-offsets-note').waitFor();
    assert.equal(await page.locator('[data-testid="offsets-panel"]').first().getByTestId('reset-offset-0').count(), 0);
    await byTest('consumer-id').fill('7');
    await byTest('consumer-show').click();
    const panel = page.locator('[data-testid="offsets-panel"]').last();
    await panel.getByTestId('reset-offset-0').click();
    await byTest('reset-mode').selectOption('value');
    await byTest('reset-offset').fill('1');
    await byTest('reset-submit').click();
    await byTest('toast-ok').filter({ hasText: 'Offset stored' }).waitFor();
    const r = await server.api('GET', `/streams/${streamId}/topics/${topicId}/consumer-offsets?consumer_id=7&partition_id=0`, undefined, token);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.stored_offset, 1);
    await page.locator('[data-testid="offsets-table"]').last().getByText(/^1$/).first().waitFor();
    await shoot(page, '07-consumer-group');
  });

  await t.test('screenshots of the remaining pages', async () => {
    const token = await server.login();
    await server.api('POST', '/personal-access-tokens', { name: 'ci-token', expiry: 0 }, token);
    for (const [hash, name, wait] of [
      ['/overview', '02-overview', 'chart-messages'],
      ['/cluster', '08-cluster', 'partitions-single-node'],
      [`/streams/${streamId}`, '04-stream', 'topics-table'],
      [`/streams/${streamId}/topics/${topicId}`, '06-topic', 'partitions-table'],
      ['/clients', '09-clients', 'page-title'],
      ['/users', '10-users', 'users-table'],
      ['/tokens', '12-tokens', 'tokens-table'],
      ['/server', '13-server', 'page-title'],
      ['/settings', '14-settings', 'refresh-seconds'],
    ]) {
      if (name === '02-overview') await page.evaluate(() => localStorage.setItem('iggo.refreshMs', '2000'));
      await page.goto(ui(hash));
      await byTest(wait).first().waitFor();
      if (name === '02-overview') {
        // a little traffic so the charts have something to show: 8 bounded batches
        for (let i = 0; i < 8; i++) {
          const lines = Array.from({ length: 20 * (i + 1) }, (_, j) => JSON.stringify({ batch: i, n: j })).join('\n');
          await server.cli(['send', 'orders', 'events'], { input: lines + '\n' });
          await sleep(1500);
        }
        await page.evaluate(() => localStorage.removeItem('iggo.refreshMs'));
      }
      if (name === '12-tokens') assert.match(await byTest('tokens-table').textContent(), /ci-token/);
      await shoot(page, name);
    }
  });

  await t.test('server page: configuration or its "not available" state, snapshot download', async () => {
    await page.goto(ui('/server'));
    await page.locator('[data-testid="config-table"], [data-testid="config-unavailable"]').first().waitFor();
    const [download] = await Promise.all([page.waitForEvent('download', { timeout: 60_000 }), byTest('snapshot').click()]);
    assert.match(download.suggestedFilename(), /\.zip$/);
    const path = await download.path();
    const { readFile } = await import('node:fs/promises');
    const zip = await readFile(path);
    assert.equal(zip.subarray(0, 2).toString('latin1'), 'PK', 'a ZIP archive');
  });

  await t.test('create a user with limited permissions', async () => {
    await page.goto(ui('/users'));
    await byTest('new-user').click();
    await byTest('user-username').fill('viewer');
    await byTest('user-password').fill('viewer-pass');
    await byTest('perm-stream-select').selectOption(String(streamId));
    await byTest('perm-add-stream').click();
    await byTest(`perm-s${streamId}-read_stream`).check();
    await byTest('user-submit').click();
    await byTest('page-title').filter({ hasText: 'viewer' }).waitFor();
    await shoot(page, '11-user');
    const token = await server.login();
    const users = (await server.api('GET', '/users', undefined, token)).body;
    const viewer = users.find((u) => u.username === 'viewer');
    const detail = (await server.api('GET', `/users/${viewer.id}`, undefined, token)).body;
    assert.equal(detail.permissions.global.manage_streams, false);
    assert.equal(detail.permissions.streams[String(streamId)].read_stream, true);
  });

  await t.test('the restricted user sees a restricted view; a 403 is an error, not a logout', async () => {
    await byTest('logout').click();
    await byTest('signin').waitFor();
    await signIn('viewer', 'viewer-pass');
    assert.equal(await byTest('nav-users').count(), 0, 'Users hidden');
    assert.equal(await byTest('nav-clients').count(), 0, 'Clients hidden');
    await byTest('no-permission').waitFor(); // overview without read_servers
    await shoot(page, '15-restricted-overview');
    await page.goto(ui(`/streams/${streamId}`));
    await byTest('topics-table').waitFor();
    assert.equal(await byTest('delete-stream').count(), 0, 'no delete');
    assert.equal(await byTest('new-topic').count(), 0, 'no new topic');
    await page.goto(ui(`/streams/${streamId}/topics/${topicId}/messages`));
    await byTest('messages-table').waitFor();
    assert.equal(await byTest('produce').count(), 0, 'no produce without send_messages');
    // a stream this user has no entry for: the server answers 403
    const token = await server.login();
    const other = (await server.api('GET', '/streams', undefined, token)).body.find((s) => s.name === EVIL);
    await page.goto(ui(`/streams/${other.id}`));
    await byTest('error-panel').filter({ hasText: 'Not allowed' }).waitFor();
    await shoot(page, '16-forbidden');
    assert.equal((await byTest('current-user').textContent()).trim(), 'viewer', 'still signed in after a 403');
  });

  await t.test('delete needs the typed name', async () => {
    await byTest('logout').click();
    await signIn('iggy', 'iggy');
    const token = await server.login();
    const other = (await server.api('GET', '/streams', undefined, token)).body.find((s) => s.name === EVIL);
    await page.goto(ui(`/streams/${other.id}`));
    await byTest('delete-stream').click();
    const confirm = byTest('confirm-button');
    assert.equal(await confirm.isDisabled(), true);
    await byTest('confirm-input').fill('wrong');
    assert.equal(await confirm.isDisabled(), true);
    await byTest('confirm-input').fill(EVIL);
    assert.equal(await confirm.isDisabled(), false);
    await confirm.click();
    await page.waitForFunction(() => location.hash === '#/streams');
    const list = (await server.api('GET', '/streams', undefined, token)).body;
    assert.equal(list.some((s) => s.name === EVIL), false, 'stream deleted');
    assert.deepEqual(dialogs, [], 'no dialog fired');
  });

  await t.test('a stream deleted while its messages are open shows a clear state', async () => {
    const token = await server.login();
    const s = (await server.api('POST', '/streams', { name: 'doomed' }, token)).body;
    const tp = (await server.api('POST', `/streams/${s.id}/topics`, { name: 't', partitions_count: 1, compression_algorithm: 'none', message_expiry: 0, max_topic_size: 0 }, token)).body;
    await page.goto(ui(`/streams/${s.id}/topics/${tp.id}/messages`));
    await byTest('tail-toggle').click();
    await byTest('tail-status').filter({ hasText: 'Live' }).waitFor();
    await server.api('DELETE', `/streams/${s.id}`, undefined, token);
    await byTest('error-panel').filter({ hasText: 'Not found' }).waitFor({ timeout: 10_000 });
    // the same on a page that refreshes on the timer
    const s2 = (await server.api('POST', '/streams', { name: 'doomed-too' }, token)).body;
    await page.goto(ui(`/streams/${s2.id}`));
    await byTest('page-title').filter({ hasText: 'doomed-too' }).waitFor();
    await server.api('DELETE', `/streams/${s2.id}`, undefined, token);
    await byTest('error-panel').filter({ hasText: 'deleted' }).waitFor({ timeout: 15_000 });
  });

  await t.test('an invalid or revoked token leads to sign-in with a message', async () => {
    await page.goto(ui('/overview'));
    await byTest('stats-cards').waitFor();
    await page.evaluate(() => {
      const s = JSON.parse(sessionStorage.getItem('iggo.session'));
      s.token = 'not-a-valid-token';
      sessionStorage.setItem('iggo.session', JSON.stringify(s));
    });
    await page.reload();
    await byTest('signin-error').filter({ hasText: 'no longer valid' }).waitFor();
    await signIn('iggy', 'iggy');
    const jwt = await page.evaluate(() => JSON.parse(sessionStorage.getItem('iggo.session')).token);
    const out = await server.api('DELETE', '/users/logout', undefined, jwt);
    assert.equal(out.status, 204);
    await page.goto(ui('/streams'));
    await byTest('signin-error').waitFor({ timeout: 15_000 });
  });

  await t.test('a stopped server shows "unreachable", not a blank page', async () => {
    await signIn('iggy', 'iggy');
    await page.goto(ui('/overview'));
    await byTest('stats-cards').waitFor();
    await server.stop();
    await byTest('unreachable-banner').filter({ hasText: 'unreachable' }).waitFor({ timeout: 15_000 });
    assert.match(await byTest('refresh-status').textContent(), /unreachable/);
    await shoot(page, '17-unreachable');
  });

  await t.test('dark theme', async () => {
    // short-lived tokens for the refresh step below
    await server.spawn({ IGGY_HTTP_JWT_ACCESS_TOKEN_EXPIRY: '15 s' });
    await signIn('iggy', 'iggy');
    await page.goto(ui(`/streams`));
    await byTest('theme-select').selectOption('dark');
    await byTest('streams-table').waitFor();
    assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), 'dark');
    await shoot(page, '18-streams-dark');
  });

  await t.test('the token is refreshed before it expires', async () => {
    const first = await page.evaluate(() => JSON.parse(sessionStorage.getItem('iggo.session')));
    assert.ok(first.expiry * 1000 - Date.now() <= 16_000, 'server issued a short-lived token');
    await page.waitForFunction((tok) => JSON.parse(sessionStorage.getItem('iggo.session') || '{}').token !== tok, first.token, { timeout: 20_000 });
    await sleep(6000); // past the first token's expiry
    await page.goto(ui('/cluster'));
    await byTest('nodes-table').waitFor();
    assert.equal((await byTest('current-user').textContent()).trim(), 'iggy', 'still signed in');
  });

  await t.test('no uncaught page errors', () => {
    assert.deepEqual(pageErrors, []);
  });
});
