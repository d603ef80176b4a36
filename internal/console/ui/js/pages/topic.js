// One topic: its settings and options, partitions (segments, offsets) with
// add/remove and segment deletion, consumer groups, purge and delete. With
// tiered storage on, the API's topic document also splits each partition's
// bytes between local disk and the bucket (local_size_bytes,
// remote_size_bytes, ...): the page then shows them.

import { h, mount } from '../dom.js';
import { pageHead, table, empty, modal, field, showFormError, toast, confirmTyped, crumbs, actionButton, kv, badge } from '../ui.js';
import { fmtInt, fmtTime, fmtExpiry, fmtMaxSize, fmtBytes, prettySize, sizeStringToBytes } from '../format.js';
import { topicDialog } from './topicform.js';
import { seg } from '../api.js';
import { toBig } from '../bigjson.js';

/** Whether the partitions carry the tiered storage fields of the API. */
export function hasTiers(parts) {
  return parts.some((p) => p.local_size_bytes !== undefined && p.local_size_bytes !== null);
}

/**
 * Sums the tier fields of the partitions (BigInt): local, remote,
 * remote_only and pending bytes; null when the API sent none.
 */
export function tierTotals(parts) {
  if (!hasTiers(parts)) return null;
  const sum = (k) => parts.reduce((acc, p) => acc + (toBig(p[k]) ?? 0n), 0n);
  return { local: sum('local_size_bytes'), remote: sum('remote_size_bytes'), remoteOnly: sum('remote_only_size_bytes'), pending: sum('pending_size_bytes') };
}

/** One line on where a topic's bytes are, from tierTotals. */
export function fmtTierTotals(t) {
  let s = `${fmtBytes(t.local)} local · ${fmtBytes(t.remote)} in the bucket`;
  if (t.remoteOnly > 0n) s += ` (${fmtBytes(t.remoteOnly)} only there)`;
  if (t.pending > 0n) s += ` · ${fmtBytes(t.pending)} waiting for upload`;
  return s;
}

/** The partitions table's tier columns: none without tiered storage. */
export function tierColumns(parts) {
  if (!hasTiers(parts)) return [];
  const bytes = (k) => (p) => (p[k] === undefined || p[k] === null ? '—' : fmtBytes(p[k]));
  const num = (k) => (p) => toBig(p[k]) ?? -1n;
  return [
    { key: 'local_size_bytes', label: 'Local', num: true, render: bytes('local_size_bytes'), sort: num('local_size_bytes') },
    { key: 'remote_size_bytes', label: 'Remote', num: true, render: bytes('remote_size_bytes'), sort: num('remote_size_bytes') },
    { key: 'pending_size_bytes', label: 'Pending upload', num: true, render: bytes('pending_size_bytes'), sort: num('pending_size_bytes') },
  ];
}

function countDialog(title, label, max, submitLabel, onSubmit) {
  return modal(title, (close) => {
    const n = h('input', { name: 'count', type: 'number', min: 1, max, value: '1', required: true, 'data-testid': 'count-input' });
    const submit = h('button', { class: 'primary', type: 'submit', 'data-testid': 'count-submit' }, submitLabel);
    const form = h('form', { class: 'form', onsubmit: async (ev) => {
      ev.preventDefault();
      submit.disabled = true;
      try {
        const v = Number(n.value);
        if (!Number.isInteger(v) || v < 1 || v > max) throw new Error(`Enter a count from 1 to ${max}`);
        close(await onSubmit(v));
      } catch (e) {
        showFormError(form, e);
      } finally {
        submit.disabled = false;
      }
    } }, field(label, n), h('div', { class: 'actions' }, h('button', { type: 'button', onclick: () => close(null) }, 'Cancel'), submit));
    return form;
  });
}

