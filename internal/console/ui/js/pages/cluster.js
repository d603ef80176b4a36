// Cluster: GET /cluster/metadata (name, nodes, roles, status, endpoints)
// and GET /cluster/partitions (replicas, leader and caught-up replicas of
// every partition; an Iggo extension served in cluster mode only).

import { h, mount } from '../dom.js';
import { pageHead, table, badge, kv, empty, notice, errorPanel } from '../ui.js';
import { ApiError } from '../api.js';

/** FeatureUnavailable: the server is a single node, not a cluster member. */
const FEATURE_UNAVAILABLE = 5;

/** Renders replica ids as "0, 1, 2" ("—" for none). */
function ids(list) {
  return list && list.length ? list.join(', ') : '—';
}

/**
 * Rows of the partitions table from a GET /cluster/partitions reply:
 * names for the leader (from the node list), replica lists as text, and
 * whether fewer replicas than the replica set are known to be caught up
 * (under: true/false; null when the answering node cannot tell).
 */
export function partitionRows(m) {
  const names = new Map((m.nodes || []).map((n) => [n.replica_id, n.name]));
  return (m.partitions || []).map((p) => ({
    stream: p.stream,
    topic: p.topic,
    stream_id: p.stream_id,
    topic_id: p.topic_id,
    partition: p.partition,
    replicas: ids(p.replicas),
    leader: p.leader === null || p.leader === undefined ? null : `${p.leader}${names.has(p.leader) ? ' · ' + names.get(p.leader) : ''}`,
    caught_up: p.caught_up === null || p.caught_up === undefined ? null : ids(p.caught_up),
    under: p.caught_up === null || p.caught_up === undefined ? null : p.caught_up.length < (p.replicas || []).length,
  }));
}

/** Builds the partitions panel, or a notice when the server is no cluster. */
async function partitionsPanel(ctx) {
  let m;
  try {
    m = await ctx.api.get('/cluster/partitions');
  } catch (e) {
    if (e instanceof ApiError && e.id === FEATURE_UNAVAILABLE) {
      return notice('Partitions', 'This server is a single node: every partition is here. Replicas and leaders are shown in cluster mode.', 'partitions-single-node');
    }
    return errorPanel(e);
  }
  const rows = partitionRows(m);
  return h('div', { class: 'panel' }, h('h2', 'Partitions'),
    rows.length ? table([
      { key: 'stream', label: 'Stream' },
      { key: 'topic', label: 'Topic' },
      { key: 'partition', label: 'Partition', num: true },
      { key: 'replicas', label: 'Replicas' },
      { key: 'leader', label: 'Leader', render: (r) => (r.leader === null ? badge('none', 'warn') : r.leader) },
      { key: 'caught_up', label: 'Caught up', render: (r) => (r.caught_up === null ? h('span', { title: 'Only the partition\'s leader knows' }, '?') : r.under ? badge(r.caught_up, 'warn') : r.caught_up) },
    ], rows, { testid: 'partitions-table', onRow: (r) => ctx.go(`/streams/${r.stream_id}/topics/${r.topic_id}`) })
      : empty('No partition you may see.'));
}

/** Builds the cluster page. */
export function clusterPage(ctx) {
  const el = h('div');
  const body = h('div');
  mount(el, pageHead('Cluster', 'Nodes, roles, the leader, and where each partition lives'), body);
  return {
    el,
    async load() {
      const [m, parts] = await Promise.all([ctx.api.get('/cluster/metadata'), partitionsPanel(ctx)]);
      const nodes = m.nodes || [];
      const leader = nodes.find((n) => n.role === 'leader');
      mount(body,
        h('div', { class: 'panel' }, kv([
          ['Cluster', m.name],
          ['Nodes', String(nodes.length)],
          ['Leader', leader ? leader.name : 'none elected'],
        ], 'cluster-kv')),
        nodes.length ? table([
          { key: 'name', label: 'Node' },
          { key: 'role', label: 'Role', render: (n) => badge(n.role, n.role === 'leader' ? 'ok' : '') },
          { key: 'status', label: 'Status', render: (n) => badge(n.status, n.status === 'healthy' ? 'ok' : n.status === 'unreachable' ? 'bad' : 'warn') },
          { key: 'ip', label: 'Address' },
          { key: 'endpoints', label: 'Ports', render: (n) => Object.entries(n.endpoints || {}).map(([k, v]) => `${k} ${v}`).join(', ') },
        ], nodes, { testid: 'nodes-table' }) : empty('The server reports no nodes.'),
        parts);
    },
  };
}
