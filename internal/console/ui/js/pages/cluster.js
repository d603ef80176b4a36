// Cluster: GET /cluster/metadata (name, nodes, roles, status, endpoints).

import { h, mount } from '../dom.js';
import { pageHead, table, badge, kv, empty } from '../ui.js';

/** Builds the cluster page. */
export function clusterPage(ctx) {
  const el = h('div');
  const body = h('div');
  mount(el, pageHead('Cluster', 'Nodes, roles and the leader'), body);
  return {
    el,
    async load() {
      const m = await ctx.api.get('/cluster/metadata');
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
        ], nodes, { testid: 'nodes-table' }) : empty('The server reports no nodes.'));
    },
  };
}
