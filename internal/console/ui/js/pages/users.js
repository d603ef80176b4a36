// Users: list, create (with permissions), and one user's page with rename,
// status, password, full permission editing and delete.

import { h, mount } from '../dom.js';
import { pageHead, table, empty, modal, field, showFormError, toast, confirmTyped, crumbs, actionButton, badge, kv, notice } from '../ui.js';
import { fmtTime } from '../format.js';
import { permissionEditor } from './permedit.js';
import { emptyPermissions } from '../perms.js';

async function streamChoices(ctx) {
  if (!ctx.perms.listStreams()) return [];
  try {
    return (await ctx.api.get('/streams')).map((s) => ({ id: s.id, name: s.name }));
  } catch {
    return [];
  }
}

function topicLoader(ctx) {
  const cache = new Map();
  return (sid) => {
    if (!cache.has(sid)) cache.set(sid, ctx.api.get(`/streams/${sid}/topics`).then((ts) => ts.map((t) => ({ id: t.id, name: t.name }))).catch(() => []));
    return cache.get(sid);
  };
}

async function createUserDialog(ctx) {
  const streams = await streamChoices(ctx);
  return modal('New user', (close) => {
    const username = h('input', { name: 'username', required: true, minlength: 3, maxlength: 50, autocomplete: 'off', 'data-testid': 'user-username' });
    const password = h('input', { name: 'password', type: 'password', required: true, minlength: 3, maxlength: 100, autocomplete: 'new-password', 'data-testid': 'user-password' });
    const status = h('select', { name: 'status' }, h('option', { value: 'active' }, 'Active'), h('option', { value: 'inactive' }, 'Inactive'));
    const perms = permissionEditor(emptyPermissions(), streams, topicLoader(ctx));
    const submit = h('button', { class: 'primary', type: 'submit', 'data-testid': 'user-submit' }, 'Create user');
    const form = h('form', { class: 'form', onsubmit: async (ev) => {
      ev.preventDefault();
      submit.disabled = true;
      try {
        close(await ctx.api.post('/users', { username: username.value, password: password.value, status: status.value, permissions: perms.value() }));
      } catch (e) {
        showFormError(form, e);
      } finally {
        submit.disabled = false;
      }
    } }, field('Username', username, '3 .. 50 bytes'), field('Password', password, '3 .. 100 bytes'), field('Status', status),
    h('h3', 'Permissions'), perms.el,
    h('div', { class: 'actions' }, h('button', { type: 'button', onclick: () => close(null) }, 'Cancel'), submit));
    return form;
  }, { wide: true });
}

/** Builds the users list page. */
export function usersPage(ctx) {
  const el = h('div');
  const body = h('div');
  const filter = h('input', { type: 'search', placeholder: 'Search users', 'aria-label': 'Search users' });
  let last = [];
  const draw = () => {
    const f = filter.value.toLowerCase();
    const rows = last.filter((u) => String(u.username).toLowerCase().includes(f));
    mount(body, rows.length ? table([
      { key: 'id', label: 'Id', num: true },
      { key: 'username', label: 'Username', render: (u) => h('a', { href: `#/users/${u.id}`, class: 'name' }, u.username, u.id === 0 ? ' (root)' : '') },
      { key: 'status', label: 'Status', render: (u) => badge(u.status, u.status === 'active' ? 'ok' : 'warn') },
      { key: 'created_at', label: 'Created', render: (u) => fmtTime(u.created_at) },
    ], rows, { onRow: (u) => ctx.go(`/users/${u.id}`), testid: 'users-table', sortKey: 'id' }) : empty('No user matches.'));
  };
  filter.addEventListener('input', draw);
  const add = ctx.perms.manageUsers() ? h('button', { class: 'primary', type: 'button', 'data-testid': 'new-user', onclick: async () => {
    const u = await createUserDialog(ctx);
    if (u) { toast(`User ${u.username} created`, 'ok'); ctx.go(`/users/${u.id}`); }
  } }, 'New user') : null;
  mount(el, pageHead('Users', null, filter, add), body);
  if (!ctx.perms.readUsers()) {
    mount(body, notice('Not allowed', 'Listing users needs the read_users or manage_users permission.', 'no-permission'));
    return { el };
  }
  return {
    el,
    async load() {
      last = await ctx.api.get('/users');
      draw();
    },
  };
}

