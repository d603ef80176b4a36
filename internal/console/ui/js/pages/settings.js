// Console settings: refresh interval and theme, kept in this browser.

import { h, mount } from '../dom.js';
import { pageHead, field, toast } from '../ui.js';
import { getSetting, setRefreshMs, applyTheme, REFRESH_MIN_MS, REFRESH_MAX_MS } from '../settings.js';

/** Builds the settings page. */
export function settingsPage() {
  const el = h('div');
  const secs = h('input', { type: 'number', min: REFRESH_MIN_MS / 1000, max: REFRESH_MAX_MS / 1000, value: String(getSetting('refreshMs') / 1000), 'data-testid': 'refresh-seconds' });
  const theme = h('select', {}, ['system', 'light', 'dark'].map((t) => h('option', { value: t, selected: getSetting('theme') === t }, t)));
  const form = h('form', { class: 'form panel', onsubmit: (ev) => {
    ev.preventDefault();
    const ms = setRefreshMs(Number(secs.value) * 1000);
    localStorage.setItem('iggo.theme', theme.value);
    applyTheme();
    secs.value = String(ms / 1000);
    toast('Settings saved in this browser', 'ok');
  } }, field('Refresh pages every (seconds)', secs, `${REFRESH_MIN_MS / 1000} .. ${REFRESH_MAX_MS / 1000}`), field('Theme', theme),
  h('div', { class: 'actions' }, h('button', { class: 'primary', type: 'submit' }, 'Save')));
  mount(el, pageHead('Settings', 'Preferences of this browser'), form);
  return { el };
}