/** Builds the topic page. */
export function topicPage(ctx, params) {
  const el = h('div');
  const base = `/streams/${seg(params.s)}/topics/${seg(params.t)}`;
  return {
    el,
    async load() {
      const [stream, t] = await Promise.all([ctx.api.get(`/streams/${seg(params.s)}`), ctx.api.get(base)]);
      const sid = stream.id;
      const path = `/streams/${sid}/topics/${t.id}`;
      const manage = ctx.perms.manageTopic(sid, t.id);
      const parts = t.partitions || [];
      let groups = null;
      let groupsErr = null;
      if (ctx.perms.groups(sid, t.id)) {
        try {
          groups = await ctx.api.get(`${path}/consumer-groups`);
        } catch (e) {
          groupsErr = e;
        }
      }
      const actions = [
        ctx.perms.poll(sid, t.id) || ctx.perms.send(sid, t.id) ? h('a', { class: 'button primary', href: `#${path}/messages`, 'data-testid': 'browse-messages' }, 'Messages') : null,
        manage ? h('button', { type: 'button', 'data-testid': 'edit-topic', onclick: async () => { if ((await topicDialog(ctx, sid, t)) !== null) ctx.reload(); } }, 'Edit') : null,
        manage ? actionButton('Purge', async () => {
          if (await confirmTyped({ title: `Purge topic ${t.name}`, message: `All ${fmtInt(t.messages_count)} messages and consumer offsets are deleted; offsets restart at 0.`, word: t.name, action: 'Purge' })) {
            await ctx.api.del(`${path}/purge`);
            toast('Topic purged', 'ok');
            ctx.reload();
          }
        }, { 'data-testid': 'purge-topic' }) : null,
        manage ? actionButton('Delete', async () => {
          if (await confirmTyped({ title: `Delete topic ${t.name}`, message: `This deletes ${parts.length} partitions, ${fmtInt(t.messages_count)} messages, consumer groups and offsets for good.`, word: t.name })) {
            await ctx.api.del(path);
            toast(`Topic ${t.name} deleted`, 'ok');
            ctx.go(`/streams/${sid}`);
          }
        }, { class: 'danger', 'data-testid': 'delete-topic' }) : null,
      ];
      const partActions = manage ? h('div', { class: 'page-actions' },
        h('button', { type: 'button', 'data-testid': 'add-partitions', onclick: async () => {
          const ok = await countDialog('Add partitions', 'Partitions to add', 1000, 'Add', async (n) => { await ctx.api.post(`${path}/partitions`, { partitions_count: n }); return true; });
          if (ok) { toast('Partitions added', 'ok'); ctx.reload(); }
        } }, 'Add partitions'),
        parts.length ? actionButton('Remove partitions', async () => {
          const n = await countDialog('Remove partitions', 'Partitions to remove (the highest ids go, with their messages)', Math.min(1000, parts.length), 'Continue', async (v) => v);
          if (n && await confirmTyped({ title: `Remove ${n} partitions`, message: `Partitions ${parts.slice(-n).map((p) => p.id).join(', ')} and all their messages are deleted.`, word: `${t.name}/partitions`, action: 'Remove' })) {
            await ctx.api.del(`${path}/partitions`, { partitions_count: n });
            toast('Partitions removed', 'ok');
            ctx.reload();
          }
        }) : null) : null;
      const deleteSegments = (p) => actionButton('Delete segments', async () => {
        const n = await countDialog(`Delete segments of partition ${p.id}`, `Oldest segments to delete (of ${p.segments_count})`, Math.max(1, Number(p.segments_count)), 'Continue', async (v) => v);
        if (n && await confirmTyped({ title: `Delete ${n} segments`, message: `The ${n} oldest segments of partition ${p.id} and their messages are deleted.`, word: String(p.id), action: 'Delete' })) {
          await ctx.api.del(`${path}/partitions/${p.id}`, { segments_count: n });
          toast('Segments deleted', 'ok');
          ctx.reload();
        }
      }, { class: 'small' });
      const tiers = tierTotals(parts);
      const opts = Object.entries(t.options || {});
      const optsOpen = !!el.querySelector('details.opts')?.open;
      mount(el,
        crumbs([['Streams', '/streams'], [stream.name, `/streams/${sid}`], [t.name, null]]),
        pageHead(t.name, `Topic ${t.id} · ${prettySize(t.size)} · ${fmtInt(t.messages_count)} messages`, ...actions),
        h('div', { class: 'panel' }, kv([
          ['Partitions', String(t.partitions_count)],
          ['Compression', String(t.compression_algorithm)],
          ['Message expiry', fmtExpiry(t.message_expiry)],
          ['Max size', fmtMaxSize(t.max_topic_size)],
          tiers ? ['Tiered storage', fmtTierTotals(tiers)] : null,
          ['Created', fmtTime(t.created_at)],
        ], 'topic-kv'),
        opts.length ? h('details', { class: 'opts', open: optsOpen }, h('summary', 'All options'), table([
          { key: 'k', label: 'Option', render: (r) => h('code', r.k) }, { key: 'v', label: 'Value' }, { key: 'e', label: 'Source', render: (r) => (r.e ? badge('set') : badge('default', 'muted')) }],
        opts.map(([k, v]) => ({ k, v: String(v.value), e: v.explicit })), { testid: 'options-table' })) : null),
        h('div', { class: 'section-head' }, h('h2', 'Partitions'), partActions),
        parts.length ? table([
          { key: 'id', label: 'Id', num: true },
          { key: 'current_offset', label: 'Current offset', num: true, render: (p) => fmtInt(p.current_offset) },
          { key: 'messages_count', label: 'Messages', num: true, render: (p) => fmtInt(p.messages_count) },
          { key: 'segments_count', label: 'Segments', num: true },
          { key: 'size', label: 'Size', num: true, render: (x) => prettySize(x.size), sort: (x) => sizeStringToBytes(x.size) },
          ...tierColumns(parts),
          { key: 'created_at', label: 'Created', render: (p) => fmtTime(p.created_at) },
          { key: 'act', label: '', render: (p) => h('span', { class: 'row-actions' },
            h('a', { href: `#${path}/messages?partition=${p.id}` }, 'Browse'), manage ? deleteSegments(p) : null) },
        ], parts, { testid: 'partitions-table', sortKey: 'id' }) : empty('No partitions: nothing can be sent to this topic.'),
        h('div', { class: 'section-head' }, h('h2', 'Consumer groups'),
          groups !== null && ctx.perms.groups(sid, t.id) ? h('button', { type: 'button', 'data-testid': 'new-group', onclick: async () => {
            const g = await modal('New consumer group', (close) => {
              const name = h('input', { name: 'name', required: true, maxlength: 255, 'data-testid': 'group-name' });
              const form = h('form', { class: 'form', onsubmit: async (ev) => {
                ev.preventDefault();
                try { close(await ctx.api.post(`${path}/consumer-groups`, { name: name.value })); } catch (e) { showFormError(form, e); }
              } }, field('Name', name), h('div', { class: 'actions' }, h('button', { type: 'button', onclick: () => close(null) }, 'Cancel'), h('button', { class: 'primary', type: 'submit' }, 'Create')));
              return form;
            });
            if (g) { toast(`Group ${g.name} created`, 'ok'); ctx.reload(); }
          } }, 'New group') : null),
        groupsErr ? h('p', { class: 'empty' }, 'Consumer groups could not be read: ' + groupsErr.message) :
          groups === null ? empty('Your user may not read this topic\'s consumer groups.') :
            groups.length ? table([
              { key: 'id', label: 'Id', num: true },
              { key: 'name', label: 'Group', render: (g) => h('a', { href: `#${path}/groups/${g.id}`, class: 'name' }, g.name) },
              { key: 'members_count', label: 'Members', num: true },
              { key: 'partitions_count', label: 'Partitions', num: true },
            ], groups, { onRow: (g) => ctx.go(`${path}/groups/${g.id}`), testid: 'groups-table' }) : empty('No consumer groups.'));
    },
  };
}
