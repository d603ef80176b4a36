// One consumer group: members and their assigned partitions, committed
// offsets and lag per partition, offset reset, delete; plus an offsets
// inspector for any single consumer id on the same topic.

import { h, mount } from '../dom.js';
import { pageHead, table, empty, crumbs, actionButton, confirmTyped, toast, field } from '../ui.js';
import { seg } from '../api.js';
import { offsetsPanel } from './offsets.js';

/** Builds the consumer group page. */
export function groupPage(ctx, params) {
  const el = h('div');
  const tpath = `/streams/${seg(params.s)}/topics/${seg(params.t)}`;
  const consumerBox = h('div');
  const consumerInput = h('input', { name: 'consumer', placeholder: 'consumer id, e.g. 1', 'data-testid': 'consumer-id' });
  let consumerPanel = null;
  return {
    el,
    async load() {
      const [stream, topic, g] = await Promise.all([
        ctx.api.get(`/streams/${seg(params.s)}`), ctx.api.get(tpath), ctx.api.get(`${tpath}/consumer-groups/${seg(params.g)}`)]);
      const path = `/streams/${stream.id}/topics/${topic.id}`;
      const owner = new Map();
      for (const m of g.members || []) for (const p of m.partitions || []) owner.set(Number(p), m.id);
      const canWrite = ctx.perms.offsets(stream.id, topic.id);
      const groupOffsets = offsetsPanel(ctx, path, topic.partitions || [], { kind: 'consumer_group', id: g.id }, { canWrite, onChange: () => ctx.reload() });
      if (!consumerPanel) {
        const form = h('form', { class: 'inline', onsubmit: async (ev) => {
          ev.preventDefault();
          const id = consumerInput.value.trim();
          if (!id) return;
          const cid = /^[0-9]+$/.test(id) ? Number(id) : id;
          consumerPanel = offsetsPanel(ctx, path, topic.partitions || [], { kind: 'consumer', id: cid }, { canWrite, onChange: () => consumerPanel.load() });
          mount(consumerBox, form, consumerPanel.el);
          await consumerPanel.load().catch((e) => mount(consumerBox, form, h('p', { class: 'empty' }, e.message)));
        } }, field('Consumer', consumerInput), h('button', { type: 'submit', 'data-testid': 'consumer-show' }, 'Show offsets'));
        mount(consumerBox, form);
      }
      mount(el,
        crumbs([['Streams', '/streams'], [stream.name, `/streams/${stream.id}`], [topic.name, path], [g.name, null]]),
        pageHead(g.name, `Consumer group ${g.id} · ${g.members_count} members · ${g.partitions_count} partitions`,
          ctx.perms.groups(stream.id, topic.id) ? actionButton('Delete', async () => {
            if (await confirmTyped({ title: `Delete group ${g.name}`, message: 'Members are removed from the group and its stored offsets are lost.', word: g.name })) {
              await ctx.api.del(`${path}/consumer-groups/${g.id}`);
              toast('Group deleted', 'ok');
              ctx.go(path);
            }
          }, { class: 'danger', 'data-testid': 'delete-group' }) : null),
        h('h2', 'Members'),
        (g.members || []).length ? table([
          { key: 'id', label: 'Member (client id)', num: true },
          { key: 'partitions_count', label: 'Partitions', num: true },
          { key: 'partitions', label: 'Assigned', render: (m) => (m.partitions || []).join(', ') || 'none' },
        ], g.members, { testid: 'members-table' }) : empty('No member is connected. Members join over a binary transport.'),
        h('h2', 'Assignment'),
        (topic.partitions || []).length ? table([
          { key: 'id', label: 'Partition', num: true },
          { key: 'owner', label: 'Member', render: (p) => (owner.has(Number(p.id)) ? String(owner.get(Number(p.id))) : 'unassigned') },
        ], topic.partitions, { testid: 'assignment-table' }) : empty('The topic has no partitions.'),
        h('h2', 'Committed offsets and lag'), groupOffsets.el,
        h('h2', 'Offsets of a single consumer'), consumerBox);
      await groupOffsets.load();
    },
  };
}
