// Check detail: status and actions, response time per region with timing phases, the regional
// view, recent results (a failed browser run with its screenshot), incidents, the SLA report
// with its CSV, and the settings that decide a verdict (regions, quorum, dependencies).
import { h, s, clear, field, setTitle, statusBadge, kindLabel, pct, ms, time, dateTime, duration, region, errorBox, toast, confirmDialog } from '../ui.js';
import { lineChart, legend, statusStrip } from '../charts.js';

const SEGMENT = { UPTIME: 'uptime', BROWSER: 'browser', DNS: 'dns', TCP: 'tcp', MULTISTEP: 'multistep', PING: 'ping', GRPC: 'grpc', WEBSOCKET: 'websocket' };
const RANGES = [['1h', '1 hour'], ['24h', '24 hours'], ['7d', '7 days'], ['30d', '30 days']];
const RANGE_MS = { '1h': 3600e3, '24h': 86400e3, '7d': 7 * 86400e3, '30d': 30 * 86400e3 };
const POLL_MS = 15000;
const RESULTS = 25;

export function target(c) {
  switch (c.check_type) {
    case 'DNS': return `${c.dns_record_type} ${c.dns_domain}${c.dns_resolver ? ` @ ${c.dns_resolver}` : ''}`;
    case 'TCP': return `${c.tcp_hostname}:${c.tcp_port}`;
    case 'PING': return c.ping_hostname;
    case 'GRPC': return `${c.grpc_hostname}:${c.grpc_port}${c.grpc_service ? ` (${c.grpc_service})` : ''}`;
    case 'WEBSOCKET': return c.url;
    default: return c.url || 'Script';
  }
}

function panel(title, ...body) {
  const slot = h('div', { class: 'panel-body' }, ...body);
  const extra = h('span', { class: 'panel-tools' });
  const el = h('section', { class: 'panel', 'aria-label': title },
    h('div', { class: 'panel-head' }, h('h2', {}, title), h('span', { class: 'spacer' }), extra), slot);
  return { el, slot, extra };
}

function loading() { return h('p', { class: 'muted' }, 'Loading…'); }

