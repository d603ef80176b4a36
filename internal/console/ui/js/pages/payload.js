// Views of one message: header fields, user headers decoded by kind, and
// the payload as a JSON tree, text or hex, with copy and download.

import { h, mount } from '../dom.js';
import { parse, stringify } from '../bigjson.js';
import { b64ToBytes, decodeUTF8, looksBinary, hexDump, decodeHeaderValue, fmtTime, fmtInt, u128ToUUID, bytesToB64 } from '../format.js';
import { kv, copyText, download, table, empty, badge } from '../ui.js';

/** Payloads above this are not parsed into a JSON tree. */
const MAX_TREE_BYTES = 4 * 1024 * 1024;
/** Text view shows at most this many characters. */
const MAX_TEXT_CHARS = 1024 * 1024;
/** Tree nodes rendered at most (large arrays are cut with a note). */
const MAX_TREE_CHILDREN = 500;

/** Decodes a message's payload once and caches the result on the message. */
export function payloadOf(m) {
  if (!m._bytes) {
    try {
      m._bytes = b64ToBytes(m.payload || '');
    } catch {
      m._bytes = new Uint8Array(0);
      m._badBase64 = true;
    }
  }
  return m._bytes;
}

/** A short printable preview of the payload (for tables). */
export function preview(m, chars = 120) {
  const p = String(m.payload || '');
  const take = p.slice(0, Math.ceil((chars * 4) / 3 / 4) * 4 + 4);
  let bytes;
  try {
    bytes = b64ToBytes(take.length % 4 === 0 ? take : take.slice(0, take.length - (take.length % 4)));
  } catch {
    return '(invalid base64)';
  }
  if (looksBinary(bytes)) return `binary, ${fmtInt(m.header.payload_length)} bytes`;
  const t = new TextDecoder('utf-8').decode(bytes).replace(/\s+/g, ' ');
  return t.length > chars ? t.slice(0, chars) + '…' : t;
}

/** Decoded user headers: [{key, keyKind, value, kind, ok}] or a raw base64 block. */
export function headersOf(m) {
  const uh = m.user_headers;
  if (typeof uh === 'string') return { raw: uh, list: [] };
  const list = (uh || []).map((e) => {
    let kb;
    let vb;
    try { kb = b64ToBytes(e.key.value); } catch { kb = new Uint8Array(0); }
    try { vb = b64ToBytes(e.value.value); } catch { vb = new Uint8Array(0); }
    const k = decodeHeaderValue(e.key.kind, kb);
    const v = decodeHeaderValue(e.value.kind, vb);
    return { key: k.text, keyKind: e.key.kind, value: v.text, kind: e.value.kind, ok: v.ok && k.ok };
  });
  return { raw: null, list };
}

function jsonNode(key, v, depth) {
  const keyEl = key === null ? null : h('span', { class: 'j-key' }, JSON.stringify(String(key)), ': ');
  if (v === null) return h('div', { class: 'j-row' }, keyEl, h('span', { class: 'j-null' }, 'null'));
  if (typeof v === 'bigint' || typeof v === 'number') return h('div', { class: 'j-row' }, keyEl, h('span', { class: 'j-num' }, String(v)));
  if (typeof v === 'boolean') return h('div', { class: 'j-row' }, keyEl, h('span', { class: 'j-bool' }, String(v)));
  if (typeof v === 'string') return h('div', { class: 'j-row' }, keyEl, h('span', { class: 'j-str' }, JSON.stringify(v)));
  const isArr = Array.isArray(v);
  const entries = isArr ? v.map((x, i) => [i, x]) : Object.entries(v);
  const open = isArr ? '[' : '{';
  const close = isArr ? ']' : '}';
  if (entries.length === 0) return h('div', { class: 'j-row' }, keyEl, open + close);
  const shown = entries.slice(0, MAX_TREE_CHILDREN);
  const d = h('details', { class: 'j-node', open: depth < 3 },
    h('summary', keyEl, open, h('span', { class: 'j-count' }, ` ${entries.length} ${isArr ? 'items' : 'keys'} `), close),
    h('div', { class: 'j-children' }, shown.map(([k, x]) => jsonNode(isArr ? null : k, x, depth + 1)),
      entries.length > shown.length ? h('div', { class: 'j-more' }, `… ${entries.length - shown.length} more`) : null));
  return d;
}

/** Renders a parsed JSON value as a collapsible tree. */
export function jsonTree(value) {
  return h('div', { class: 'json-tree', 'data-testid': 'json-tree' }, jsonNode(null, value, 0));
}

