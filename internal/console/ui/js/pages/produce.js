// Produce dialog: payload (text, JSON, base64 or hex, or a file), typed user
// headers, partitioning (balanced, partition id, message key) and an
// optional message id; POST .../messages.

import { h, mount } from '../dom.js';
import { modal, field, showFormError, toast } from '../ui.js';
import { utf8, bytesToB64, encodeHeaderValue, HEADER_KINDS, partitionIdValue, b64ToBytes, fmtInt } from '../format.js';

/** Largest payload the dialog sends (the server's HTTP body cap applies too). */
const MAX_PAYLOAD_BYTES = 64_000_000;

function payloadBytes(format, text, file) {
  if (file) return file;
  if (format === 'text') return utf8(text);
  if (format === 'json') {
    JSON.parse(text); // validity check only; the text is sent as typed
    return utf8(text);
  }
  if (format === 'base64') return b64ToBytes(text.replace(/\s+/g, ''));
  const hex = text.replace(/\s+/g, '');
  if (!/^([0-9a-fA-F]{2})+$/.test(hex)) throw new Error('Hex payload must be pairs of hex digits');
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
}

/** Opens the produce dialog; resolves true when a message was sent. */
export function produceDialog(ctx, path, topic) {
  return modal(`Produce to ${topic.name}`, (close) => {
    const format = h('select', { name: 'format', 'data-testid': 'produce-format' }, ['text', 'json', 'base64', 'hex'].map((f) => h('option', { value: f }, f.toUpperCase())));
    const payload = h('textarea', { name: 'payload', rows: 6, 'data-testid': 'produce-payload', spellcheck: 'false' });
    let fileBytes = null;
    const fileIn = h('input', { type: 'file', 'aria-label': 'Payload file' });
    const fileNote = h('small', { class: 'hint' });
    fileIn.addEventListener('change', async () => {
      const f = fileIn.files && fileIn.files[0];
      fileBytes = f ? new Uint8Array(await f.arrayBuffer()) : null;
      mount(fileNote, f ? `${f.name}: ${fmtInt(f.size)} bytes (replaces the text)` : '');
    });
    const part = h('select', { name: 'partitioning', 'data-testid': 'produce-partitioning' },
      h('option', { value: 'balanced' }, 'Balanced (server round robin)'),
      h('option', { value: 'partition_id' }, 'Partition…'),
      h('option', { value: 'messages_key' }, 'Message key…'));
    const partId = h('select', { name: 'partition', hidden: true, 'data-testid': 'produce-partition' }, (topic.partitions || []).map((p) => h('option', { value: String(p.id) }, `Partition ${p.id}`)));
    const key = h('input', { name: 'key', placeholder: 'key (1..255 bytes)', hidden: true, 'data-testid': 'produce-key' });
    part.addEventListener('change', () => {
      partId.hidden = part.value !== 'partition_id';
      key.hidden = part.value !== 'messages_key';
    });
    const msgId = h('input', { name: 'id', placeholder: 'empty = random UUID', 'data-testid': 'produce-id' });
    const headers = h('div', { class: 'headers-edit' });
    const addHeader = () => {
      const row = h('div', { class: 'inline header-row' },
        h('input', { placeholder: 'key', 'aria-label': 'Header key', class: 'hk' }),
        h('select', { 'aria-label': 'Header kind', class: 'hkind' }, HEADER_KINDS.map((k) => h('option', { value: k, selected: k === 'string' }, k))),
        h('input', { placeholder: 'value', 'aria-label': 'Header value', class: 'hv' }),
        h('button', { type: 'button', class: 'icon', 'aria-label': 'Remove header', onclick: () => row.remove() }, '×'));
      headers.appendChild(row);
    };
    const submit = h('button', { class: 'primary', type: 'submit', 'data-testid': 'produce-submit' }, 'Send');
    const form = h('form', { class: 'form', onsubmit: async (ev) => {
      ev.preventDefault();
      submit.disabled = true;
      try {
        const bytes = payloadBytes(format.value, payload.value, fileBytes);
        if (bytes.length === 0) throw new Error('The payload is empty');
        if (bytes.length > MAX_PAYLOAD_BYTES) throw new Error('The payload is larger than 64 MB');
        const user_headers = [];
        for (const row of headers.querySelectorAll('.header-row')) {
          const k = row.querySelector('.hk').value;
          if (!k) continue;
          const kind = row.querySelector('.hkind').value;
          let vb;
          try {
            vb = encodeHeaderValue(kind, row.querySelector('.hv').value);
          } catch (e) {
            throw new Error(`Header ${k}: ${e.message}`);
          }
          user_headers.push({ key: { kind: 'string', value: bytesToB64(utf8(k)) }, value: { kind, value: bytesToB64(vb) } });
        }
        let partitioning = { kind: 'balanced', value: '' };
        if (part.value === 'partition_id') partitioning = { kind: 'partition_id', value: partitionIdValue(partId.value) };
        if (part.value === 'messages_key') {
          const kb = utf8(key.value);
          if (kb.length < 1 || kb.length > 255) throw new Error('The key must be 1 to 255 bytes');
          partitioning = { kind: 'messages_key', value: bytesToB64(kb) };
        }
        const m = { payload: bytesToB64(bytes) };
        if (msgId.value.trim()) {
          const v = msgId.value.trim();
          // a string carries any u128 (a JSON number only up to u64)
          if (!/^[0-9]+$/.test(v) && !/^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$/.test(v)) {
            throw new Error('The message id must be a decimal number or 32 hex digits');
          }
          m.id = v;
        }
        if (user_headers.length) m.user_headers = user_headers;
        const r = await ctx.api.post(`${path}/messages`, { partitioning, messages: [m] });
        const c = r && r.confirmations && r.confirmations[0];
        toast(c ? `Sent to partition ${c.partition_id} at offset ${c.base_offset}` : 'Message sent', 'ok');
        close(true);
      } catch (e) {
        showFormError(form, e);
      } finally {
        submit.disabled = false;
      }
    } },
    h('div', { class: 'inline' }, field('Payload format', format), field('Partitioning', h('div', { class: 'inline' }, part, partId, key))),
    field('Payload', payload), h('div', { class: 'inline' }, fileIn, fileNote),
    h('div', { class: 'section-head' }, h('h3', 'Headers'), h('button', { type: 'button', class: 'small', 'data-testid': 'add-header', onclick: addHeader }, 'Add header')),
    headers,
    field('Message id', msgId, 'decimal u128, or 32 hex digits (UUID)'),
    h('div', { class: 'actions' }, h('button', { type: 'button', onclick: () => close(null) }, 'Cancel'), submit));
    return form;
  }, { wide: true }).then((v) => v === true);
}
