// Personal access tokens of the signed-in user: list, create (the token is
// shown once), delete.

import { h, mount } from '../dom.js';
import { pageHead, table, empty, modal, field, showFormError, toast, confirmSimple, actionButton, copyText } from '../ui.js';
import { fmtTime, parseDuration } from '../format.js';
import { toWireInt } from '../bigjson.js';

/** Builds the tokens page. */
export function tokensPage(ctx) {
  const el = h('div');
  const body = h('div');
  const create = h('button', { class: 'primary', type: 'button', 'data-testid': 'new-token', onclick: async () => {
    const tok = await modal('New personal access token', (close) => {
      const name = h('input', { name: 'name', required: true, minlength: 3, maxlength: 30, 'data-testid': 'token-name' });
      const expiry = h('input', { name: 'expiry', placeholder: 'e.g. 30d; empty = never', 'data-testid': 'token-expiry' });
      const form = h('form', { class: 'form', onsubmit: async (ev) => {
        ev.preventDefault();
        try {
          let us = 0n;
          if (expiry.value.trim()) {
            us = parseDuration(expiry.value);
            if (us === null || us <= 0n) throw new Error('Expiry: enter a duration such as "30d" or leave it empty');
          }
          close(await ctx.api.post('/personal-access-tokens', { name: name.value, expiry: toWireInt(us) }));
        } catch (e) {
          showFormError(form, e);
        }
      } }, field('Name', name, '3 .. 30 bytes'), field('Expires after', expiry),
      h('div', { class: 'actions' }, h('button', { type: 'button', onclick: () => close(null) }, 'Cancel'), h('button', { class: 'primary', type: 'submit', 'data-testid': 'token-submit' }, 'Create')));
      return form;
    });
    if (!tok) return;
    await modal('Token created', (close) => h('div',
      h('p', 'Copy the token now: the server shows it only once. Use it as a bearer or to sign in.'),
      h('pre', { class: 'token', 'data-testid': 'token-value' }, tok.token),
      h('div', { class: 'actions' }, h('button', { type: 'button', onclick: () => copyText(tok.token, 'Token copied') }, 'Copy'), h('button', { class: 'primary', type: 'button', onclick: () => close(true) }, 'Done'))));
    ctx.reload();
  } }, 'New token');
  mount(el, pageHead('Personal access tokens', 'Tokens of the signed-in user', create), body);
  return {
    el,
    async load() {
      const list = await ctx.api.get('/personal-access-tokens');
      mount(body, list.length ? table([
        { key: 'name', label: 'Name' },
        { key: 'expiry_at', label: 'Expires', render: (t) => (t.expiry_at === null || t.expiry_at === undefined ? 'never' : fmtTime(t.expiry_at)) },
        { key: 'act', label: '', render: (t) => actionButton('Delete', async () => {
          if (await confirmSimple('Delete token', `Delete the token "${t.name}"? Anything using it loses access.`, 'Delete')) {
            await ctx.api.del(`/personal-access-tokens/${encodeURIComponent(t.name)}`);
            toast('Token deleted', 'ok');
            ctx.reload();
          }
        }, { class: 'small danger' }) },
      ], list, { testid: 'tokens-table' }) : empty('You have no personal access tokens.'));
    },
  };
}