export async function render(root, { id }, ctx) {
  let check;
  try {
    check = await ctx.api.get(`/v1/checks/${encodeURIComponent(id)}`, undefined, { signal: ctx.signal });
  } catch (err) {
    if (err.name === 'AbortError') return;
    setTitle(err.status === 404 ? 'Not found' : 'Error');
    root.append(errorBox(err));
    return;
  }
  setTitle(check.name, 'Checks');
  const base = `/v1/checks/${encodeURIComponent(check.id)}`;
  const typed = `/v1/checks/${SEGMENT[check.check_type]}/${encodeURIComponent(check.id)}`;
  const canEdit = ctx.can('UPTIME_CHECKS:EDIT');

  const head = h('div', {});
  const drawHead = () => clear(head,
    h('div', { class: 'crumbs' }, h('a', { href: '/console/checks' }, 'Checks'), ' / ', kindLabel(check.check_type)),
    h('div', { class: 'page-head detail-head' },
      h('h1', {}, check.name), statusBadge(check.status), degradedBadge(check.degraded), h('span', { class: 'spacer' }),
      canEdit ? actions() : null),
    h('div', { class: 'detail-head' }, h('div', { class: 'meta' },
      h('span', { class: 'mono' }, target(check)),
      h('span', {}, `every ${duration(check.test_interval)}`),
      h('span', {}, `${(check.test_regions || []).length} regions`),
      h('span', {}, 'last queued ', time(check.last_queued)),
      check.skipped_runs_24h > 0 ? h('span', { class: 'skipped' }, `${check.skipped_runs_24h} skipped runs in 24h`) : null)));

  const patch = async (body, done) => {
    try {
      check = { ...check, ...await ctx.api.patch(base, body) };
      toast(done);
      drawHead();
    } catch (err) {
      toast(err.message, 'error');
    }
  };
  const actions = () => {
    const paused = check.status === 'PAUSED';
    const muted = check.status === 'MUTED';
    return h('div', { class: 'actions', role: 'group', 'aria-label': 'Check actions' },
      h('button', { type: 'button', class: 'btn', onclick: () => patch({ paused: !paused }, paused ? 'Check resumed' : 'Check paused') }, paused ? 'Resume' : 'Pause'),
      h('button', { type: 'button', class: 'btn', onclick: () => patch({ muted: !muted }, muted ? 'Alerts unmuted' : 'Alerts muted') }, muted ? 'Unmute' : 'Mute'),
      h('a', { class: 'btn', href: `/console/checks/${encodeURIComponent(check.id)}/edit` }, 'Edit'),
      h('button', {
        type: 'button', class: 'btn btn-danger',
        onclick: async () => {
          if (!await confirmDialog(`Delete the check “${check.name}” with its results and incidents?`, 'Delete', true)) return;
          try {
            await ctx.api.del(base);
            toast('Check deleted');
            ctx.navigate('/console/checks');
          } catch (err) {
            toast(err.message, 'error');
          }
        },
      }, 'Delete'));
  };
  drawHead();

  const chart = panel('Response time by region');
  const regions = panel('Regions now');
  const results = panel('Recent results');
  const incidents = panel('Incidents');
  const sla = panel('SLA report');
  const settings = panel('Verdict and alerting');
  const badges = panel('Badges');
  root.append(head, h('div', { class: 'cols' },
    h('div', { class: 'stack' }, chart.el, results.el),
    h('div', { class: 'stack' }, regions.el, incidents.el, sla.el, settings.el, badges.el)));

  const opts = { signal: ctx.signal };
  drawSettings(settings, check, ctx);
  const loads = [
    drawChart(chart, base, ctx, '24h'),
    drawRegions(regions, base, ctx),
    drawResults(results, check, typed, base, ctx),
    drawIncidents(incidents, typed, ctx),
    drawSLA(sla, base, ctx),
    drawBadges(badges, base, ctx, canEdit),
  ];
  await Promise.allSettled(loads);
  root.dataset.ready = 'true';

  // The status, the regions and the latest results follow the check while the tab is visible.
  const timer = setInterval(async () => {
    if (document.hidden) return;
    try {
      check = { ...check, ...await ctx.api.get(base, undefined, opts) };
      drawHead();
      await drawRegions(regions, base, ctx);
    } catch {
      // The next tick tries again; a 401 already sent the person to sign-in.
    }
  }, POLL_MS);
  ctx.signal.addEventListener('abort', () => clearInterval(timer));
}

// ---- response time ----

async function drawChart(p, base, ctx, range) {
  const metric = { value: 'p50_ms' };
  const seg = h('div', { class: 'seg', role: 'group', 'aria-label': 'Range' });
  const metricSel = h('select', { id: 'chart-metric', 'aria-label': 'Percentile' },
    h('option', { value: 'p50_ms' }, 'p50'), h('option', { value: 'p95_ms' }, 'p95'));
  clear(p.extra, metricSel, seg);
  let data = null;
  const draw = () => {
    if (!data) return;
    const series = (data.regions || []).map((r, i) => ({
      name: region(r.region), tone: i,
      points: (r.points || []).map((pt) => ({ t: new Date(pt.t), v: pt[metric.value] })),
    }));
    const fails = (data.regions || []).flatMap((r) => (r.points || []).filter((pt) => pt.failed > 0).map((pt) => ({ t: new Date(pt.t) })));
    const to = data.to ? new Date(data.to) : new Date();
    const from = data.from ? new Date(data.from) : new Date(to.getTime() - RANGE_MS[range]);
    if (!series.some((sr) => sr.points.some((pt) => pt.v !== null && pt.v !== undefined))) {
      clear(p.slot, h('p', { class: 'muted' }, 'No passing runs in this range yet.'));
      return;
    }
    clear(p.slot, statusStrip(buckets(data.regions || [])), lineChart(series, { from, to, fails }), legend(series), phases(data.regions || []));
  };
  const load = async (r) => {
    range = r;
    clear(seg, RANGES.map(([v, label]) => h('button', { type: 'button', 'aria-pressed': String(v === range), title: label, onclick: () => load(v) }, v)));
    clear(p.slot, loading());
    try {
      data = await ctx.api.get(`${base}/timeseries`, { range }, { signal: ctx.signal });
      draw();
    } catch (err) {
      if (err.name === 'AbortError') return;
      data = null;
      clear(p.slot, err.status === 404 ? h('p', { class: 'muted' }, 'Response-time series are not available on this server.') : errorBox(err));
    }
  };
  metricSel.addEventListener('change', () => { metric.value = metricSel.value; draw(); });
  await load(range);
}