/** Tries to parse the payload as JSON; returns {ok, value} (BigInt-safe). */
export function payloadJSON(bytes) {
  if (bytes.length > MAX_TREE_BYTES) return { ok: false, reason: 'too large for the tree view' };
  const d = decodeUTF8(bytes);
  if (!d.valid) return { ok: false, reason: 'not UTF-8' };
  const t = d.text.trim();
  if (!t || (t[0] !== '{' && t[0] !== '[' && t[0] !== '"')) return { ok: false, reason: 'not JSON' };
  try {
    return { ok: true, value: parse(t) };
  } catch (e) {
    return { ok: false, reason: e.message };
  }
}

/** The message as plain JSON-able data (payload kept base64). */
export function messageRecord(m) {
  return { partition_id: m._partition, header: m.header, user_headers: m.user_headers, payload: m.payload };
}

/** Full details view of one message. */
export function messageDetails(m) {
  const bytes = payloadOf(m);
  const hdr = m.header;
  const heads = headersOf(m);
  const json = payloadJSON(bytes);
  const text = decodeUTF8(bytes);
  const binary = looksBinary(bytes) || !text.valid;
  const codec = heads.list.find((x) => /^(codec|content-type)$/i.test(x.key));
  let view = json.ok || (codec && /json/i.test(codec.value)) ? 'json' : binary ? 'hex' : 'text';
  const body = h('div', { class: 'payload-body' });
  const tabs = h('div', { class: 'tabs', role: 'tablist' });
  const draw = () => {
    mount(tabs, ['json', 'text', 'hex'].map((v) => h('button', { type: 'button', role: 'tab', class: view === v ? 'active' : '', 'aria-selected': String(view === v), 'data-testid': 'view-' + v, onclick: () => { view = v; draw(); } }, v.toUpperCase())));
    if (view === 'json') {
      mount(body, json.ok ? jsonTree(json.value) : empty(`Not shown as JSON: ${json.reason}.`));
    } else if (view === 'text') {
      const t = text.text.length > MAX_TEXT_CHARS ? text.text.slice(0, MAX_TEXT_CHARS) : text.text;
      mount(body, text.valid ? null : h('p', { class: 'warn' }, 'The payload is not valid UTF-8; invalid bytes show as �. The hex view shows the exact bytes.'),
        h('pre', { class: 'payload-text', 'data-testid': 'payload-text' }, t),
        t.length < text.text.length ? h('p', { class: 'empty' }, `Showing the first ${fmtInt(MAX_TEXT_CHARS)} characters; download for the rest.`) : null);
    } else {
      mount(body, h('pre', { class: 'payload-hex', 'data-testid': 'payload-hex' }, hexDump(bytes)));
    }
  };
  draw();
  const id = hdr.id;
  return h('div', { class: 'message-details', 'data-testid': 'message-details' },
    kv([
      ['Partition', String(m._partition)],
      ['Offset', fmtInt(hdr.offset)],
      ['Id', h('span', h('code', String(id)), ' ', h('small', u128ToUUID(id)))],
      ['Timestamp', `${fmtTime(hdr.timestamp)} (${hdr.timestamp} µs)`],
      ['Origin timestamp', `${fmtTime(hdr.origin_timestamp)} (${hdr.origin_timestamp} µs)`],
      ['Checksum', `${String(hdr.checksum)} (0x${BigInt(hdr.checksum).toString(16)})`],
      ['Payload', `${fmtInt(hdr.payload_length)} bytes${binary ? ', binary' : ''}${m._badBase64 ? ', undecodable base64' : ''}`],
      ['Headers', `${heads.list.length} (${fmtInt(hdr.user_headers_length)} bytes)`],
    ], 'message-kv'),
    heads.raw !== null ? h('p', 'Headers (undecodable block, base64): ', h('code', heads.raw)) :
      heads.list.length ? table([
        { key: 'key', label: 'Key', render: (x) => h('span', x.key, ' ', badge(x.keyKind, 'muted')) },
        { key: 'value', label: 'Value', render: (x) => h('span', { class: x.ok ? '' : 'warn' }, x.value) },
        { key: 'kind', label: 'Kind', render: (x) => badge(x.kind, 'muted') },
      ], heads.list, { testid: 'headers-table' }) : null,
    h('div', { class: 'section-head' }, tabs, h('div', { class: 'page-actions' },
      h('button', { type: 'button', class: 'small', 'data-testid': 'copy-payload', onclick: () => copyText(text.valid ? text.text : bytesToB64(bytes), text.valid ? 'Payload copied' : 'Payload (base64) copied') }, 'Copy payload'),
      h('button', { type: 'button', class: 'small', onclick: () => copyText(stringify(messageRecord(m), 2), 'Message copied') }, 'Copy as JSON'),
      h('button', { type: 'button', class: 'small', 'data-testid': 'download-payload', onclick: () => download(`message-p${m._partition}-o${hdr.offset}.bin`, bytes) }, 'Download'))),
    body);
}
