// End-to-end test of the console's cluster page against a local
// three-node cluster (iggo cluster start --http): the partitions table
// lists every partition with its replicas, leader and caught-up replicas.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Cluster, launch, shoot, sleep } from './harness.js';

let cluster;
let browser;
let page;
const pageErrors = [];

before(async () => {
  cluster = await Cluster.start();
  browser = await launch();
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  page = await context.newPage();
  page.on('pageerror', (e) => pageErrors.push(String(e)));
});

after(async () => {
  if (browser) await browser.close();
  if (cluster) await cluster.cleanup();
});

test('the cluster page shows where each partition lives', async () => {
  const token = await cluster.login();
  const s = await cluster.api('POST', '/streams', { name: 'orders' }, token);
  assert.equal(s.status, 200, JSON.stringify(s.body));
  const tp = await cluster.api('POST', `/streams/${s.body.id}/topics`, { name: 'events', partitions_count: 3, compression_algorithm: 'none', message_expiry: 0, max_topic_size: 0 }, token);
  assert.equal(tp.status, 200, JSON.stringify(tp.body));

  const byTest = (id) => page.getByTestId(id);
  await page.goto(`${cluster.base}/ui/#/sign-in`);
  await byTest('username').fill('iggy');
  await byTest('password').fill('iggy');
  await byTest('signin').click();
  await byTest('current-user').filter({ hasText: 'iggy' }).waitFor();

  // Leaders of a topic created a moment ago may still be elected: reload
  // until every row names one.
  let rows = [];
  for (const deadline = Date.now() + 20_000; ;) {
    await page.goto(`${cluster.base}/ui/#/cluster`);
    await byTest('partitions-table').waitFor();
    rows = await byTest('partitions-table').locator('tbody tr').allTextContents();
    if (rows.length === 3 && rows.every((r) => r.includes('· node'))) break;
    if (Date.now() > deadline) assert.fail(`partitions table: ${JSON.stringify(rows)}`);
    await sleep(500);
  }
  for (const [i, r] of rows.entries()) {
    assert.match(r, /orders/);
    assert.match(r, /events/);
    assert.match(r, new RegExp(`${i}`));
    // Every partition is on all three nodes, its preferred leader first.
    const replicas = r.match(/([0-2]), ([0-2]), ([0-2])/);
    assert.ok(replicas, `replicas in ${r}`);
    assert.deepEqual(replicas.slice(1).sort(), ['0', '1', '2'], 'replicas');
  }
  assert.equal(await byTest('nodes-table').locator('tbody tr').count(), 3);
  await shoot(page, '19-cluster-partitions');
  assert.deepEqual(pageErrors, []);
});