// buckets sums the regions' runs and failures per bucket.
function buckets(regions) {
  const byTime = new Map();
  for (const r of regions) {
    for (const pt of r.points || []) {
      const b = byTime.get(pt.t) || { t: pt.t, runs: 0, failed: 0 };
      b.runs += pt.runs || 0;
      b.failed += pt.failed || 0;
      byTime.set(pt.t, b);
    }
  }
  return [...byTime.values()].sort((a, b) => new Date(a.t) - new Date(b.t));
}

// phases is a table of each region's mean timing phases over the range, with a stacked bar.
function phases(regions) {
  const cols = [['dns_ms', 'DNS', 'ph-dns'], ['connect_ms', 'Connect', 'ph-connect'], ['tls_ms', 'TLS', 'ph-tls'], ['first_byte_ms', 'First byte', 'ph-ttfb']];
  const rows = regions.map((r) => {
    const mean = {};
    for (const [k] of cols) {
      const vals = (r.points || []).map((pt) => pt[k]).filter((v) => v !== null && v !== undefined);
      mean[k] = vals.length ? vals.reduce((a, v) => a + v, 0) / vals.length : null;
    }
    const runs = (r.points || []).reduce((a, pt) => a + (pt.runs || 0), 0);
    const failed = (r.points || []).reduce((a, pt) => a + (pt.failed || 0), 0);
    return { r, mean, runs, failed };
  });
  if (!rows.some((x) => cols.some(([k]) => x.mean[k] !== null))) return null;
  return h('div', { class: 'table-wrap' }, h('table', { class: 'data' },
    h('caption', { class: 'sr-only' }, 'Mean timing phases per region'),
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Region'), cols.map(([, l]) => h('th', { scope: 'col', class: 'num' }, l)),
      h('th', { scope: 'col' }, 'Phases'), h('th', { scope: 'col', class: 'num' }, 'Failed runs'))),
    h('tbody', {}, rows.map(({ r, mean, runs, failed }) => {
      const total = cols.reduce((a, [k]) => a + (mean[k] || 0), 0) || 1;
      return h('tr', {},
        h('th', { scope: 'row' }, region(r.region)),
        cols.map(([k]) => h('td', { class: 'num' }, ms(mean[k]))),
        h('td', {}, phaseBar(cols, mean, total)),
        h('td', { class: 'num' }, `${failed} / ${runs}`));
    }))));
}

function phaseBar(cols, mean, total) {
  // Widths through SVG attributes: the CSP forbids style attributes.
  const W = 160;
  let x = 0;
  const rects = cols.map(([k, , cls]) => {
    const w = ((mean[k] || 0) / total) * W;
    const rect = s('rect', { x: x.toFixed(1), width: w.toFixed(1), height: 8, class: `fill-${cls}` });
    x += w;
    return rect;
  });
  return s('svg', { width: W, height: 8, role: 'img', 'aria-label': cols.map(([k, l]) => `${l} ${ms(mean[k])}`).join(', ') }, rects);
}

// ---- regions ----

async function drawRegions(p, base, ctx) {
  try {
    const list = await ctx.api.get(`${base}/regions`, undefined, { signal: ctx.signal });
    const down = list.filter((r) => r.status === 'DOWN').length;
    clear(p.extra, down ? h('span', { class: 'badge tone-down' }, `${down} failing`) : null);
    clear(p.slot, list.length ? h('table', { class: 'data' },
      h('caption', { class: 'sr-only' }, 'State per region'),
      h('thead', {}, h('tr', {}, ['Region', 'Status', 'Last check', 'Response', 'Certificate'].map((t) => h('th', { scope: 'col' }, t)))),
      h('tbody', {}, list.map((r) => h('tr', { class: r.status === 'DOWN' ? 'result-fail' : null },
        h('td', { class: 'nowrap' }, h('span', { class: `rdot ${r.status}`, 'aria-hidden': 'true' }), ' ', region(r.region)),
        h('td', {}, r.status === 'NO_DATA' ? h('span', { class: 'muted' }, 'No data') : statusBadge(r.status)),
        h('td', {}, time(r.last_checked_at)),
        h('td', { title: (r.last_result && r.last_result.result_summary) || '' }, ms(r.last_result && r.last_result.response_time)),
        h('td', {}, regionCertificate(r.last_result && r.last_result.certificate))))))
      : h('p', { class: 'muted' }, 'No regions.'));
  } catch (err) {
    if (err.name !== 'AbortError') clear(p.slot, errorBox(err));
  }
}

