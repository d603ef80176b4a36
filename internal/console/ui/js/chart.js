// Rolling history of GET /stats samples and a small SVG line chart.

import { svg, h } from './dom.js';
import { sizeStringToBytes } from './format.js';

/** Samples kept per series (at 5 s per sample: 30 minutes). */
export const HISTORY_SAMPLES = 360;

/**
 * Keeps the last HISTORY_SAMPLES stats samples and derives rates from
 * consecutive ones. A counter that goes down (server restart) starts over.
 */
export class StatsHistory {
  constructor(limit = HISTORY_SAMPLES) {
    this.limit = limit;
    this.points = []; // {t, cpu, mem, msgRate, inRate, outRate}
    this.prev = null;
  }

  /** Adds a /stats reply taken at time t (ms). */
  add(stats, t = Date.now()) {
    const cur = {
      t,
      messages: Number(stats.messages_count),
      written: sizeStringToBytes(stats.written_bytes),
      read: sizeStringToBytes(stats.read_bytes),
    };
    const p = { t, cpu: Number(stats.cpu_usage), mem: sizeStringToBytes(stats.memory_usage), msgRate: null, inRate: null, outRate: null };
    const prev = this.prev;
    if (prev && t > prev.t) {
      const dt = (t - prev.t) / 1000;
      const rate = (a, b) => (a >= b ? (a - b) / dt : null);
      p.msgRate = rate(cur.messages, prev.messages);
      p.inRate = rate(cur.written, prev.written);
      p.outRate = rate(cur.read, prev.read);
    }
    this.prev = cur;
    this.points.push(p);
    if (this.points.length > this.limit) this.points.splice(0, this.points.length - this.limit);
  }

  /** Values of one series as [t, v] pairs, nulls dropped. */
  series(key) {
    return this.points.filter((p) => p[key] !== null && Number.isFinite(p[key])).map((p) => [p.t, p[key]]);
  }
}

/**
 * Draws a line chart of one or more series: [{name, points: [[t, v]], cls}].
 * fmt formats a value for the axis and legend.
 */
export function lineChart(title, seriesList, fmt, testid) {
  const W = 600;
  const H = 160;
  const P = { l: 2, r: 2, t: 18, b: 4 };
  const all = seriesList.flatMap((s) => s.points);
  const last = (s) => (s.points.length ? fmt(s.points[s.points.length - 1][1]) : '—');
  const legend = h('div', { class: 'legend' }, seriesList.map((s) => h('span', { class: ['legend-item', s.cls] }, h('i', { class: 'swatch' }), `${s.name}: `, h('b', last(s)))));
  const box = h('figure', { class: 'chart', 'data-testid': testid }, h('figcaption', title), legend);
  if (all.length < 2) {
    box.appendChild(h('div', { class: 'chart-empty' }, 'Collecting samples…'));
    return box;
  }
  const t0 = Math.min(...all.map((p) => p[0]));
  const t1 = Math.max(...all.map((p) => p[0]));
  let vmax = Math.max(...all.map((p) => p[1]));
  if (!(vmax > 0)) vmax = 1;
  vmax *= 1.1;
  const x = (t) => P.l + ((t - t0) / Math.max(1, t1 - t0)) * (W - P.l - P.r);
  const y = (v) => H - P.b - (v / vmax) * (H - P.t - P.b);
  const grid = [0.25, 0.5, 0.75, 1].map((f) => svg('line', { class: 'grid', x1: P.l, x2: W - P.r, y1: y(vmax * f / 1.1), y2: y(vmax * f / 1.1) }));
  const lines = seriesList.filter((s) => s.points.length > 1).map((s) =>
    svg('polyline', { class: ['line', s.cls].join(' '), fill: 'none', points: s.points.map(([t, v]) => `${x(t).toFixed(1)},${y(v).toFixed(1)}`).join(' ') }));
  const span = Math.round((t1 - t0) / 1000);
  const chart = svg('svg', { viewBox: `0 0 ${W} ${H}`, preserveAspectRatio: 'none', role: 'img', 'aria-label': title },
    grid,
    lines);
  // labels are HTML: SVG text would be stretched with the chart
  box.appendChild(h('div', { class: 'chart-plot' }, h('span', { class: 'chart-max' }, fmt(vmax / 1.1)), chart));
  box.appendChild(h('div', { class: 'chart-axis' }, h('span', `${span}s ago`), h('span', 'now')));
  return box;
}
