// Unit tests of the permission rules, the stats history and config masking.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Perms, emptyPermissions } from '../../internal/console/ui/js/perms.js';
import { StatsHistory } from '../../internal/console/ui/js/chart.js';
import { flattenConfig } from '../../internal/console/ui/js/pages/server.js';
import { decodeJWT } from '../../internal/console/ui/js/api.js';

test('no permissions allow nothing', () => {
  const p = new Perms(null);
  for (const fn of ['serverInfo', 'readUsers', 'manageUsers', 'listStreams', 'createStream']) assert.equal(p[fn](), false, fn);
  assert.equal(p.getStream(1), false);
  assert.equal(p.poll(1, 1), false);
  assert.equal(p.send(1, 1), false);
  assert.equal(new Perms(emptyPermissions()).manageTopic(1, 1), false);
});

test('global flags follow the server rules', () => {
  const p = new Perms({ global: { ...emptyPermissions().global, read_streams: true } });
  assert.equal(p.listStreams(), true);
  assert.equal(p.getTopic(5, 6), true);
  assert.equal(p.poll(5, 6), true, 'read_streams grants poll');
  assert.equal(p.send(5, 6), false);
  assert.equal(p.manageStream(5), false);
  assert.equal(p.createStream(), false);
  const m = new Perms({ global: { manage_servers: true } });
  assert.equal(m.serverInfo(), true);
});

test('stream and topic entries grant only their scope', () => {
  const p = new Perms({ global: {}, streams: { 3: { read_stream: true, topics: { 7: { send_messages: true } } } } });
  assert.equal(p.getStream(3), true);
  assert.equal(p.getStream(4), false);
  assert.equal(p.poll(3, 1), true);
  assert.equal(p.send(3, 1), false);
  assert.equal(p.send(3, 7), true);
  assert.equal(p.manageTopic(3, 7), false);
  assert.equal(p.listStreams(), false);
  assert.equal(p.hasStreamEntries(), true);
});

test('stats history derives rates and survives counter resets', () => {
  const h = new StatsHistory(3);
  const s = (msgs, w, r) => ({ messages_count: msgs, written_bytes: w, read_bytes: r, cpu_usage: 1.5, memory_usage: '2 MiB' });
  h.add(s(0, '0 B', '0 B'), 1000);
  h.add(s(100, '10 KiB', '1 KiB'), 2000);
  h.add(s(300, '30 KiB', '1 KiB'), 4000);
  assert.deepEqual(h.series('msgRate'), [[2000, 100], [4000, 100]]);
  assert.deepEqual(h.series('inRate'), [[2000, 10240], [4000, 10240]]);
  assert.deepEqual(h.series('outRate'), [[2000, 1024], [4000, 0]]);
  assert.deepEqual(h.series('mem')[0], [1000, 2 * 1024 * 1024]);
  h.add(s(5, '1 KiB', '0 B'), 5000); // restart: counters went down
  assert.equal(h.points.length, 3, 'bounded');
  assert.equal(h.points[2].msgRate, null);
});

test('config flattening masks secrets', () => {
  const rows = Object.fromEntries(flattenConfig({ http: { address: '127.0.0.1:3000', jwt: { encoding_secret: 'hunter2', access_token_expiry: '1 h' } }, root: { password: 'x', username: 'iggy' }, tls: { key_file: 'k.pem', cert_file: 'c.pem' }, list: ['a', 1] }));
  assert.equal(rows['http.address'], '127.0.0.1:3000');
  assert.notEqual(rows['http.jwt.encoding_secret'], 'hunter2');
  assert.notEqual(rows['root.password'], 'x');
  assert.equal(rows['root.username'], 'iggy');
  assert.equal(rows['tls.key_file'], 'k.pem');
  assert.equal(rows.list, '["a",1]');
});

test('JWT payload decoding (base64url, no padding)', () => {
  const part = Buffer.from(JSON.stringify({ sub: '12', exp: 99 })).toString('base64url');
  assert.deepEqual(decodeJWT(`x.${part}.y`), { sub: '12', exp: 99 });
  assert.equal(decodeJWT('garbage'), null);
});

test('partition rows name the leader and flag under-replicated partitions', async () => {
  const { partitionRows } = await import('../../internal/console/ui/js/pages/cluster.js');
  const rows = partitionRows({
    nodes: [{ replica_id: 0, name: 'node-a' }, { replica_id: 2, name: 'node-c' }],
    partitions: [
      { stream: 's', stream_id: 1, topic: 't', topic_id: 2, partition: 0, replicas: [0, 1, 2], leader: 2, caught_up: [0, 2] },
      { stream: 's', stream_id: 1, topic: 't', topic_id: 2, partition: 1, replicas: [0, 1, 2], leader: null, caught_up: null },
      { stream: 's', stream_id: 1, topic: 't', topic_id: 2, partition: 2, replicas: [1], leader: 1, caught_up: [1] },
    ],
  });
  assert.deepEqual(rows.map((r) => [r.partition, r.replicas, r.leader, r.caught_up, r.under]), [
    [0, '0, 1, 2', '2 · node-c', '0, 2', true],
    [1, '0, 1, 2', null, null, null],
    [2, '1', '1', '1', false],
  ]);
  assert.deepEqual(partitionRows({}), []);
});
