// Committed offsets and lag per partition for one consumer, with reset
// (PUT .../consumer-offsets) and delete.
//
// The reference HTTP API reads and stores offsets of the *consumer* kind only.
// For consumer groups the console sends the Iggo extension
// consumer_kind=consumer_group and trusts the figures only when the reply
// echoes "consumer_kind":"consumer_group"; a server without the extension
// gets a clear "not available" instead of another consumer's offsets.

import { h, mount } from '../dom.js';
import { table, empty, modal, field, showFormError, toast, confirmSimple, actionButton } from '../ui.js';
import { fmtInt } from '../format.js';
import { toBig, toWireInt } from '../bigjson.js';
import { ApiError } from '../api.js';

/** Offset reads in flight at once. */
const OFFSET_FETCH_PARALLEL = 8;

/**
 * Loads the offsets of consumer {kind, id} on every partition of the topic.
 * Returns rows {partition, current, stored, lag} (stored null = never
 * committed), or null when the server does not support the kind.
 */
export async function loadOffsets(ctx, path, partitions, consumer) {
  let unsupported = false;
  const one = async (p) => {
    const query = { consumer_id: consumer.id, partition_id: p.id };
    if (consumer.kind === 'consumer_group') query.consumer_kind = 'consumer_group';
    let stored = null;
    try {
      const r = await ctx.api.get(`${path}/consumer-offsets`, query);
      if (consumer.kind === 'consumer_group' && (!r || r.consumer_kind !== 'consumer_group')) unsupported = true;
      else stored = r.stored_offset;
    } catch (e) {
      if (e instanceof ApiError && e.status === 400 && consumer.kind === 'consumer_group') unsupported = true;
      else if (!(e instanceof ApiError && e.status === 404)) throw e;
    }
    const cur = toBig(p.current_offset);
    const st = stored === null ? null : toBig(stored);
    const hasMessages = toBig(p.messages_count) > 0n;
    // lag = messages after the committed one; nothing committed = all of them
    const lag = st === null ? (hasMessages ? cur + 1n : 0n) : cur > st ? cur - st : 0n;
    return { partition: p.id, current: p.current_offset, stored, lag, messages: p.messages_count };
  };
  const rows = [];
  for (let i = 0; i < partitions.length && !unsupported; i += OFFSET_FETCH_PARALLEL) {
    rows.push(...(await Promise.all(partitions.slice(i, i + OFFSET_FETCH_PARALLEL).map(one))));
  }
  return unsupported ? null : rows;
}

/** A panel showing offsets and lag with reset/delete buttons. */
export function offsetsPanel(ctx, path, partitions, consumer, { canWrite, onChange }) {
  const box = h('div', { class: 'offsets', 'data-testid': 'offsets-panel' });
  const reset = (row) => modal(`Reset offset of partition ${row.partition}`, (close) => {
    const mode = h('select', { name: 'mode', 'data-testid': 'reset-mode' },
      h('option', { value: 'first' }, 'Beginning (re-read everything)'),
      h('option', { value: 'last' }, 'End (skip to the newest message)'),
      h('option', { value: 'value' }, 'Offset…'));
    const value = h('input', { name: 'offset', hidden: true, inputmode: 'numeric', 'data-testid': 'reset-offset' });
    mode.addEventListener('change', () => { value.hidden = mode.value !== 'value'; });
    const form = h('form', { class: 'form', onsubmit: async (ev) => {
      ev.preventDefault();
      try {
        let off;
        if (mode.value === 'first') off = 0n;
        else if (mode.value === 'last') off = toBig(row.current);
        else {
          off = toBig(value.value);
          if (off === null || off < 0n) throw new Error('Enter an offset (a whole number)');
        }
        const body = { consumer_id: consumer.id, partition_id: row.partition, offset: toWireInt(off) };
        if (consumer.kind === 'consumer_group') body.consumer_kind = 'consumer_group';
        await ctx.api.put(`${path}/consumer-offsets`, body);
        close(true);
      } catch (e) {
        showFormError(form, e);
      }
    } }, h('p', 'The offset stored is the last one consumed: the next poll with auto-commit continues after it.'),
    field('Reset to', mode), value,
    h('div', { class: 'actions' }, h('button', { type: 'button', onclick: () => close(null) }, 'Cancel'), h('button', { class: 'primary', type: 'submit', 'data-testid': 'reset-submit' }, 'Store offset')));
    return form;
  });
  return {
    el: box,
    async load() {
      const rows = await loadOffsets(ctx, path, partitions, consumer);
      if (rows === null) {
        mount(box, empty('This server does not expose consumer-group offsets over HTTP (the reference API reads consumer offsets only). Members and assignments are above.'));
        return;
      }
      mount(box, rows.length ? table([
        { key: 'partition', label: 'Partition', num: true },
        { key: 'current', label: 'Current offset', num: true, render: (r) => (toBig(r.messages) > 0n ? fmtInt(r.current) : 'empty') },
        { key: 'stored', label: 'Committed', num: true, render: (r) => (r.stored === null ? 'none' : fmtInt(r.stored)) },
        { key: 'lag', label: 'Lag', num: true, render: (r) => fmtInt(r.lag), sort: (r) => r.lag },
        { key: 'act', label: '', render: (r) => (canWrite && consumer.kind !== 'consumer_group' ? h('span', { class: 'row-actions' },
          h('button', { type: 'button', class: 'small', 'data-testid': 'reset-offset-' + r.partition, onclick: async () => { if (await reset(r)) { toast('Offset stored', 'ok'); onChange(); } } }, 'Reset'),
          r.stored !== null && consumer.kind !== 'consumer_group' ? actionButton('Delete', async () => {
            if (await confirmSimple('Delete offset', `Forget the committed offset of consumer ${consumer.id} on partition ${r.partition}?`, 'Delete')) {
              await ctx.api.del(`${path}/consumer-offsets/${encodeURIComponent(consumer.id)}`, { partition_id: r.partition });
              toast('Offset deleted', 'ok');
              onChange();
            }
          }, { class: 'small' }) : null) : null) },
      ], rows, { testid: 'offsets-table' }) : empty('The topic has no partitions.'),
      consumer.kind === 'consumer_group' && rows.length ? h('p', { class: 'hint', 'data-testid': 'group-offsets-note' },
        'A group\'s offsets are committed by its members (the server accepts a group offset only from the member that owns the partition). To re-read, reset an individual consumer below, or have a member store the offset.') : null);
    },
  };
}