// regionCertificate is the certificate a region was served: the start of its fingerprint and
// its expiry, so that a region served another one stands out.
function regionCertificate(c) {
  if (!c) return h('span', { class: 'muted' }, '—');
  return h('span', { title: `SHA-256 ${c.sha256_fingerprint}` }, h('code', {}, c.sha256_fingerprint.slice(0, 12)), ` until ${dateTime(c.not_after)}`,
    c.mismatch ? h('strong', { class: 'warn-text', title: 'Another region was served another certificate' }, ' differs') : null);
}

// ---- results ----

async function drawResults(p, check, typed, base, ctx) {
  const to = new Date();
  const from = new Date(to.getTime() - 86400e3);
  const q = { from: from.toISOString(), to: to.toISOString(), per_page: RESULTS };
  try {
    // Results come oldest first: the newest are on the last page, and the page before it fills
    // the list when the last one is short.
    const first = await ctx.api.get(`${typed}/results`, q, { signal: ctx.signal });
    const total = (first.result_info && first.result_info.total_count) || 0;
    let pages = [first];
    if (total > RESULTS) {
      const last = Math.ceil(total / RESULTS);
      const wanted = total % RESULTS ? [last - 1, last] : [last];
      pages = await Promise.all(wanted.map((n) => (n === 1 ? first : ctx.api.get(`${typed}/results`, { ...q, page: n }, { signal: ctx.signal }))));
    }
    const list = pages.flatMap((p) => p.results || []).slice(-RESULTS).reverse();
    clear(p.extra, h('span', { class: 'muted' }, `${total} in 24h`));
    if (!list.length) { clear(p.slot, h('p', { class: 'muted' }, 'No results in the last 24 hours.')); return; }
    clear(p.slot, h('div', { class: 'table-wrap' }, h('table', { class: 'data results' },
      h('caption', { class: 'sr-only' }, 'Recent results, newest first'),
      h('thead', {}, h('tr', {}, ['Checked', 'Region', 'Result', 'Time', 'Summary'].map((t, i) => h('th', { scope: 'col', class: i === 3 ? 'num' : null }, t)))),
      h('tbody', {}, list.map((r) => resultRow(r, check, base, ctx))))));
  } catch (err) {
    if (err.name !== 'AbortError') clear(p.slot, errorBox(err));
  }
}

// certificateDetails shows the chain an https run was served: the leaf's expiry and days left
// at the run, whether it verifies for the host and why not, then every certificate.
function certificateDetails(c) {
  const leaf = c.chain[0];
  if (!leaf) return null;
  const verdict = c.verified ? 'valid' : `not valid: ${c.problem}`;
  const tone = !c.verified || leaf.days_left < 14 ? 'tone-down' : 'tone-up';
  return h('details', { class: 'result certificate' },
    h('summary', {}, h('span', { class: `badge ${tone}` }, `Certificate ${verdict}`), ' ',
      `expires ${dateTime(leaf.not_after)} (${leaf.days_left} days left)`),
    h('dl', { class: 'certificate-chain' }, c.chain.flatMap((crt, i) => [
      h('dt', {}, i === 0 ? `Leaf (for ${c.host})` : `Chain ${i}`),
      h('dd', {}, crt.subject, h('br'), `issued by ${crt.issuer}`, h('br'),
        `valid ${dateTime(crt.not_before)} – ${dateTime(crt.not_after)}`,
        crt.sans.length ? [h('br'), `names: ${crt.sans.join(', ')}`] : null,
        h('br'), h('code', { title: 'SHA-256 fingerprint' }, crt.sha256_fingerprint)),
    ])));
}

