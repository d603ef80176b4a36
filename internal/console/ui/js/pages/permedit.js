// Permission editor: the 10 global flags, per-stream entries with their 6
// flags and per-topic entries with their 4 flags, in the API's shape.
// A global flag that already grants a stream flag shows that flag ticked and
// locked and is stored ticked, as the reference console does.

import { h, mount } from '../dom.js';
import { GLOBAL_FLAGS, STREAM_FLAGS, TOPIC_FLAGS } from '../perms.js';

const label = (f) => f.replace(/_/g, ' ');

/** Global flags that imply a stream flag. */
const IMPLIED = {
  manage_stream: ['manage_streams'],
  read_stream: ['manage_streams', 'read_streams'],
  manage_topics: ['manage_streams', 'manage_topics'],
  read_topics: ['manage_streams', 'read_streams', 'manage_topics', 'read_topics'],
  poll_messages: ['poll_messages'],
  send_messages: ['send_messages'],
};

/**
 * Builds the editor. streams: [{id, name}] known streams (may be empty when
 * the editor's user cannot list them; ids can then be typed).
 * loadTopics(streamId) -> Promise<[{id, name}]>.
 * Returns {el, value()}.
 */
export function permissionEditor(initial, streams, loadTopics) {
  const init = initial || { global: {}, streams: null };
  const g = {};
  const globalBox = h('fieldset', { class: 'flags' }, h('legend', 'Global'), GLOBAL_FLAGS.map((f) => {
    g[f] = h('input', { type: 'checkbox', checked: !!(init.global && init.global[f]), 'data-testid': 'perm-' + f });
    return h('label', { class: 'check' }, g[f], ' ' + label(f));
  }));
  const entries = []; // {id, flags:{}, topics:[{id, flags}] , el}
  const list = h('div', { class: 'stream-perms' });
  const streamName = (id) => {
    const s = streams.find((x) => String(x.id) === String(id));
    return s ? `${s.name} (${id})` : `stream ${id}`;
  };

  const syncLocks = () => {
    for (const e of entries) {
      for (const f of STREAM_FLAGS) {
        const implied = IMPLIED[f].some((gf) => g[gf].checked);
        e.flags[f].disabled = implied;
        if (implied) e.flags[f].checked = true;
      }
    }
  };
  for (const f of GLOBAL_FLAGS) g[f].addEventListener('change', syncLocks);

  const addTopic = (e, tid, tflags) => {
    const flags = {};
    const row = h('div', { class: 'topic-perm' }, h('span', { class: 'topic-perm-name' }, `topic ${tid}`),
      TOPIC_FLAGS.map((f) => {
        flags[f] = h('input', { type: 'checkbox', checked: !!(tflags && tflags[f]) });
        return h('label', { class: 'check' }, flags[f], ' ' + label(f));
      }),
      h('button', { type: 'button', class: 'icon', 'aria-label': 'Remove topic entry', onclick: () => { row.remove(); e.topics = e.topics.filter((t) => t.id !== tid); } }, '×'));
    e.topics.push({ id: tid, flags });
    e.topicBox.appendChild(row);
    loadTopics(e.id).then((ts) => {
      const t = ts.find((x) => String(x.id) === String(tid));
      if (t) row.firstChild.textContent = `${t.name} (${tid})`;
    }).catch(() => {});
  };

  const addStream = (sid, sperm) => {
    if (entries.some((e) => String(e.id) === String(sid))) return;
    const e = { id: String(sid), flags: {}, topics: [], topicBox: h('div', { class: 'topic-perms' }) };
    const topicSel = h('select', { 'aria-label': 'Topic' });
    const topicIn = h('input', { placeholder: 'topic id', size: 6, 'aria-label': 'Topic id' });
    loadTopics(e.id).then((ts) => {
      if (ts.length) {
        mount(topicSel, ts.map((t) => h('option', { value: String(t.id) }, `${t.name} (${t.id})`)));
        topicIn.hidden = true;
      } else topicSel.hidden = true;
    }).catch(() => { topicSel.hidden = true; });
    e.el = h('div', { class: 'stream-perm', 'data-testid': 'stream-perm' },
      h('div', { class: 'section-head' }, h('strong', streamName(sid)),
        h('button', { type: 'button', class: 'icon', 'aria-label': 'Remove stream entry', onclick: () => { e.el.remove(); entries.splice(entries.indexOf(e), 1); } }, '×')),
      h('div', { class: 'flags' }, STREAM_FLAGS.map((f) => {
        e.flags[f] = h('input', { type: 'checkbox', checked: !!(sperm && sperm[f]), 'data-testid': `perm-s${sid}-${f}` });
        return h('label', { class: 'check' }, e.flags[f], ' ' + label(f));
      })),
      e.topicBox,
      h('div', { class: 'inline' }, topicSel, topicIn, h('button', { type: 'button', class: 'small', onclick: () => {
        const tid = topicSel.hidden ? topicIn.value.trim() : topicSel.value;
        if (/^[0-9]+$/.test(tid) && !e.topics.some((t) => t.id === tid)) addTopic(e, tid, null);
      } }, 'Add topic entry')));
    entries.push(e);
    list.appendChild(e.el);
    if (sperm && sperm.topics) for (const [tid, tf] of Object.entries(sperm.topics)) addTopic(e, tid, tf);
    syncLocks();
  };

  const streamSel = h('select', { 'aria-label': 'Stream', 'data-testid': 'perm-stream-select' }, streams.map((s) => h('option', { value: String(s.id) }, `${s.name} (${s.id})`)));
  const streamIn = h('input', { placeholder: 'stream id', size: 6, 'aria-label': 'Stream id', hidden: streams.length > 0 });
  if (!streams.length) streamSel.hidden = true;
  if (init.streams) for (const [sid, sp] of Object.entries(init.streams)) addStream(sid, sp);

  const el = h('div', { class: 'perm-editor' }, globalBox,
    h('fieldset', { class: 'flags-streams' }, h('legend', 'Per stream'), list,
      h('div', { class: 'inline' }, streamSel, streamIn, h('button', { type: 'button', class: 'small', 'data-testid': 'perm-add-stream', onclick: () => {
        const sid = streamSel.hidden ? streamIn.value.trim() : streamSel.value;
        if (/^[0-9]+$/.test(sid)) addStream(sid, null);
      } }, 'Add stream entry'))));
  syncLocks();
  return {
    el,
    value() {
      const global = {};
      for (const f of GLOBAL_FLAGS) global[f] = g[f].checked;
      let out = null;
      for (const e of entries) {
        const sp = {};
        for (const f of STREAM_FLAGS) sp[f] = e.flags[f].checked;
        let topics = null;
        for (const t of e.topics) {
          const tp = {};
          for (const f of TOPIC_FLAGS) tp[f] = t.flags[f].checked;
          topics = topics || {};
          topics[t.id] = tp;
        }
        sp.topics = topics;
        out = out || {};
        out[e.id] = sp;
      }
      return { global, streams: out };
    },
  };
}
