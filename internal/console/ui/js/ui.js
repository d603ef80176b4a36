// Shared widgets: toasts, modal dialogs, typed confirmation, tables, error
// panels, form fields, copy and download.

import { h, mount } from './dom.js';
import { ApiError } from './api.js';

let toastBox = null;

/** Shows a transient message; kind is "ok", "error" or "info". */
export function toast(message, kind = 'info') {
  if (!toastBox) {
    toastBox = h('div', { class: 'toasts', role: 'status', 'aria-live': 'polite' });
    document.body.appendChild(toastBox);
  }
  const el = h('div', { class: ['toast', 'toast-' + kind], 'data-testid': 'toast-' + kind }, message);
  toastBox.appendChild(el);
  setTimeout(() => el.remove(), kind === 'error' ? 8000 : 4000);
}

/** Describes any thrown value for a person. */
export function describeError(e) {
  if (e instanceof ApiError) return e.describe();
  return e && e.message ? e.message : String(e);
}

/** Toasts an error. */
export function toastError(e, prefix = '') {
  toast((prefix ? prefix + ': ' : '') + describeError(e), 'error');
}

/** A panel that explains why a page has no data. */
export function errorPanel(e, extra) {
  let title = 'Something went wrong';
  if (e instanceof ApiError) {
    if (e.status === 403) title = 'Not allowed';
    else if (e.status === 404) title = 'Not found';
    else if (e.kind === 'unreachable' || e.kind === 'timeout') title = 'Server unreachable';
  }
  return h('div', { class: 'panel error-panel', 'data-testid': 'error-panel' },
    h('h2', title), h('p', describeError(e)), extra || null);
}

/** A small "empty" note. */
export function empty(text) {
  return h('p', { class: 'empty' }, text);
}

/**
 * Opens a modal dialog. build(close) returns the body; the promise resolves
 * with the value passed to close(). Escape and the backdrop close with null.
 */
export function modal(title, build, { wide = false } = {}) {
  return new Promise((resolve) => {
    const prevFocus = document.activeElement;
    let done = false;
    const close = (v = null) => {
      if (done) return;
      done = true;
      back.remove();
      document.removeEventListener('keydown', onKey);
      window.removeEventListener('hashchange', onNav);
      if (prevFocus && prevFocus.focus) prevFocus.focus();
      resolve(v);
    };
    const onKey = (ev) => {
      if (ev.key === 'Escape') close(null);
    };
    // a dialog belongs to the page it was opened on
    const onNav = () => close(null);
    const dlg = h('div', { class: ['modal', wide && 'modal-wide'], role: 'dialog', 'aria-modal': 'true', 'aria-label': title },
      h('div', { class: 'modal-head' }, h('h2', title), h('button', { class: 'icon', type: 'button', 'aria-label': 'Close', onclick: () => close(null) }, '×')),
      h('div', { class: 'modal-body' }, build(close)));
    const back = h('div', { class: 'backdrop', onmousedown: (ev) => { if (ev.target === back) close(null); } }, dlg);
    document.body.appendChild(back);
    document.addEventListener('keydown', onKey);
    window.addEventListener('hashchange', onNav);
    const first = dlg.querySelector('input, select, textarea, button.primary');
    if (first) first.focus();
  });
}

/**
 * Asks for a destructive action to be confirmed by typing a word (usually
 * the entity's name). Resolves true when confirmed.
 */
export function confirmTyped({ title, message, word, action = 'Delete' }) {
  return modal(title, (close) => {
    const input = h('input', { type: 'text', 'data-testid': 'confirm-input', autocomplete: 'off', spellcheck: 'false' });
    const btn = h('button', { class: 'danger', type: 'submit', disabled: true, 'data-testid': 'confirm-button' }, action);
    input.addEventListener('input', () => { btn.disabled = input.value !== String(word); });
    return h('form', { onsubmit: (ev) => { ev.preventDefault(); if (input.value === String(word)) close(true); } },
      h('p', message),
      h('label', 'Type ', h('code', String(word)), ' to confirm', input),
      h('div', { class: 'actions' }, h('button', { type: 'button', onclick: () => close(false) }, 'Cancel'), btn));
  }).then((v) => v === true);
}

/** A simple yes/no confirmation. */
export function confirmSimple(title, message, action = 'OK') {
  return modal(title, (close) => h('div', h('p', message),
    h('div', { class: 'actions' }, h('button', { type: 'button', onclick: () => close(false) }, 'Cancel'),
      h('button', { class: 'primary', type: 'button', onclick: () => close(true) }, action)))).then((v) => v === true);
}

/**
 * A sortable table. columns: [{key, label, render?(row), sort?(row), num?}].
 * onRow(row) makes rows clickable.
 */
