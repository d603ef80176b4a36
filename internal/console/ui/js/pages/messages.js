// Message browser: seek by first/last/offset/timestamp, one partition or all
// partitions merged by time, paging, live tail with pause, payload filter,
// details (JSON tree, text, hex, headers), export and produce.
//
// Polls use GET .../messages with auto_commit=false, so browsing never moves
// any consumer's offset. The tail polls each partition from the offset after
// the newest message it has seen.

import { h, mount } from '../dom.js';
import { pageHead, crumbs, empty, errorPanel, toast, download, badge, describeError } from '../ui.js';
import { seg, ApiError } from '../api.js';
import { toBig, stringify } from '../bigjson.js';
import { fmtTime, fmtInt, csvField } from '../format.js';
import { preview, messageDetails, messageRecord, payloadOf } from './payload.js';
import { produceDialog } from './produce.js';

/** Messages kept in the view at most (the oldest drop out while tailing). */
const MAX_BUFFER = 2000;
/** Largest page a poll asks for. */
const MAX_COUNT = 1000;
/** Tail poll period. */
const TAIL_MS = 1000;

function cmpMsg(a, b) {
  const ta = toBig(a.header.timestamp);
  const tb = toBig(b.header.timestamp);
  if (ta !== tb) return ta < tb ? -1 : 1;
  if (a._partition !== b._partition) return a._partition - b._partition;
  const oa = toBig(a.header.offset);
  const ob = toBig(b.header.offset);
  return oa < ob ? -1 : oa > ob ? 1 : 0;
}

