// Overview: every field of GET /stats plus live charts of message and byte
// rates, CPU and memory, from a rolling client-side history of samples.

import { h, mount } from '../dom.js';
import { card, kv, pageHead, notice, empty } from '../ui.js';
import { lineChart } from '../chart.js';
import { fmtBytes, fmtInt, fmtTime, prettySize as ps, fmtUptime } from '../format.js';

const rate = (v) => (v >= 100 ? Math.round(v).toLocaleString() : v.toFixed(1)) + '/s';
const byteRate = (v) => fmtBytes(Math.round(v)) + '/s';
const pct = (v) => v.toFixed(1) + ' %';

/** Builds the overview page. */
export function overviewPage(ctx) {
  const el = h('div');
  if (!ctx.perms.serverInfo()) {
    mount(el, pageHead('Overview'), notice('Statistics not available', 'Server statistics need the read_servers or manage_servers permission. Your streams are under Streams.', 'no-permission'));
    return { el };
  }
  const cards = h('div', { class: 'cards', 'data-testid': 'stats-cards' });
  const charts = h('div', { class: 'charts' });
  const details = h('div', { class: 'panel' });
  mount(el, pageHead('Overview', 'Live server statistics'), cards, charts, details);

  return {
    el,
    async load() {
      const s = await ctx.api.get('/stats');
      ctx.history.add(s);
      mount(cards,
        card('Messages', fmtInt(s.messages_count), ps(s.messages_size_bytes)),
        card('Streams', fmtInt(s.streams_count), `${fmtInt(s.topics_count)} topics`),
        card('Partitions', fmtInt(s.partitions_count), `${fmtInt(s.segments_count)} segments`),
        card('Clients', fmtInt(s.clients_count), `${fmtInt(s.consumer_groups_count)} consumer groups`),
        card('CPU', pct(Number(s.cpu_usage)), `system ${pct(Number(s.total_cpu_usage))}`),
        card('Memory', ps(s.memory_usage), `of ${ps(s.total_memory)} (${ps(s.available_memory)} available)`),
        card('Disk free', ps(s.free_disk_space), `of ${ps(s.total_disk_space)}`),
        card('Uptime', fmtUptime(s.run_time), `since ${fmtTime(s.start_time)}`));
      const H = ctx.history;
      mount(charts,
        lineChart('Messages per second', [{ name: 'appended', points: H.series('msgRate'), cls: 's1' }], rate, 'chart-messages'),
        lineChart('Bytes per second', [
          { name: 'in (written)', points: H.series('inRate'), cls: 's1' },
          { name: 'out (read)', points: H.series('outRate'), cls: 's2' }], byteRate, 'chart-bytes'),
        lineChart('CPU usage (process)', [{ name: 'cpu', points: H.series('cpu'), cls: 's3' }], pct, 'chart-cpu'),
        lineChart('Memory usage (process)', [{ name: 'rss', points: H.series('mem'), cls: 's4' }], (v) => fmtBytes(Math.round(v)), 'chart-memory'));
      const cache = Object.entries(s.cache_metrics || {});
      mount(details, h('h2', 'Server'), kv([
        ['Version', `${s.iggy_server_version}${s.iggy_server_semver !== null && s.iggy_server_semver !== undefined ? ` (semver ${s.iggy_server_semver})` : ''}`],
        ['Process id', String(s.process_id)],
        ['Threads', fmtInt(s.threads_count)],
        ['Host', s.hostname],
        ['OS', `${s.os_name} ${s.os_version}`],
        ['Kernel', s.kernel_version],
        ['Read bytes', `${ps(s.read_bytes)} (${s.read_bytes})`],
        ['Written bytes', `${ps(s.written_bytes)} (${s.written_bytes})`],
        ['Started', fmtTime(s.start_time)],
      ], 'server-kv'),
      h('h2', 'Cache'), cache.length ? kv(cache.map(([k, v]) => [k, `${fmtInt(v.hits)} hits, ${fmtInt(v.misses)} misses, ratio ${Number(v.hit_ratio).toFixed(2)}`])) : empty('No cache metrics reported.'));
    },
  };
}
