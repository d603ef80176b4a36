// Streams: the list (GET /streams) with create, and one stream's page
// (GET /streams/{id}) with its topics, rename, purge and delete.

import { h, mount } from '../dom.js';
import { pageHead, table, empty, modal, field, showFormError, toast, confirmTyped, crumbs, actionButton, notice } from '../ui.js';
import { fmtInt, fmtTime, fmtExpiry, fmtMaxSize, prettySize, sizeStringToBytes } from '../format.js';
import { topicDialog } from './topicform.js';
import { seg } from '../api.js';

function nameDialog(title, current, submitLabel, onSubmit) {
  return modal(title, (close) => {
    const name = h('input', { name: 'name', required: true, maxlength: 255, value: current || '', 'data-testid': 'stream-name' });
    const submit = h('button', { class: 'primary', type: 'submit', 'data-testid': 'stream-submit' }, submitLabel);
    const form = h('form', { class: 'form', onsubmit: async (ev) => {
      ev.preventDefault();
      submit.disabled = true;
      try {
        close(await onSubmit(name.value));
      } catch (e) {
        showFormError(form, e);
      } finally {
        submit.disabled = false;
      }
    } }, field('Name', name, '1 .. 255 bytes'), h('div', { class: 'actions' }, h('button', { type: 'button', onclick: () => close(null) }, 'Cancel'), submit));
    return form;
  });
}

/** Builds the streams list page. */
export function streamsPage(ctx) {
  const el = h('div');
  const filter = h('input', { type: 'search', placeholder: 'Filter by name', 'aria-label': 'Filter streams', 'data-testid': 'stream-filter' });
  const body = h('div');
  let last = [];
  const create = ctx.perms.createStream() ? h('button', { class: 'primary', type: 'button', 'data-testid': 'new-stream', onclick: async () => {
    const s = await nameDialog('New stream', '', 'Create stream', (name) => ctx.api.post('/streams', { name }));
    if (s) {
      toast(`Stream ${s.name} created`, 'ok');
      ctx.go(`/streams/${s.id}`);
    }
  } }, 'New stream') : null;
  const draw = () => {
    const f = filter.value.toLowerCase();
    const rows = last.filter((s) => String(s.name).toLowerCase().includes(f));
    mount(body, rows.length ? table([
      { key: 'id', label: 'Id', num: true },
      { key: 'name', label: 'Name', render: (s) => h('a', { href: `#/streams/${s.id}`, class: 'name' }, s.name) },
      { key: 'topics_count', label: 'Topics', num: true },
      { key: 'messages_count', label: 'Messages', num: true, render: (s) => fmtInt(s.messages_count) },
      { key: 'size', label: 'Size', num: true, render: (x) => prettySize(x.size), sort: (x) => sizeStringToBytes(x.size) },
      { key: 'created_at', label: 'Created', render: (s) => fmtTime(s.created_at) },
    ], rows, { onRow: (s) => ctx.go(`/streams/${s.id}`), testid: 'streams-table', sortKey: 'id' }) : empty(last.length ? 'No stream matches the filter.' : 'No streams yet.'));
  };
  filter.addEventListener('input', draw);
  mount(el, pageHead('Streams', null, filter, create), body);
  return {
    el,
    async load() {
      if (!ctx.perms.listStreams()) {
        mount(body, notice('Listing not allowed', 'Your user may not list all streams (read_streams). Open a stream you have access to by its id or name:', 'no-permission'),
          h('form', { class: 'inline', onsubmit: (ev) => { ev.preventDefault(); const v = ev.target.elements.sid.value.trim(); if (v) ctx.go(`/streams/${seg(v)}`); } },
            h('input', { name: 'sid', placeholder: 'stream id or name', 'data-testid': 'open-stream' }), h('button', { type: 'submit' }, 'Open')));
        return;
      }
      last = await ctx.api.get('/streams');
      draw();
    },
  };
}

/** Builds one stream's page. */
export function streamPage(ctx, params) {
  const el = h('div');
  const sid = seg(params.s);
  return {
    el,
    async load() {
      const s = await ctx.api.get(`/streams/${sid}`);
      const manage = ctx.perms.manageStream(s.id);
      const canTopic = ctx.perms.createTopic(s.id);
      const topics = s.topics || [];
      const partitions = topics.reduce((a, t) => a + Number(t.partitions_count), 0);
      const actions = [
        canTopic ? h('button', { class: 'primary', type: 'button', 'data-testid': 'new-topic', onclick: async () => {
          const id = await topicDialog(ctx, s.id, null);
          if (id !== null) ctx.go(`/streams/${s.id}/topics/${id}`);
        } }, 'New topic') : null,
        manage ? h('button', { type: 'button', 'data-testid': 'rename-stream', onclick: async () => {
          const ok = await nameDialog(`Rename ${s.name}`, s.name, 'Rename', async (name) => { await ctx.api.put(`/streams/${s.id}`, { name }); return true; });
          if (ok) { toast('Stream renamed', 'ok'); ctx.reload(); }
        } }, 'Rename') : null,
        manage ? actionButton('Purge', async () => {
          if (await confirmTyped({ title: `Purge stream ${s.name}`, message: `All ${fmtInt(s.messages_count)} messages of its ${topics.length} topics are deleted and offsets restart at 0. Topics and groups stay.`, word: s.name, action: 'Purge' })) {
            await ctx.api.del(`/streams/${s.id}/purge`);
            toast('Stream purged', 'ok');
            ctx.reload();
          }
        }, { 'data-testid': 'purge-stream' }) : null,
        manage ? actionButton('Delete', async () => {
          if (await confirmTyped({ title: `Delete stream ${s.name}`, message: `This deletes ${topics.length} topics, ${partitions} partitions and ${fmtInt(s.messages_count)} messages for good.`, word: s.name })) {
            await ctx.api.del(`/streams/${s.id}`);
            toast(`Stream ${s.name} deleted`, 'ok');
            ctx.go('/streams');
          }
        }, { class: 'danger', 'data-testid': 'delete-stream' }) : null,
      ];
      mount(el,
        crumbs([['Streams', '/streams'], [s.name, null]]),
        pageHead(s.name, `Stream ${s.id} · ${prettySize(s.size)} · ${fmtInt(s.messages_count)} messages · created ${fmtTime(s.created_at)}`, ...actions),
        topics.length ? table([
          { key: 'id', label: 'Id', num: true },
          { key: 'name', label: 'Topic', render: (t) => h('a', { href: `#/streams/${s.id}/topics/${t.id}`, class: 'name' }, t.name) },
          { key: 'partitions_count', label: 'Partitions', num: true },
          { key: 'messages_count', label: 'Messages', num: true, render: (t) => fmtInt(t.messages_count) },
          { key: 'size', label: 'Size', num: true, render: (x) => prettySize(x.size), sort: (x) => sizeStringToBytes(x.size) },
          { key: 'message_expiry', label: 'Expiry', render: (t) => fmtExpiry(t.message_expiry) },
          { key: 'max_topic_size', label: 'Max size', render: (t) => fmtMaxSize(t.max_topic_size) },
          { key: 'created_at', label: 'Created', render: (t) => fmtTime(t.created_at) },
        ], topics, { onRow: (t) => ctx.go(`/streams/${s.id}/topics/${t.id}`), testid: 'topics-table', sortKey: 'id' }) : empty('This stream has no topics.'));
    },
  };
}
