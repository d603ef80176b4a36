// The create/edit topic form: every topic option of the API.
//
// Create sends the five required fields plus an "options" block for every
// other key of the server's catalogue (GET /options/topic: segment_size,
// enforce_fsync, messages_required_to_save, ... and Iggo's own); empty fields
// are left out so the server default applies. Edit sends name, compression,
// expiry and max size with their current values unless changed (never 0 by
// accident, which would reset a custom size to the server default).

import { h } from '../dom.js';
import { field, modal, showFormError, toast } from '../ui.js';
import { U64_MAX, parseDuration, parseSize, fmtDuration, decodeHeaderValue } from '../format.js';
import { toBig, toWireInt } from '../bigjson.js';

function choice(name, options, current) {
  return h('select', { name }, options.map(([v, l]) => h('option', { value: v, selected: v === current }, l)));
}

function expiryControl(current) {
  const b = toBig(current);
  const mode = b === null || b === U64_MAX ? 'never' : b === 0n ? 'default' : 'custom';
  const sel = choice('message_expiry_mode', [['never', 'Never expire'], ['default', 'Server default'], ['custom', 'After…']], mode);
  const txt = h('input', { name: 'message_expiry', placeholder: 'e.g. 7d or 1d 12h or 30min', value: mode === 'custom' ? fmtDuration(b, Infinity) : '', 'data-testid': 'expiry-input' });
  const sync = () => { txt.hidden = sel.value !== 'custom'; };
  sel.addEventListener('change', sync);
  sync();
  return {
    el: h('div', { class: 'inline' }, sel, txt),
    value() {
      if (sel.value === 'never') return U64_MAX;
      if (sel.value === 'default') return 0n;
      const v = parseDuration(txt.value);
      if (v === null || v <= 0n) throw new Error('Message expiry: enter a duration such as "7d", "12h 30min" or "90s"');
      return v;
    },
  };
}

/** Writes a byte count exactly, in the largest binary unit that divides it. */
function exactSize(b) {
  for (const [u, n] of [['TiB', 1n << 40n], ['GiB', 1n << 30n], ['MiB', 1n << 20n], ['KiB', 1n << 10n]]) {
    if (b % n === 0n) return `${b / n} ${u}`;
  }
  return String(b);
}

function sizeControl(current) {
  const b = toBig(current);
  const mode = b === null || b === U64_MAX ? 'unlimited' : b === 0n ? 'default' : 'custom';
  const sel = choice('max_topic_size_mode', [['unlimited', 'Unlimited'], ['default', 'Server default'], ['custom', 'At most…']], mode);
  const txt = h('input', { name: 'max_topic_size', placeholder: 'e.g. 10 GiB', value: mode === 'custom' ? exactSize(b) : '' });
  const sync = () => { txt.hidden = sel.value !== 'custom'; };
  sel.addEventListener('change', sync);
  sync();
  return {
    el: h('div', { class: 'inline' }, sel, txt),
    value() {
      if (sel.value === 'unlimited') return U64_MAX;
      if (sel.value === 'default') return 0n;
      const v = parseSize(txt.value);
      if (v === null || v <= 0n) throw new Error('Max topic size: enter a size such as "10 GiB", "500 MB" or a byte count');
      return v;
    },
  };
}

/** Keys with their own form controls (typed fields of the create body). */
const TYPED_KEYS = new Set(['compression_algorithm', 'message_expiry', 'max_topic_size']);

/** The reference's create-only options, used when GET /options/topic fails. */
const FALLBACK_OPTIONS = [
  { key: 'segment_size', kind: 'string', default_value: [], description: 'segment size, a multiple of 512 from 1 MiB to 1 GiB' },
  { key: 'enforce_fsync', kind: 'bool', default_value: [0], description: 'fsync on every save' },
  { key: 'messages_required_to_save', kind: 'uint32', default_value: [], description: 'messages buffered before a save' },
  { key: 'size_of_messages_required_to_save', kind: 'string', default_value: [], description: 'bytes buffered before a save' },
  { key: 'preallocate_segments', kind: 'bool', default_value: [0], description: 'preallocate segment files' },
];

/**
 * One control per catalogue option (GET /options/topic) other than the typed
 * fields: bool kinds as default/true/false, others as text. Empty = the
 * server's default. value() returns the request's options block.
 */