function resultRow(r, check, base, ctx) {
  const failed = r.passing === false;
  const summary = r.result_summary || r.failure_type || (r.response_code ? `HTTP ${r.response_code}` : '') || r.dns_status || '';
  const observed = observations(r);
  let detail = observed ? [summary, ' ', h('span', { class: 'muted' }, observed)] : summary;
  if (check.check_type === 'BROWSER') {
    const shot = h('div', {});
    const files = h('div', {});
    const resultBase = `${base}/results/${encodeURIComponent(r.id)}`;
    detail = h('details', {
      class: 'result',
      ontoggle: (e) => {
        if (!e.target.open || shot.childElementCount || files.childElementCount) return;
        if (failed) {
          const img = h('img', {
            class: 'screenshot', alt: `The page when the run failed: ${summary}`, loading: 'lazy',
            src: `${resultBase}/screenshot`,
          });
          img.addEventListener('error', () => img.replaceWith(h('p', { class: 'muted' }, 'This run kept no screenshot.')));
          shot.append(img);
        }
        artifacts(ctx, resultBase, files);
      },
    }, h('summary', {}, summary || (failed ? 'Failed' : 'Passed')), failingStep(r), shot, files);
  }
  if (r.tls_certificate) detail = h('div', {}, detail, certificateDetails(r.tls_certificate));
  return h('tr', { class: failed ? 'result-fail' : null },
    h('td', { class: 'nowrap' }, h('time', { datetime: r.checked_at, title: dateTime(r.checked_at) }, new Date(r.checked_at).toLocaleTimeString())),
    h('td', { class: 'nowrap' }, region(r.checked_from)),
    h('td', {}, r.passing === null ? h('span', { class: 'muted' }, '—') : statusBadge(failed ? 'DOWN' : 'UP')),
    h('td', { class: 'num' }, ms(r.response_time_ms)),
    h('td', {}, detail));
}

// observations are the ping, gRPC and WebSocket results' own fields, in a line.
function observations(r) {
  const n = (v) => (typeof v === 'number' ? v.toFixed(1) : '—');
  if (r.ping_sent != null) {
    return `${r.ping_received}/${r.ping_sent} replies, ${Math.round(r.ping_loss_percent ?? 0)}% loss` +
      (r.ping_received ? `, rtt ${n(r.ping_rtt_min_ms)}/${n(r.ping_rtt_avg_ms)}/${n(r.ping_rtt_max_ms)} ms ±${n(r.ping_rtt_stddev_ms)}` : '');
  }
  if (r.grpc_status) return r.grpc_status;
  if (r.websocket_open_ms != null) {
    return `opened in ${n(r.websocket_open_ms)} ms` + (r.websocket_reply_ms != null ? `, reply after ${n(r.websocket_reply_ms)} ms` : '');
  }
  return '';
}

// artifacts lists the files a scripted run kept (screenshots with a path, testInfo.attach()):
// a link to each, and the images themselves.
async function artifacts(ctx, resultBase, slot) {
  let list;
  try {
    list = await ctx.api.get(`${resultBase}/artifacts`, undefined, { signal: ctx.signal });
  } catch (err) {
    if (err.name !== 'AbortError') clear(slot, errorBox(err));
    return;
  }
  if (!list || !list.length) return;
  clear(slot, h('h4', {}, 'Artifacts'), h('ul', { class: 'artifacts' }, list.map((a) => {
    const href = `${resultBase}/artifacts/${encodeURIComponent(a.name)}`;
    const image = /^image\/(png|jpeg|gif|webp)$/.test(a.content_type);
    return h('li', {},
      h('a', { href, target: '_blank', rel: 'noopener' }, a.name),
      h('span', { class: 'muted' }, ` ${a.content_type}, ${a.size.toLocaleString()} bytes`),
      image ? h('img', { class: 'screenshot', alt: `Artifact ${a.name}`, loading: 'lazy', src: href }) : null);
  })));
}

// failingStep shows the step of a browser script that failed, when the summary names one.
function failingStep(r) {
  const m = /step[^:]*:\s*(.+)/i.exec(r.result_summary || '');
  return m ? h('p', {}, h('strong', {}, 'Failing step: '), m[1]) : null;
}

// ---- incidents ----