/** Builds the message browser. */
export function messagesPage(ctx, params, query) {
  const el = h('div');
  const tpath = `/streams/${seg(params.s)}/topics/${seg(params.t)}`;
  const st = {
    topic: null,
    stream: null,
    msgs: [],
    next: new Map(), // partition -> next offset to poll (BigInt)
    tail: false,
    timer: null,
    busy: false,
    selected: null,
    disposed: false,
  };
  const partSel = h('select', { 'aria-label': 'Partition', 'data-testid': 'partition-select' });
  const kindSel = h('select', { 'aria-label': 'Seek', 'data-testid': 'seek-kind' },
    [['last', 'Newest'], ['first', 'Oldest'], ['offset', 'From offset'], ['timestamp', 'From time']].map(([v, l]) => h('option', { value: v }, l)));
  const offIn = h('input', { 'aria-label': 'Offset', placeholder: 'offset', inputmode: 'numeric', hidden: true, 'data-testid': 'seek-offset', size: 10 });
  const timeIn = h('input', { 'aria-label': 'Time', type: 'datetime-local', step: '1', hidden: true, 'data-testid': 'seek-time' });
  const countIn = h('input', { 'aria-label': 'Count', type: 'number', min: 1, max: MAX_COUNT, value: '50', size: 5, 'data-testid': 'seek-count' });
  const filterIn = h('input', { type: 'search', placeholder: 'Filter payload / headers', 'aria-label': 'Filter', 'data-testid': 'message-filter' });
  const tailBtn = h('button', { type: 'button', 'data-testid': 'tail-toggle' }, 'Live tail');
  const status = h('div', { class: 'tail-status', 'data-testid': 'tail-status', 'aria-live': 'polite' });
  const list = h('div', { class: 'msg-list', 'data-testid': 'message-list' });
  const detail = h('div', { class: 'msg-detail' });
  const layout = h('div', { class: 'msg-layout' }, list, detail);
  kindSel.addEventListener('change', () => {
    offIn.hidden = kindSel.value !== 'offset';
    timeIn.hidden = kindSel.value !== 'timestamp';
  });
  if (query.partition !== undefined) kindSel.value = 'first';

  const partitions = () => {
    const all = (st.topic.partitions || []).map((p) => p.id);
    return partSel.value === 'all' ? all : all.filter((id) => String(id) === partSel.value);
  };

  const poll = (pid, kind, value, count) => ctx.api.get(`${tpath}/messages`, {
    partition_id: pid, kind, value: value === undefined ? undefined : String(value), count, auto_commit: 'false',
  });

  const setStatus = (text, kind = '') => mount(status, kind ? h('span', { class: kind }, text) : text);

  const stopTail = (why) => {
    st.tail = false;
    if (st.timer) clearTimeout(st.timer);
    st.timer = null;
    tailBtn.textContent = 'Live tail';
    tailBtn.classList.remove('active');
    if (why) setStatus(why, 'warn');
  };

  const fail = (e) => {
    if (e instanceof ApiError && e.status === 404) {
      stopTail();
      mount(el, errorPanel(e, h('p', 'The topic or partition may have been deleted. ', h('a', { href: `#/streams/${seg(params.s)}` }, 'Back to the stream'))));
      return;
    }
    if (st.tail) setStatus('Tail paused by an error: ' + describeError(e) + ' (retrying)', 'warn');
    else setStatus(describeError(e), 'warn');
  };

  const absorb = (pid, reply) => {
    const got = (reply && reply.messages) || [];
    for (const m of got) {
      m._partition = pid;
      const nx = toBig(m.header.offset) + 1n;
      if (!st.next.has(pid) || st.next.get(pid) < nx) st.next.set(pid, nx);
    }
    return got;
  };

  const drawList = () => {
    const f = filterIn.value.trim().toLowerCase();
    const rows = f ? st.msgs.filter((m) => preview(m, 4096).toLowerCase().includes(f) || JSON.stringify(m.user_headers || '').toLowerCase().includes(f)) : st.msgs;
    if (!rows.length) {
      mount(list, empty(st.msgs.length ? 'No message matches the filter.' : 'No messages here yet. Start the live tail to wait for new ones.'));
      return;
    }
    const multi = partitions().length > 1;
    const trs = rows.slice().reverse().map((m) => h('tr', {
      class: ['clickable', st.selected === m && 'selected'], tabindex: '0', 'data-testid': 'message-row',
      onclick: () => select(m), onkeydown: (ev) => { if (ev.key === 'Enter') select(m); },
    },
    multi ? h('td', { class: 'num', 'data-label': 'Partition' }, String(m._partition)) : null,
    h('td', { class: 'num', 'data-label': 'Offset' }, fmtInt(m.header.offset)),
    h('td', { 'data-label': 'Time', class: 'nowrap' }, fmtTime(m.header.timestamp)),
    h('td', { 'data-label': 'Payload', class: 'payload-preview' }, preview(m)),
    h('td', { class: 'num', 'data-label': 'Size' }, fmtInt(m.header.payload_length)),
    h('td', { 'data-label': 'Headers' }, Array.isArray(m.user_headers) && m.user_headers.length ? badge(String(m.user_headers.length)) : '')));
    mount(list, h('div', { class: 'table-wrap' }, h('table', { class: 'messages', 'data-testid': 'messages-table' },
      h('thead', h('tr', multi ? h('th', { class: 'num' }, 'P') : null, h('th', { class: 'num' }, 'Offset'), h('th', 'Time'), h('th', 'Payload'), h('th', { class: 'num' }, 'Bytes'), h('th', 'H'))),
      h('tbody', trs))), h('p', { class: 'empty' }, `${fmtInt(rows.length)} shown${f ? ` of ${fmtInt(st.msgs.length)}` : ''}, newest first.`));
  };

  const select = (m) => {
    st.selected = m;
    mount(detail, h('div', { class: 'panel' }, h('div', { class: 'section-head' }, h('h2', `Message ${m.header.offset}`),
      h('button', { type: 'button', class: 'icon', 'aria-label': 'Close details', onclick: () => { st.selected = null; mount(detail); layout.classList.remove('with-detail'); drawList(); } }, '×')), messageDetails(m)));
    layout.classList.add('with-detail');
    drawList();
    if (window.matchMedia('(max-width: 800px)').matches) detail.scrollIntoView({ block: 'start' });
  };

  const fetchPage = async () => {
    const count = Math.min(MAX_COUNT, Math.max(1, Number(countIn.value) || 50));
    const kind = kindSel.value;
    let value;
    if (kind === 'offset') {
      const v = toBig(offIn.value || '0');
      if (v === null) throw new Error('The offset must be a whole number');
      value = v;
    } else if (kind === 'timestamp') {
      const ms = timeIn.value ? new Date(timeIn.value).getTime() : NaN;
      if (!Number.isFinite(ms)) throw new Error('Pick a date and time');
      value = BigInt(ms) * 1000n;
    }
    st.next.clear();
    const pids = partitions();
    const replies = await Promise.all(pids.map((pid) => poll(pid, kind, value, count).then((r) => absorb(pid, r))));
    let msgs = replies.flat().sort(cmpMsg);
    if (pids.length > 1 && msgs.length > count) msgs = kind === 'last' ? msgs.slice(-count) : msgs.slice(0, count);
    st.msgs = msgs;
    // partitions with nothing seen continue from their end when tailing
    for (const p of st.topic.partitions || []) {
      if (pids.includes(p.id) && !st.next.has(p.id)) st.next.set(p.id, toBig(p.messages_count) > 0n ? toBig(p.current_offset) + 1n : 0n);
    }
    setStatus(`${fmtInt(msgs.length)} messages loaded from ${pids.length === 1 ? 'partition ' + pids[0] : pids.length + ' partitions (merged by time)'}.`);
    drawList();
  };

  const pageNewer = async () => {
    const count = Math.min(MAX_COUNT, Math.max(1, Number(countIn.value) || 50));
    const pids = partitions();
    const got = (await Promise.all(pids.map((pid) => poll(pid, 'offset', st.next.get(pid) ?? 0n, count).then((r) => absorb(pid, r))))).flat();
    st.msgs = st.msgs.concat(got).sort(cmpMsg);
    if (st.msgs.length > MAX_BUFFER) st.msgs = st.msgs.slice(-MAX_BUFFER);
    return got.length;
  };

  const pageOlder = async () => {
    const count = Math.min(MAX_COUNT, Math.max(1, Number(countIn.value) || 50));
    const pids = partitions();
    const oldest = new Map();
    for (const m of st.msgs) {
      const o = toBig(m.header.offset);
      if (!oldest.has(m._partition) || oldest.get(m._partition) > o) oldest.set(m._partition, o);
    }
    const got = (await Promise.all(pids.map(async (pid) => {
      const o = oldest.get(pid);
      if (o === undefined || o === 0n) return [];
      const from = o > BigInt(count) ? o - BigInt(count) : 0n;
      const r = await poll(pid, 'offset', from, Number(o - from));
      return ((r && r.messages) || []).filter((m) => toBig(m.header.offset) < o).map((m) => { m._partition = pid; return m; });
    }))).flat();
    st.msgs = got.concat(st.msgs).sort(cmpMsg);
    if (st.msgs.length > MAX_BUFFER) st.msgs = st.msgs.slice(0, MAX_BUFFER);
    setStatus(got.length ? `${fmtInt(got.length)} older messages loaded.` : 'No older messages (retention may have removed them).');
    drawList();
  };

  const tick = async () => {
    if (!st.tail || st.disposed) return;
    try {
      const n = await pageNewer();
      setStatus(h('span', h('span', { class: 'live-dot', 'aria-hidden': 'true' }), ` Live: ${n ? fmtInt(n) + ' new' : 'waiting for messages'} · ${fmtInt(st.msgs.length)} in view`));
      if (n) drawList();
    } catch (e) {
      fail(e);
      if (e instanceof ApiError && e.status === 404) return;
    }
    if (st.tail && !st.disposed) st.timer = setTimeout(tick, TAIL_MS);
  };

  tailBtn.addEventListener('click', () => {
    if (st.tail) {
      stopTail();
      setStatus(`Paused · ${fmtInt(st.msgs.length)} in view`);
      return;
    }
    st.tail = true;
    tailBtn.textContent = 'Pause';
    tailBtn.classList.add('active');
    tick();
  });

  const run = async (fn) => {
    if (st.busy) return;
    st.busy = true;
    try {
      await fn();
    } catch (e) {
      fail(e);
    } finally {
      st.busy = false;
    }
  };

  const exportAs = (fmt) => {
    const name = `${st.stream.name}-${st.topic.name}-messages.${fmt}`.replace(/[^A-Za-z0-9._-]+/g, '_');
    if (fmt === 'json') {
      download(name, stringify(st.msgs.map(messageRecord), 2), 'application/json');
      return;
    }
    const lines = ['partition,offset,id,timestamp,origin_timestamp,payload_length,payload_text,payload_base64'];
    for (const m of st.msgs) {
      const text = new TextDecoder('utf-8').decode(payloadOf(m));
      lines.push([m._partition, m.header.offset, m.header.id, m.header.timestamp, m.header.origin_timestamp, m.header.payload_length, text, m.payload].map(csvField).join(','));
    }
    download(name, lines.join('\r\n') + '\r\n', 'text/csv');
  };

  filterIn.addEventListener('input', drawList);

  return {
    el,
    auto: false,
    dispose() {
      st.disposed = true;
      stopTail();
    },
    async load() {
      const [stream, topic] = await Promise.all([ctx.api.get(`/streams/${seg(params.s)}`), ctx.api.get(tpath)]);
      st.stream = stream;
      st.topic = topic;
      const canPoll = ctx.perms.poll(stream.id, topic.id);
      const canSend = ctx.perms.send(stream.id, topic.id);
      mount(partSel, (topic.partitions || []).length > 1 ? h('option', { value: 'all' }, 'All partitions (merged)') : null,
        (topic.partitions || []).map((p) => h('option', { value: String(p.id) }, `Partition ${p.id} (${fmtInt(p.messages_count)})`)));
      if (query.partition !== undefined) partSel.value = String(query.partition);
      const produceBtn = canSend ? h('button', { type: 'button', class: 'primary', 'data-testid': 'produce', onclick: async () => {
        const sent = await produceDialog(ctx, `/streams/${stream.id}/topics/${topic.id}`, topic);
        if (sent && !st.tail) toast('Start the live tail or reload to see it', 'info');
      } }, 'Produce') : null;
      const controls = h('form', { class: 'controls', onsubmit: (ev) => { ev.preventDefault(); stopTail(); run(fetchPage); } },
        partSel, kindSel, offIn, timeIn, countIn,
        h('button', { type: 'submit', 'data-testid': 'seek' }, 'Load'),
        h('button', { type: 'button', onclick: () => run(pageOlder), 'data-testid': 'older' }, 'Older'),
        h('button', { type: 'button', onclick: () => run(async () => { const n = await pageNewer(); setStatus(n ? `${fmtInt(n)} newer messages loaded.` : 'No newer messages.'); drawList(); }), 'data-testid': 'newer' }, 'Newer'),
        tailBtn, filterIn,
        h('span', { class: 'export' }, 'Export ', h('button', { type: 'button', class: 'small', onclick: () => exportAs('json') }, 'JSON'), h('button', { type: 'button', class: 'small', onclick: () => exportAs('csv') }, 'CSV')));
      mount(el,
        crumbs([['Streams', '/streams'], [stream.name, `/streams/${stream.id}`], [topic.name, `/streams/${stream.id}/topics/${topic.id}`], ['Messages', null]]),
        pageHead(`Messages · ${topic.name}`, `${topic.partitions_count} partitions · browsing never commits an offset`, produceBtn),
        canPoll ? [controls, status, layout] : h('p', { class: 'empty', 'data-testid': 'no-permission' }, 'Your user may not read messages of this topic' + (canSend ? ', but it may produce them.' : '.')));
      if (!canPoll) return;
      if (!(topic.partitions || []).length) {
        mount(list, empty('The topic has no partitions.'));
        return;
      }
      await run(fetchPage);
    },
  };
}
