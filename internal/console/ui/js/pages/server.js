// Server: the effective configuration (read-only, secrets masked), the
// option catalogues (GET /options/{scope}) and snapshot download
// (POST /snapshot).
//
// The reference API has no configuration route. The console reads the Iggo
// extension GET /config (the effective configuration as JSON, tables as
// objects, secrets already masked by the server) and shows "not available"
// when the server answers 404. Values whose key names a secret are masked
// here too, in case a server does not.

import { h, mount } from '../dom.js';
import { pageHead, table, empty, field, toast, errorPanel, download, describeError, notice } from '../ui.js';
import { ApiError } from '../api.js';

/** Key names whose values are never displayed. */
const SECRET_KEY = /(secret|password|passphrase|psk|token|private_key|credential)/i;
const MASK = '••••••';

/** Flattens a nested config object into [dotted key, value] rows. */
export function flattenConfig(obj, prefix = '') {
  const out = [];
  for (const [k, v] of Object.entries(obj || {})) {
    const key = prefix ? `${prefix}.${k}` : k;
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) out.push(...flattenConfig(v, key));
    else out.push([key, SECRET_KEY.test(k) && v !== '' && v !== null ? MASK : Array.isArray(v) ? JSON.stringify(v, (_, x) => (typeof x === 'bigint' ? x.toString() : x)) : String(v)]);
  }
  return out;
}

const COMPRESSIONS = ['Deflated', 'Stored', 'Bzip2', 'Zstd', 'Lzma', 'Xz'];
const SNAPSHOT_TYPES = ['FilesystemOverview', 'ProcessList', 'ResourceUsage', 'ServerLogs', 'ServerConfig', 'Test'];

function snapshotPanel(ctx) {
  const comp = h('select', { name: 'compression' }, COMPRESSIONS.map((c) => h('option', { value: c }, c)));
  const all = h('input', { type: 'checkbox', checked: true });
  const types = SNAPSHOT_TYPES.map((t) => ({ t, box: h('input', { type: 'checkbox', checked: t !== 'Test', disabled: true }) }));
  all.addEventListener('change', () => { for (const x of types) x.box.disabled = all.checked; });
  const btn = h('button', { class: 'primary', type: 'submit', 'data-testid': 'snapshot' }, 'Download snapshot');
  const form = h('form', { class: 'form', onsubmit: async (ev) => {
    ev.preventDefault();
    btn.disabled = true;
    btn.textContent = 'Collecting…';
    try {
      const snapshot_types = all.checked ? ['All'] : types.filter((x) => x.box.checked).map((x) => x.t);
      if (!snapshot_types.length) throw new Error('Pick at least one kind of data');
      const res = await ctx.api.request('POST', '/snapshot', { body: { compression: comp.value, snapshot_types }, raw: true });
      const cd = res.headers.get('content-disposition') || '';
      const m = /filename="?([^";]+)"?/.exec(cd);
      download(m ? m[1] : 'iggo_snapshot.zip', await res.blob());
      toast('Snapshot downloaded', 'ok');
    } catch (e) {
      toast('Snapshot failed: ' + describeError(e), 'error');
    } finally {
      btn.disabled = false;
      btn.textContent = 'Download snapshot';
    }
  } }, h('p', 'A ZIP of diagnostic data collected by the server: file listing, processes, resource usage, logs and configuration.'),
  field('Compression', comp), h('label', { class: 'check' }, all, ' Everything'),
  h('div', { class: 'flags' }, types.map((x) => h('label', { class: 'check' }, x.box, ' ' + x.t))),
  h('div', { class: 'actions' }, btn));
  return h('div', { class: 'panel' }, h('h2', 'Snapshot'), form);
}

/** Builds the server page. */
export function serverPage(ctx) {
  const el = h('div');
  const cfgBox = h('div', { class: 'panel' });
  const optBox = h('div', { class: 'panel' });
  const filter = h('input', { type: 'search', placeholder: 'Filter keys', 'aria-label': 'Filter configuration' });
  let rows = [];
  const drawCfg = () => {
    const f = filter.value.toLowerCase();
    const shown = rows.filter(([k, v]) => k.toLowerCase().includes(f) || v.toLowerCase().includes(f));
    mount(cfgBox, h('div', { class: 'section-head' }, h('h2', 'Effective configuration'), filter),
      shown.length ? table([{ key: 'k', label: 'Key', render: (r) => h('code', r.k) }, { key: 'v', label: 'Value' }], shown.map(([k, v]) => ({ k, v })), { testid: 'config-table' }) : empty('No key matches.'));
  };
  filter.addEventListener('input', drawCfg);
  mount(el, pageHead('Server', 'Configuration, options and diagnostics'), cfgBox,
    ctx.perms.serverInfo() ? snapshotPanel(ctx) : notice('Snapshot', 'Downloading a snapshot needs the read_servers or manage_servers permission.', 'no-permission'),
    optBox);
  return {
    el,
    auto: false,
    async load() {
      try {
        const cfg = await ctx.api.get('/config');
        rows = flattenConfig(cfg);
        drawCfg();
      } catch (e) {
        if (e instanceof ApiError && (e.status === 404 || e.status === 405)) {
          mount(cfgBox, h('h2', 'Effective configuration'), h('p', { class: 'empty', 'data-testid': 'config-unavailable' },
            'Not available: this server does not expose its configuration over HTTP (GET /config). ', h('code', 'iggo server --print-config'), ' on the host shows it.'));
        } else mount(cfgBox, errorPanel(e));
      }
      const scopes = ['topic', 'stream', 'user'];
      const results = await Promise.all(scopes.map((s) => ctx.api.get(`/options/${s}`).then((v) => ({ s, v }), (e) => ({ s, e }))));
      mount(optBox, h('h2', 'Options'), results.map(({ s, v, e }) => [h('h3', `${s} options`), e ? h('p', { class: 'empty' }, describeError(e)) :
        v.length ? table([{ key: 'key', label: 'Key', render: (o) => h('code', o.key) }, { key: 'kind', label: 'Kind' }, { key: 'description', label: 'Description' }], v) : empty('None.')]));
    },
  };
}
