// Connected clients: GET /clients, with the consumer groups of one client
// from GET /clients/{id}.

import { h, mount } from '../dom.js';
import { pageHead, table, empty, modal, kv, toastError, notice } from '../ui.js';

/** Builds the clients page. */
export function clientsPage(ctx) {
  const el = h('div');
  const body = h('div');
  mount(el, pageHead('Connected clients', 'Binary connections (TCP, QUIC, WebSocket); HTTP requests hold no connection'), body);
  if (!ctx.perms.serverInfo()) {
    mount(body, notice('Not allowed', 'Listing clients needs the read_servers or manage_servers permission.', 'no-permission'));
    return { el };
  }
  const show = async (c) => {
    try {
      const d = await ctx.api.get(`/clients/${c.client_id}`);
      await modal(`Client ${d.client_id}`, () => h('div',
        kv([['Address', d.address], ['Transport', d.transport], ['User id', d.user_id === null ? 'not signed in' : String(d.user_id)], ['Consumer groups', String(d.consumer_groups_count)]]),
        (d.consumer_groups || []).length ? table([
          { key: 'stream_id', label: 'Stream', num: true }, { key: 'topic_id', label: 'Topic', num: true }, { key: 'group_id', label: 'Group', num: true }],
        d.consumer_groups, { onRow: (g) => ctx.go(`/streams/${g.stream_id}/topics/${g.topic_id}/groups/${g.group_id}`) }) : empty('Member of no consumer group.')));
    } catch (e) {
      toastError(e);
    }
  };
  return {
    el,
    async load() {
      const list = await ctx.api.get('/clients');
      mount(body, list.length ? table([
        { key: 'client_id', label: 'Id', num: true },
        { key: 'address', label: 'Address' },
        { key: 'transport', label: 'Transport' },
        { key: 'user_id', label: 'User', render: (c) => (c.user_id === null || c.user_id === undefined ? 'not signed in' : String(c.user_id)) },
        { key: 'consumer_groups_count', label: 'Groups', num: true },
      ], list, { onRow: show, testid: 'clients-table', sortKey: 'client_id' }) : empty('No client is connected over a binary transport.'));
    },
  };
}