function simpleForm(title, fields, submitLabel, onSubmit) {
  return modal(title, (close) => {
    const submit = h('button', { class: 'primary', type: 'submit' }, submitLabel);
    const form = h('form', { class: 'form', onsubmit: async (ev) => {
      ev.preventDefault();
      submit.disabled = true;
      try {
        await onSubmit();
        close(true);
      } catch (e) {
        showFormError(form, e);
      } finally {
        submit.disabled = false;
      }
    } }, fields, h('div', { class: 'actions' }, h('button', { type: 'button', onclick: () => close(null) }, 'Cancel'), submit));
    return form;
  }, { wide: true });
}

/** Builds one user's page. */
export function userPage(ctx, params) {
  const el = h('div');
  return {
    el,
    auto: false,
    async load() {
      const u = await ctx.api.get(`/users/${encodeURIComponent(params.id)}`);
      const self = u.id === ctx.user.id;
      const manage = ctx.perms.manageUsers();
      const reloadSelf = async () => { if (self) await ctx.reloadUser(); ctx.reload(); };
      const actions = [
        manage ? h('button', { type: 'button', 'data-testid': 'edit-user', onclick: async () => {
          const username = h('input', { name: 'username', value: u.username, minlength: 3, maxlength: 50 });
          const status = h('select', { name: 'status' }, ['active', 'inactive'].map((s) => h('option', { value: s, selected: u.status === s }, s)));
          if (await simpleForm(`Edit ${u.username}`, [field('Username', username), field('Status', status)], 'Save',
            () => ctx.api.put(`/users/${u.id}`, { username: username.value, status: status.value }))) { toast('User saved', 'ok'); reloadSelf(); }
        } }, 'Edit') : null,
        manage || self ? h('button', { type: 'button', 'data-testid': 'change-password', onclick: async () => {
          const cur = h('input', { name: 'current_password', type: 'password', autocomplete: 'current-password' });
          const nw = h('input', { name: 'new_password', type: 'password', autocomplete: 'new-password', minlength: 3, maxlength: 100 });
          if (await simpleForm(`Change password of ${u.username}`, [field('Current password', cur, 'The server checks the user\'s current password, also for administrators.'), field('New password', nw, '3 .. 100 bytes')], 'Change',
            () => ctx.api.put(`/users/${u.id}/password`, { current_password: cur.value, new_password: nw.value }))) toast('Password changed', 'ok');
        } }, 'Change password') : null,
        manage && u.id !== 0 ? actionButton('Delete', async () => {
          if (await confirmTyped({ title: `Delete user ${u.username}`, message: 'The user and their personal access tokens are deleted.', word: u.username })) {
            await ctx.api.del(`/users/${u.id}`);
            toast('User deleted', 'ok');
            ctx.go('/users');
          }
        }, { class: 'danger', 'data-testid': 'delete-user' }) : null,
      ];
      const permBox = h('div');
      const editable = manage && u.id !== 0;
      if (editable) {
        const editor = permissionEditor(u.permissions || emptyPermissions(), await streamChoices(ctx), topicLoader(ctx));
        const save = actionButton('Save permissions', async () => {
          await ctx.api.put(`/users/${u.id}/permissions`, { permissions: editor.value() });
          toast('Permissions saved', 'ok');
          await reloadSelf();
        }, { class: 'primary', 'data-testid': 'save-permissions' });
        mount(permBox, editor.el, h('div', { class: 'actions' }, save));
      } else {
        const p = u.permissions;
        const on = (o) => Object.entries(o || {}).filter(([, v]) => v === true).map(([k]) => k.replace(/_/g, ' '));
        mount(permBox, p ? kv([
          ['Global', on(p.global).join(', ') || 'none'],
          ...Object.entries(p.streams || {}).map(([sid, sp]) => [`Stream ${sid}`, [on(sp).join(', ') || 'none',
            ...Object.entries(sp.topics || {}).map(([tid, tp]) => `; topic ${tid}: ${on(tp).join(', ') || 'none'}`)].join('')]),
        ], 'permissions-kv') : empty('No permissions.'),
        u.id === 0 ? h('p', { class: 'empty' }, 'The root user\'s permissions cannot be changed.') : null);
      }
      mount(el,
        ctx.perms.readUsers() ? crumbs([['Users', '/users'], [u.username, null]]) : null,
        pageHead(u.username, `User ${u.id}${u.id === 0 ? ' (root)' : ''} · ${u.status} · created ${fmtTime(u.created_at)}`, ...actions),
        h('h2', 'Permissions'), permBox);
    },
  };
}