async function drawIncidents(p, typed, ctx) {
  try {
    const { items, info } = await ctx.api.list(`${typed}/incidents`, { per_page: 10 }, { signal: ctx.signal });
    const open = items.filter((i) => !i.ended_at).length;
    clear(p.extra, open ? h('span', { class: 'badge tone-down' }, `${open} open`) : h('span', { class: 'muted' }, `${info.total_count || 0} total`));
    clear(p.slot, items.length ? h('table', { class: 'data' },
      h('caption', { class: 'sr-only' }, 'Incidents, newest first'),
      h('thead', {}, h('tr', {}, ['Started', 'Duration', 'Cause'].map((t) => h('th', { scope: 'col' }, t)))),
      h('tbody', {}, items.map((i) => h('tr', { class: i.ended_at ? null : 'result-fail' },
        h('td', {}, h('time', { datetime: i.started_at }, dateTime(i.started_at))),
        h('td', {}, i.ended_at ? duration((new Date(i.ended_at) - new Date(i.started_at)) / 1000) : h('span', { class: 'badge tone-down' }, 'Open')),
        h('td', {}, i.caused_by ? h('a', { href: `/console/checks/${encodeURIComponent(i.caused_by)}` }, 'a dependency') : '—')))))
      : h('p', { class: 'muted' }, 'No incidents. '));
  } catch (err) {
    if (err.name !== 'AbortError') clear(p.slot, errorBox(err));
  }
}

// ---- SLA ----

async function drawSLA(p, base, ctx) {
  const sel = h('select', { 'aria-label': 'SLA period' },
    [['7', 'Last 7 days'], ['30', 'Last 30 days'], ['90', 'Last 90 days'], ['365', 'Last 12 months']].map(([v, l]) => h('option', { value: v, selected: v === '30' }, l)));
  clear(p.extra, sel);
  const load = async () => {
    const to = new Date();
    const from = new Date(to.getTime() - Number(sel.value) * 86400e3);
    const q = { from: from.toISOString(), to: to.toISOString() };
    try {
      const r = await ctx.api.get(`${base}/sla`, q, { signal: ctx.signal });
      const csv = `${base}/sla?${new URLSearchParams({ ...q, format: 'csv' })}`;
      clear(p.slot,
        h('dl', { class: 'kv' },
          h('dt', {}, 'Availability'), h('dd', {}, h('strong', {}, pct(r.availability_percent, 3))),
          h('dt', {}, 'Downtime'), h('dd', {}, duration(r.downtime_minutes * 60)),
          h('dt', {}, 'Incidents'), h('dd', {}, String(r.incident_count)),
          h('dt', {}, 'MTTR'), h('dd', {}, duration(r.mttr_minutes * 60)),
          h('dt', {}, 'Longest outage'), h('dd', {}, duration(r.longest_outage_minutes * 60)),
          h('dt', {}, 'Runs'), h('dd', {}, `${r.runs} (${r.failed_runs} failed)`),
          r.maintenance_minutes ? [h('dt', {}, 'Maintenance'), h('dd', {}, `${duration(r.maintenance_minutes * 60)} excluded`)] : null),
        h('p', {}, h('a', { href: csv, download: 'sla.csv', class: 'btn btn-sm' }, 'Download CSV')));
    } catch (err) {
      if (err.name !== 'AbortError') clear(p.slot, errorBox(err));
    }
  };
  sel.addEventListener('change', load);
  await load();
}

// ---- badges ----

