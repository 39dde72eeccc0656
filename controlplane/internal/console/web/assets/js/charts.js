// Charts drawn as inline SVG: a sparkline for the overview and a line chart per region for the
// check detail. A few hundred points at most, so no chart library is needed.
import { h, s, ms } from './ui.js';

const num = (v) => (v === null || v === undefined || Number.isNaN(Number(v)) ? null : Number(v));

// sparkline draws points [{t, runs, failed, p50_ms}] (oldest first): the median response
// time as a line over an area, and a red tick under each hour with a failed run.
export function sparkline(points, { width = 120, height = 28 } = {}) {
  const vals = points.map((p) => num(p.p50_ms));
  const max = Math.max(1, ...vals.filter((v) => v !== null));
  const n = Math.max(points.length - 1, 1);
  const x = (i) => (i / n) * width;
  const y = (v) => height - 4 - (v / max) * (height - 7);
  let line = '';
  let area = '';
  let open = false;
  vals.forEach((v, i) => {
    if (v === null) { open = false; return; }
    line += `${open ? 'L' : 'M'}${x(i).toFixed(1)},${y(v).toFixed(1)}`;
    open = true;
  });
  const first = vals.findIndex((v) => v !== null);
  if (first >= 0) {
    const last = vals.length - 1 - [...vals].reverse().findIndex((v) => v !== null);
    area = `M${x(first).toFixed(1)},${height - 3}` + vals.map((v, i) => (v === null || i < first || i > last ? '' : `L${x(i).toFixed(1)},${y(v).toFixed(1)}`)).join('') + `L${x(last).toFixed(1)},${height - 3}Z`;
  }
  const fails = points.map((p, i) => (p.failed > 0 ? s('rect', { class: 'fail', x: Math.max(0, x(i) - 1.5).toFixed(1), y: height - 3, width: 3, height: 3 }) : null));
  const total = points.reduce((a, p) => a + (p.runs || 0), 0);
  const failed = points.reduce((a, p) => a + (p.failed || 0), 0);
  const label = total ? `Response time over 24 hours, median up to ${ms(max)}; ${failed} of ${total} runs failed` : 'No runs in the last 24 hours';
  return s('svg', { class: 'spark', width, height, viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': label },
    s('title', {}, label),
    area ? s('path', { class: 'area', d: area }) : null,
    line ? s('path', { class: 'line', d: line }) : null,
    fails);
}

// lineChart draws several series [{name, tone (0..7), points: [{t: Date, v: number|null}]}] on one
// time axis, with optional failure marks [{t}] under it.
export function lineChart(series, { from, to, width = 880, height = 220, unit = ms, fails = [] } = {}) {
  const padL = 48; const padR = 10; const padT = 10; const padB = 24;
  const all = series.flatMap((sr) => sr.points.map((p) => num(p.v))).filter((v) => v !== null);
  const max = niceMax(Math.max(1, ...all));
  const t0 = from.getTime(); const t1 = to.getTime();
  const x = (t) => padL + ((t - t0) / (t1 - t0)) * (width - padL - padR);
  const y = (v) => padT + (1 - v / max) * (height - padT - padB);
  const kids = [];
  for (let i = 0; i <= 4; i++) {
    const v = (max / 4) * i;
    kids.push(s('line', { class: 'grid-line', x1: padL, x2: width - padR, y1: y(v), y2: y(v) }));
    kids.push(s('text', { x: padL - 6, y: y(v) + 3, 'text-anchor': 'end' }, unit(v)));
  }
  const span = t1 - t0;
  for (let i = 0; i <= 5; i++) {
    const t = t0 + (span / 5) * i;
    kids.push(s('text', { x: x(t), y: height - 6, 'text-anchor': i === 0 ? 'start' : i === 5 ? 'end' : 'middle' }, tickLabel(new Date(t), span)));
  }
  for (const sr of series) {
    let d = '';
    let open = false;
    for (const p of sr.points) {
      const v = num(p.v);
      if (v === null) { open = false; continue; }
      d += `${open ? 'L' : 'M'}${x(p.t.getTime()).toFixed(1)},${y(v).toFixed(1)}`;
      open = true;
    }
    if (d) kids.push(s('path', { class: `series c${sr.tone % 8}`, d }, s('title', {}, sr.name)));
  }
  for (const f of fails) kids.push(s('rect', { class: 'fail-mark', x: x(f.t.getTime()) - 1.5, y: height - padB + 1, width: 3, height: 4 }));
  return s('svg', { class: 'chart', viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': series.map((sr) => sr.name).join(', ') }, kids);
}

function niceMax(v) {
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

function tickLabel(d, span) {
  if (span <= 2 * 86400e3) return d.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
  return d.toLocaleDateString(undefined, { month: 'short', day: 'numeric' });
}

// legend names each series [{name, tone}] by its colour.
export function legend(items) {
  return h('div', { class: 'legend' }, items.map((it) => h('span', {}, h('span', { class: `sw c${it.tone % 8}`, 'aria-hidden': 'true' }), it.name)));
}

// statusStrip draws one bar per bucket of a series [{t, runs, failed}] (every region summed):
// red with a failed run, green with runs that all passed, grey without runs — the check's
// recent history at a glance.
export function statusStrip(buckets, { width = 880, height = 22 } = {}) {
  const n = Math.max(buckets.length, 1);
  const w = width / n;
  const bars = buckets.map((b, i) => {
    const tone = b.failed > 0 ? 'down' : b.runs > 0 ? 'up' : 'none';
    const label = `${new Date(b.t).toLocaleString()}: ${b.runs} runs, ${b.failed} failed`;
    return s('rect', { class: `strip-${tone}`, x: (i * w + 0.5).toFixed(1), y: 0, width: Math.max(w - 1, 1).toFixed(1), height, rx: Math.min(2, w / 3).toFixed(1) },
      s('title', {}, label));
  });
  const failed = buckets.filter((b) => b.failed > 0).length;
  return s('svg', { class: 'strip', viewBox: `0 0 ${width} ${height}`, preserveAspectRatio: 'none', role: 'img',
    'aria-label': `${failed} of ${buckets.length} periods had a failed run` }, bars);
}
