// Unit tests of the topic page's tiered storage figures.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hasTiers, tierTotals, fmtTierTotals, tierColumns } from '../../internal/console/ui/js/pages/topic.js';

const plain = [{ id: 1, size: '1.00 KB' }, { id: 2, size: '0 B' }];
const tiered = [
  { id: 1, size: '10.00 MB', local_size_bytes: 1048576, remote_size_bytes: 10485760, remote_only_size_bytes: 9437184, pending_size_bytes: 0 },
  { id: 2, size: '2.00 MB', local_size_bytes: 2097152, remote_size_bytes: 0, remote_only_size_bytes: 0, pending_size_bytes: 1048576 },
];

test('a topic without tiered storage gets no tier columns or totals', () => {
  assert.equal(hasTiers(plain), false);
  assert.equal(hasTiers([]), false);
  assert.equal(tierTotals(plain), null);
  assert.deepEqual(tierColumns(plain), []);
});

test('tier totals sum the partitions, large values exactly', () => {
  assert.equal(hasTiers(tiered), true);
  assert.deepEqual(tierTotals(tiered), { local: 3145728n, remote: 10485760n, remoteOnly: 9437184n, pending: 1048576n });
  assert.equal(fmtTierTotals(tierTotals(tiered)), '3 MiB local · 10 MiB in the bucket (9 MiB only there) · 1 MiB waiting for upload');
  assert.equal(fmtTierTotals({ local: 5n, remote: 0n, remoteOnly: 0n, pending: 0n }), '5 B local · 0 B in the bucket');
  const big = [{ local_size_bytes: 9007199254740993n, remote_size_bytes: 1, remote_only_size_bytes: 0, pending_size_bytes: 0 }];
  assert.equal(tierTotals(big).local, 9007199254740993n);
});

test('tier columns render and sort bytes', () => {
  const cols = tierColumns(tiered);
  assert.deepEqual(cols.map((c) => c.label), ['Local', 'Remote', 'Pending upload']);
  const [local, remote, pending] = cols;
  assert.equal(local.render(tiered[0]), '1 MiB');
  assert.equal(remote.render(tiered[0]), '10 MiB');
  assert.equal(pending.render(tiered[1]), '1 MiB');
  assert.equal(remote.render({ id: 3 }), '—');
  assert.ok(local.sort(tiered[0]) < local.sort(tiered[1]));
  assert.equal(remote.sort({ id: 3 }), -1n);
});