// drawBadges shows the check's public badges (GET /v1/checks/{id}/badge) with their URLs to
// copy, and turns them on or off with the edit grant.
async function drawBadges(p, base, ctx, canEdit) {
  const show = (state) => {
    const toggle = canEdit ? h('button', {
      type: 'button', class: `btn btn-sm${state.enabled ? ' btn-danger' : ''}`,
      onclick: async () => {
        try {
          show(state.enabled ? await ctx.api.del(`${base}/badge`) : await ctx.api.post(`${base}/badge`));
        } catch (err) {
          toast(err.message, 'error');
        }
      },
    }, state.enabled ? 'Disable badges' : 'Enable badges') : null;
    if (!state.enabled || !state.urls) {
      clear(p.slot, h('p', { class: 'muted' }, 'Public badges are off: nobody outside can see this check.'), toggle);
      return;
    }
    // The images are read from this origin, whatever host the URLs name (the CSP allows 'self').
    const local = (u) => { const x = new URL(u, location.href); return x.pathname + x.search; };
    clear(p.slot, h('div', { class: 'stack' },
      h('div', { class: 'badges' }, ['status', 'uptime', 'response'].map((k) => h('img', { src: local(state.urls[k]), alt: `${k} badge`, height: 20 }))),
      ['status', 'uptime', 'response'].map((k) => field(`${k[0].toUpperCase()}${k.slice(1)} badge URL`,
        h('input', { type: 'text', readonly: true, value: state.urls[k], class: 'mono', onfocus: (e) => e.target.select() }), { name: `badge-${k}` })),
      h('p', { class: 'hint' }, 'Anyone with these URLs sees the badge; disabling makes them answer 404.'),
      h('div', {}, toggle)));
  };
  try {
    show(await ctx.api.get(`${base}/badge`, undefined, { signal: ctx.signal }));
  } catch (err) {
    if (err.name !== 'AbortError') clear(p.slot, err.status === 404 ? h('p', { class: 'muted' }, 'Badges are not available on this server.') : errorBox(err));
  }
}

// ---- settings ----

async function drawSettings(p, c, ctx) {
  const alerts = ['user_alerts', 'webhook_alerts', 'slack_alerts', 'discord_alerts', 'microsoft_teams_alerts', 'telegram_alerts', 'pushover_alerts', 'oncall_alerts', 'incident_io_alerts']
    .reduce((a, k) => a + ((c[k] || []).length), 0);
  const deps = h('dd', {}, (c.depends_on || []).length ? '' : 'None');
  clear(p.slot, h('dl', { class: 'kv' },
    h('dt', {}, 'Regions'), h('dd', {}, (c.test_regions || []).map(region).join(', ') || '—'),
    h('dt', {}, 'Quorum'), h('dd', {}, quorumText(c.region_quorum)),
    h('dt', {}, 'Interval'), h('dd', {}, duration(c.test_interval)),
    h('dt', {}, 'Timeout'), h('dd', {}, c.timeout ? ms(c.timeout) : '—'),
    h('dt', {}, 'Degraded above'), h('dd', {}, c.degraded_response_time_ms ? ms(c.degraded_response_time_ms) : 'Off'),
    h('dt', {}, 'Confirmation'), h('dd', {}, duration(c.confirmation_period_seconds)),
    h('dt', {}, 'Recovery'), h('dd', {}, duration(c.recovery_period_seconds)),
    h('dt', {}, 'Priority'), h('dd', {}, c.alert_priority || '—'),
    h('dt', {}, 'Alert destinations'), h('dd', {}, String(alerts)),
    h('dt', {}, 'Depends on'), deps));
  // Dependencies are named by their own records (at most 20, in parallel).
  const links = await Promise.all((c.depends_on || []).map(async (dep) => {
    try {
      const d = await ctx.api.get(`/v1/checks/${encodeURIComponent(dep)}`, undefined, { signal: ctx.signal });
      return h('a', { href: `/console/checks/${encodeURIComponent(dep)}` }, d.name, ' ', statusBadge(d.status));
    } catch {
      return h('a', { href: `/console/heartbeats/${encodeURIComponent(dep)}` }, `Heartbeat ${dep.slice(0, 8)}`);
    }
  }));
  if (links.length) clear(deps, h('span', { class: 'stack' }, links));
}

// degradedBadge shows why an UP check is degraded (docs/detection.md): some regions fail, or it
// is slower than its threshold; nothing when it is not.
function degradedBadge(d) {
  if (!d || !(d.reasons || []).length) return null;
  const why = d.reasons.map((r) => (r === 'slow' ? 'slow' : 'failing in some regions')).join(', ');
  return h('span', { class: 'badge tone-warn', title: `Degraded: ${why}` }, h('span', { class: 'dot', 'aria-hidden': 'true' }), `Degraded: ${why}`);
}

function quorumText(q) {
  switch (q) {
    case 'majority': case undefined: case null: return 'Majority of reporting regions';
    case 'any': return 'Any one failing region';
    case 'all': return 'Every reporting region';
    default: return `${q} failing regions`;
  }
}
