// Sign-in page: username and password, or a personal access token.

import { h } from '../dom.js';
import { describeError } from '../ui.js';

/** Builds the sign-in page. */
export function signInPage({ session, message, onSignedIn }) {
  const err = h('div', { class: 'signin-error', role: 'alert', 'data-testid': 'signin-error', hidden: !message }, message || '');
  const showErr = (text) => {
    err.textContent = text;
    err.hidden = !text;
  };
  const user = h('input', { name: 'username', autocomplete: 'username', required: true, 'data-testid': 'username', value: '' });
  const pass = h('input', { name: 'password', type: 'password', autocomplete: 'current-password', required: true, 'data-testid': 'password' });
  const pat = h('input', { name: 'token', type: 'password', autocomplete: 'off', 'data-testid': 'pat' });
  const submit = h('button', { class: 'primary', type: 'submit', 'data-testid': 'signin' }, 'Sign in');
  let usePAT = false;
  const pwFields = h('div', h('label', { class: 'field' }, h('span', { class: 'field-label' }, 'Username'), user),
    h('label', { class: 'field' }, h('span', { class: 'field-label' }, 'Password'), pass));
  const patFields = h('div', { hidden: true }, h('label', { class: 'field' }, h('span', { class: 'field-label' }, 'Personal access token'), pat));
  const switcher = h('button', { type: 'button', class: 'linkish', onclick: () => {
    usePAT = !usePAT;
    pwFields.hidden = usePAT;
    patFields.hidden = !usePAT;
    user.required = pass.required = !usePAT;
    pat.required = usePAT;
    switcher.textContent = usePAT ? 'Use username and password' : 'Use a personal access token';
  } }, 'Use a personal access token');

  const form = h('form', { class: 'signin-form', onsubmit: async (ev) => {
    ev.preventDefault();
    showErr('');
    submit.disabled = true;
    submit.textContent = 'Signing in…';
    try {
      if (usePAT) await session.loginPAT(pat.value.trim());
      else await session.login(user.value.trim(), pass.value);
      onSignedIn();
    } catch (e) {
      if (e.status === 400 || e.status === 401) showErr(usePAT ? 'That token is unknown or expired.' : 'Wrong username or password, or the user is inactive.');
      else showErr(describeError(e));
    } finally {
      submit.disabled = false;
      submit.textContent = 'Sign in';
    }
  } }, h('h1', 'Sign in to Iggo'), err, pwFields, patFields, submit, switcher);
  setTimeout(() => user.focus(), 0);
  return h('div', { class: 'signin' }, h('div', { class: 'signin-card' }, h('div', { class: 'brand big' }, h('span', { class: 'logo', 'aria-hidden': 'true' }, '◆'), 'Iggo console'), form));
}