function optionFields(catalogue) {
  const rows = [];
  const el = h('div', { class: 'form' }, catalogue.filter((o) => !TYPED_KEYS.has(o.key)).map((o) => {
    const def = Array.isArray(o.default_value) && o.default_value.length ? decodeHeaderValue(o.kind, new Uint8Array(o.default_value)).text : '';
    const input = o.kind === 'bool'
      ? h('select', { name: o.key }, h('option', { value: '' }, `default${def ? ' (' + def + ')' : ''}`), h('option', { value: 'true' }, 'true'), h('option', { value: 'false' }, 'false'))
      : h('input', { name: o.key, placeholder: def ? `default ${def}` : 'server default' });
    rows.push([o.key, input]);
    return field(o.key.replace(/_/g, ' '), input, o.description);
  }));
  return {
    el,
    value() {
      const out = {};
      for (const [k, input] of rows) if (input.value.trim()) out[k] = input.value.trim();
      return out;
    },
  };
}

/**
 * Opens the topic dialog. topic = existing topic for edit, or null to create.
 * Resolves with the created/updated topic id, or null when cancelled.
 */
export async function topicDialog(ctx, streamId, topic) {
  const editing = !!topic;
  let catalogue = FALLBACK_OPTIONS;
  if (!editing) {
    try {
      catalogue = await ctx.api.get('/options/topic');
    } catch {
      // the static list below still offers the reference's options
    }
  }
  return modal(editing ? `Edit topic ${topic.name}` : 'New topic', (close) => {
    const name = h('input', { name: 'name', required: true, maxlength: 255, value: editing ? topic.name : '', 'data-testid': 'topic-name' });
    const parts = h('input', { name: 'partitions_count', type: 'number', min: 0, max: 1000, value: '1', 'data-testid': 'topic-partitions' });
    const comp = choice('compression_algorithm', [['none', 'None'], ['gzip', 'Gzip']], editing ? String(topic.compression_algorithm).toLowerCase() : 'none');
    const exp = expiryControl(editing ? topic.message_expiry : U64_MAX);
    const size = sizeControl(editing ? topic.max_topic_size : U64_MAX);
    const extra = optionFields(catalogue);
    const opts = editing ? (topic.options || {}) : {};
    const optRows = editing ? Object.entries(opts).map(([k, v]) => h('tr', h('td', h('code', k)), h('td', String(v.value)), h('td', v.explicit ? 'set' : 'default'))) : [];
    const submit = h('button', { class: 'primary', type: 'submit', 'data-testid': 'topic-submit' }, editing ? 'Save' : 'Create topic');
    const form = h('form', { class: 'form', onsubmit: async (ev) => {
      ev.preventDefault();
      submit.disabled = true;
      try {
        if (!name.value.trim()) throw new Error('Name is required');
        const body = {
          name: name.value,
          compression_algorithm: comp.value,
          message_expiry: toWireInt(exp.value()),
          max_topic_size: toWireInt(size.value()),
        };
        if (editing) {
          await ctx.api.put(`/streams/${streamId}/topics/${topic.id}`, body);
          toast('Topic saved', 'ok');
          close(topic.id);
          return;
        }
        body.partitions_count = Number(parts.value || 0);
        const options = extra.value();
        if (Object.keys(options).length) body.options = options;
        const t = await ctx.api.post(`/streams/${streamId}/topics`, body);
        toast(`Topic ${t.name} created`, 'ok');
        close(t.id);
      } catch (e) {
        showFormError(form, e);
      } finally {
        submit.disabled = false;
      }
    } },
    field('Name', name),
    editing ? null : field('Partitions', parts, '0 .. 1000'),
    field('Compression', comp, 'Stored as metadata; clients compress.'),
    field('Message expiry', exp.el),
    field('Max topic size', size.el, 'Oldest segments are deleted beyond it.'),
    editing ? h('details', { class: 'opts' }, h('summary', 'All options (segment size, fsync… are fixed at creation)'),
      h('table', h('tbody', optRows))) :
      h('details', { class: 'opts' }, h('summary', 'Storage options (most are fixed after creation)'), extra.el),
    h('div', { class: 'actions' }, h('button', { type: 'button', onclick: () => close(null) }, 'Cancel'), submit));
    return form;
  }, { wide: true });
}
