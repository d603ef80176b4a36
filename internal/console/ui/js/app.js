// Console shell: session, hash router, navigation, theme and the periodic
// refresh of the open page.
//
// A page module exports page(ctx, params, query) returning
// {el, load?, dispose?, title}; load() runs at once and then on every refresh
// tick (interval persisted in localStorage, "iggo.refreshMs"), unless the page
// sets auto=false (the message browser drives its own polling).

import { h, mount } from './dom.js';
import { Session, ApiError } from './api.js';
import { Perms } from './perms.js';
import { errorPanel, toast, describeError } from './ui.js';
import { routes, NAV } from './routes.js';
import { signInPage } from './pages/signin.js';
import { getSetting, applyTheme } from './settings.js';
import { StatsHistory } from './chart.js';

const session = new Session();
const state = {
  user: null,
  perms: new Perms(null),
  page: null,
  timer: null,
  signInMessage: '',
  history: new StatsHistory(),
};

const root = document.getElementById('app');
const banner = h('div', { class: 'banner', hidden: true, role: 'alert', 'data-testid': 'unreachable-banner' });

session.onAuthLost = (msg) => {
  state.user = null;
  state.signInMessage = msg;
  if (location.hash !== '#/sign-in') location.hash = '#/sign-in';
  else render();
};
session.onReachability = (ok) => {
  banner.hidden = ok;
  mount(banner, ok ? '' : 'Server unreachable: the console keeps retrying. Data shown may be stale.');
};

function parseHash() {
  const raw = location.hash.replace(/^#/, '') || '/overview';
  const [path, qs] = raw.split('?');
  const query = Object.fromEntries(new URLSearchParams(qs || ''));
  const parts = path.split('/').filter(Boolean).map((p) => decodeURIComponent(p));
  for (const r of routes) {
    if (r.parts.length !== parts.length) continue;
    const params = {};
    let ok = true;
    r.parts.forEach((p, i) => {
      if (p.startsWith(':')) params[p.slice(1)] = parts[i];
      else if (p !== parts[i]) ok = false;
    });
    if (ok) return { route: r, params, query, path };
  }
  return { route: null, params: {}, query, path };
}

async function loadUser() {
  if (session.userId === null) throw new Error('the token names no user');
  let u;
  try {
    u = await session.get(`/users/${session.userId}`);
  } catch (e) {
    // GET /users/me names the caller too; use it when the id form fails
    if (!(e instanceof ApiError) || e.status === 401) throw e;
    u = await session.get('/users/me');
  }
  state.user = u;
  state.perms = new Perms(u.permissions);
}

function stopPage() {
  if (state.timer) clearInterval(state.timer);
  state.timer = null;
  if (state.page && state.page.dispose) state.page.dispose();
  state.page = null;
}

function navLinks(current) {
  return NAV.filter((n) => !n.visible || n.visible(state.perms)).map((n) =>
    h('a', { href: '#' + n.href, class: current.startsWith(n.href) ? 'active' : '', 'data-testid': 'nav-' + n.id }, n.label));
}

function shell(content, current) {
  const themeSel = h('select', { 'aria-label': 'Theme', 'data-testid': 'theme-select', onchange: (ev) => { localStorage.setItem('iggo.theme', ev.target.value); applyTheme(); } },
    ['system', 'light', 'dark'].map((t) => h('option', { value: t, selected: getSetting('theme') === t }, t[0].toUpperCase() + t.slice(1))));
  const navBox = h('nav', { class: 'nav', id: 'nav' }, navLinks(current));
  const toggle = h('button', { class: 'icon nav-toggle', type: 'button', 'aria-label': 'Menu', 'aria-controls': 'nav', onclick: () => navBox.classList.toggle('open') }, '☰');
  navBox.addEventListener('click', (ev) => { if (ev.target.tagName === 'A') navBox.classList.remove('open'); });
  return h('div', { class: 'shell' },
    h('header', { class: 'top' },
      toggle,
      h('a', { class: 'brand', href: '#/overview' }, h('span', { class: 'logo', 'aria-hidden': 'true' }, '◆'), 'Iggo'),
      h('div', { class: 'top-right' },
        themeSel,
        h('span', { class: 'who', 'data-testid': 'current-user' }, state.user ? state.user.username : ''),
        h('button', { type: 'button', 'data-testid': 'logout', onclick: async () => { await session.logout(); state.user = null; state.signInMessage = 'You signed out.'; location.hash = '#/sign-in'; } }, 'Sign out'))),
    banner,
    h('div', { class: 'body' }, navBox, h('main', { class: 'main', id: 'main' }, content)));
}

async function render() {
  stopPage();
  const { route, params, query, path } = parseHash();
  if (path === '/sign-in' || !session.token) {
    if (session.token && path === '/sign-in') {
      location.hash = '#/overview';
      return;
    }
    const msg = state.signInMessage;
    state.signInMessage = '';
    mount(root, signInPage({ session, message: msg, onSignedIn: () => { location.hash = '#/overview'; } }));
    return;
  }
  if (!state.user) {
    mount(root, h('div', { class: 'loading' }, 'Loading…'));
    try {
      await loadUser();
    } catch (e) {
      if (e instanceof ApiError && e.status === 401) return; // onAuthLost navigates
      mount(root, shell(errorPanel(e, h('button', { type: 'button', onclick: () => render() }, 'Retry')), path));
      return;
    }
  }
  if (!route) {
    mount(root, shell(errorPanel(new Error(`No page at ${path}`)), path));
    return;
  }
  const container = h('div', { class: 'page' });
  mount(root, shell(container, path));
  document.title = `${route.title} · Iggo console`;
  const ctx = {
    api: session,
    user: state.user,
    perms: state.perms,
    history: state.history,
    go: (href) => { location.hash = '#' + href; },
    reload: () => render(),
    reloadUser: async () => { await loadUser(); },
  };
  let page;
  try {
    page = route.page(ctx, params, query);
  } catch (e) {
    mount(container, errorPanel(e));
    return;
  }
  state.page = page;
  const status = h('div', { class: 'refresh-status', 'data-testid': 'refresh-status' });
  mount(container, status, page.el);
  let failedOnce = false;
  let gone = false;
  const run = async (first) => {
    if (!page.load) return;
    try {
      await page.load(first);
      if (failedOnce) mount(status, '');
      failedOnce = false;
    } catch (e) {
      if (e instanceof ApiError && e.status === 401) return;
      // a first failure, or the entity vanished (deleted elsewhere): explain
      if (first || (e instanceof ApiError && e.status === 404)) {
        if (e instanceof ApiError && e.status === 404) {
          gone = true;
          if (state.page === page && state.timer) clearInterval(state.timer);
          if (state.page === page) state.timer = null;
        }
        mount(page.el, errorPanel(e, h('p', e.status === 404 ? 'It may have been deleted. ' : '',
          h('button', { type: 'button', class: 'small', onclick: () => render() }, 'Retry'), ' ', h('a', { href: '#/overview' }, 'Back to the overview'))));
        return;
      }
      failedOnce = true;
      mount(status, h('div', { class: 'stale' }, 'Refresh failed: ' + describeError(e)));
    }
  };
  await run(true);
  if (page.auto !== false && page.load && state.page === page && !gone) {
    state.timer = setInterval(() => { if (!document.hidden) run(false); }, getSetting('refreshMs'));
  }
}

window.addEventListener('hashchange', () => render());
window.addEventListener('unhandledrejection', (ev) => {
  toast('Unexpected error: ' + describeError(ev.reason), 'error');
});
applyTheme();
session.restore();
render();