export function table(columns, rows, { onRow, testid, sortKey = null, desc = false } = {}) {
  const state = { key: sortKey, desc };
  const wrap = h('div', { class: 'table-wrap' });
  const draw = () => {
    let data = rows.slice();
    if (state.key) {
      const col = columns.find((c) => c.key === state.key);
      const val = col.sort || ((r) => r[col.key]);
      data.sort((a, b) => {
        const x = val(a);
        const y = val(b);
        const c = typeof x === 'string' && typeof y === 'string' ? x.localeCompare(y) : x < y ? -1 : x > y ? 1 : 0;
        return state.desc ? -c : c;
      });
    }
    const head = h('tr', columns.map((c) => h('th', {
      class: [c.num && 'num', 'sortable'], scope: 'col',
      onclick: () => { state.desc = state.key === c.key ? !state.desc : false; state.key = c.key; draw(); },
    }, c.label, state.key === c.key ? (state.desc ? ' ▾' : ' ▴') : '')));
    const body = data.map((r) => h('tr', {
      class: onRow && 'clickable', tabindex: onRow ? '0' : undefined,
      onclick: onRow ? (ev) => { if (!ev.target.closest('button, a, input')) onRow(r); } : undefined,
      onkeydown: onRow ? (ev) => { if (ev.key === 'Enter') onRow(r); } : undefined,
    }, columns.map((c) => h('td', { class: c.num && 'num', 'data-label': c.label }, c.render ? c.render(r) : r[c.key] === undefined || r[c.key] === null ? '—' : String(r[c.key])))));
    mount(wrap, h('table', { 'data-testid': testid }, h('thead', head), h('tbody', body)));
  };
  draw();
  return wrap;
}

/** Label + input row for forms. */
export function field(label, input, hint) {
  return h('label', { class: 'field' }, h('span', { class: 'field-label' }, label), input, hint ? h('small', { class: 'hint' }, hint) : null);
}

/** Key/value grid. items: [[label, value], ...] */
export function kv(items, testid) {
  return h('dl', { class: 'kv', 'data-testid': testid }, items.filter(Boolean).map(([k, v]) => [h('dt', k), h('dd', v === undefined || v === null ? '—' : v)]));
}

/** Stat card. */
export function card(label, value, sub) {
  return h('div', { class: 'card' }, h('div', { class: 'card-label' }, label), h('div', { class: 'card-value' }, value), sub ? h('div', { class: 'card-sub' }, sub) : null);
}

/** Copies text to the clipboard and toasts the outcome. */
export async function copyText(text, what = 'Copied') {
  try {
    await navigator.clipboard.writeText(text);
    toast(what + ' to the clipboard', 'ok');
  } catch {
    toast('The browser refused clipboard access', 'error');
  }
}

/** Offers bytes or text as a file download. */
export function download(name, data, type = 'application/octet-stream') {
  const blob = data instanceof Blob ? data : new Blob([data], { type });
  const url = URL.createObjectURL(blob);
  const a = h('a', { href: url, download: name });
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** Shows a form error from an API reply next to the field it names. */
export function showFormError(form, e) {
  for (const old of form.querySelectorAll('.field-error')) old.remove();
  const fieldName = e instanceof ApiError ? e.field : null;
  const target = fieldName ? form.querySelector(`[name="${CSS.escape(fieldName)}"]`) : null;
  const msg = h('div', { class: 'field-error', role: 'alert', 'data-testid': 'form-error' }, describeError(e));
  if (target) target.closest('label')?.appendChild(msg);
  else form.prepend(msg);
}

/** A button that runs an async action, disabled while it runs. */
export function actionButton(label, fn, attrs = {}) {
  const b = h('button', { type: 'button', ...attrs }, label);
  b.addEventListener('click', async () => {
    b.disabled = true;
    try {
      await fn();
    } catch (e) {
      toastError(e);
    } finally {
      b.disabled = !!attrs.disabled;
    }
  });
  return b;
}

/** A link inside the console (hash routing). */
export function link(href, ...children) {
  return h('a', { href: '#' + href }, ...children);
}

/** Page header with title and action buttons. */
export function pageHead(title, subtitle, ...actions) {
  return h('div', { class: 'page-head' },
    h('div', h('h1', { 'data-testid': 'page-title' }, title), subtitle ? h('div', { class: 'subtitle' }, subtitle) : null),
    h('div', { class: 'page-actions' }, actions));
}

/** Breadcrumbs: [[label, href|null], ...]. */
export function crumbs(items) {
  return h('nav', { class: 'crumbs', 'aria-label': 'Breadcrumb' }, items.map(([label, href], i) => [
    i ? h('span', { class: 'sep' }, '/') : null,
    href ? link(href, label) : h('span', label),
  ]));
}

/** A small badge. */
export function badge(text, kind = '') {
  return h('span', { class: ['badge', kind && 'badge-' + kind] }, text);
}

/** An informational panel (e.g. a feature the user's permissions do not allow). */
export function notice(title, text, testid = 'notice') {
  return h('div', { class: 'panel notice', 'data-testid': testid }, h('h2', title), h('p', text));
}
