// Checks overview (also the landing page): one list call for the page and one batched overview
// call for its ids, whatever the number of checks; refreshed every 10 s while the tab is visible.
import { h, clear, setTitle, statusBadge, kindLabel, pct, time, region, errorBox } from '../ui.js';
import { sparkline } from '../charts.js';

const PER_PAGE = 50;
const POLL_MS = 10000;
const STATUSES = ['UP', 'DOWN', 'PENDING', 'RECOVERING', 'VERIFYING', 'PAUSED', 'MUTED'];
const KINDS = ['UPTIME', 'BROWSER', 'DNS', 'TCP', 'MULTISTEP', 'PING', 'GRPC', 'WEBSOCKET'];

// state is the view's query: the URL is its one source, so every filter is a deep link.
function readState() {
  const q = new URLSearchParams(location.search);
  return {
    search: q.get('search') || '', status: q.get('status') || '', kind: q.get('kind') || '',
    project: q.get('project') || '', page: Math.max(1, Number.parseInt(q.get('page') || '1', 10) || 1),
  };
}

function href(state, patch = {}) {
  const st = { ...state, ...patch };
  const q = new URLSearchParams();
  for (const k of ['search', 'status', 'kind', 'project']) if (st[k]) q.set(k, st[k]);
  if (st.page > 1) q.set('page', st.page);
  const qs = q.toString();
  return `/console/checks${qs ? `?${qs}` : ''}`;
}

function target(c) {
  switch (c.check_type) {
    case 'DNS': return c.dns_domain ? `${c.dns_record_type || ''} ${c.dns_domain}`.trim() : '';
    case 'TCP': return c.tcp_hostname ? `${c.tcp_hostname}:${c.tcp_port}` : '';
    default: return c.url || (c.check_type === 'BROWSER' ? 'Script' : '');
  }
}

function regionDots(regions) {
  if (!regions || !regions.length) return h('span', { class: 'muted' }, '—');
  return h('span', { class: 'dots', role: 'img', 'aria-label': regions.map((r) => `${region(r.region)} ${r.status}`).join(', ') },
    regions.map((r) => h('span', { class: `rdot ${r.status}`, title: `${region(r.region)}: ${r.status}` })));
}

function row(c, ov) {
  return h('tr', { 'data-id': c.id },
    h('td', {},
      h('a', { class: 'check-name', href: `/console/checks/${encodeURIComponent(c.id)}` }, c.name),
      h('span', { class: 'check-target' }, target(c))),
    h('td', {}, kindLabel(c.check_type)),
    h('td', {}, statusBadge(c.status), ov && ov.status_since ? h('span', { class: 'since' }, 'since ', time(ov.status_since)) : null),
    h('td', { class: 'num' }, ov ? pct(ov.uptime_24h) : '—'),
    h('td', { class: 'num' }, ov ? pct(ov.uptime_30d) : '—'),
    h('td', {}, ov && ov.sparkline_24h ? sparkline(ov.sparkline_24h) : h('span', { class: 'muted' }, '—')),
    h('td', {}, regionDots(ov && ov.regions)),
    h('td', { class: 'num' }, time((ov && ov.last_run_at) || c.last_queued)),
    h('td', { class: 'num' }, c.skipped_runs_24h > 0
      ? h('span', { class: 'skipped', title: 'Runs of the last 24 hours that did not run or came too late' }, String(c.skipped_runs_24h))
      : h('span', { class: 'faint' }, '0')));
}

function select(label, name, value, options, onchange) {
  const el = h('select', { name, onchange },
    h('option', { value: '' }, 'All'),
    options.map(([v, text]) => h('option', { value: v, selected: v === value }, text)));
  const id = `filter-${name}`;
  el.id = id;
  return h('div', { class: 'field' }, h('label', { for: id }, label), el);
}

export async function render(root, params, ctx) {
  setTitle('Checks');
  const state = readState();
  // A filter change keeps the view (and the focus in the search box): it rewrites the URL in
  // place and reloads the rows.
  const go = (patch) => {
    Object.assign(state, { page: 1 }, patch);
    history.replaceState(null, '', href(state));
    refresh();
  };

  const live = h('span', { class: 'live', 'aria-live': 'off' }, 'Live');
  const downCount = h('span', {});
  root.append(h('div', { class: 'page-head' },
    h('h1', {}, 'Checks'), live, downCount, h('span', { class: 'spacer' }),
    ctx.can('UPTIME_CHECKS:EDIT') ? h('a', { class: 'btn btn-primary', href: '/console/checks/new' }, 'New check') : null));

  const search = h('input', { type: 'search', id: 'filter-search', name: 'search', value: state.search, placeholder: 'Name contains…', autocomplete: 'off' });
  let debounce = 0;
  search.addEventListener('input', () => {
    clearTimeout(debounce);
    debounce = setTimeout(() => go({ search: search.value.trim() }), 300);
  });
  const projectSlot = h('div', {});
  const toolbar = h('div', { class: 'toolbar', role: 'search' },
    h('div', { class: 'field search' }, h('label', { for: 'filter-search' }, 'Search by name'), search),
    select('Status', 'status', state.status, STATUSES.map((v) => [v, v.charAt(0) + v.slice(1).toLowerCase()]), (e) => go({ status: e.target.value })),
    select('Kind (this page)', 'kind', state.kind, KINDS.map((v) => [v, kindLabel(v)]), (e) => go({ kind: e.target.value })),
    projectSlot);
  const tbody = h('tbody', {});
  const table = h('table', { class: 'data' },
    h('caption', { class: 'sr-only' }, 'Checks'),
    h('thead', {}, h('tr', {},
      ['Name', 'Kind', 'Status', 'Uptime 24h', 'Uptime 30d', 'Response time 24h', 'Regions', 'Last run', 'Skipped 24h']
        .map((t, i) => h('th', { scope: 'col', class: i === 3 || i === 4 || i >= 7 ? 'num' : null }, t)))),
    tbody);
  const pager = h('div', { class: 'pager' });
  const body = h('div', { class: 'table-wrap' }, table);
  root.append(h('section', { class: 'panel', 'aria-label': 'Checks' }, toolbar, body, pager));

  // The project filter: one call, not needed for the table.
  const projects = ctx.can('PROJECTS:READ') ? ctx.api.list('/v1/projects', { per_page: 100 }, { signal: ctx.signal }) : Promise.reject(new Error('no grant'));
  projects.then(({ items }) => {
    projectSlot.replaceWith(select('Project', 'project', state.project,
      [['unassigned', 'Unassigned'], ...items.map((p) => [p.id, p.name])], (e) => go({ project: e.target.value })));
  }).catch(() => projectSlot.remove());

  const load = async () => {
    // How many checks are DOWN across every page: one more call, for its total_count only.
    const down = state.status === 'DOWN' ? Promise.resolve(null)
      : ctx.api.list('/v1/checks', { per_page: 1, filter: 'DOWN' }, { signal: ctx.signal }).then((r) => r.info.total_count || 0, () => null);
    const { items, info } = await ctx.api.list('/v1/checks', {
      page: state.page, per_page: PER_PAGE, search: state.search, filter: state.status,
      project_id: state.project,
    }, { signal: ctx.signal });
    let overview = new Map();
    if (items.length) {
      try {
        const res = await ctx.api.get('/v1/checks/overview', { check_ids: items.map((c) => c.id).join(',') }, { signal: ctx.signal });
        overview = new Map((res || []).map((o) => [o.check_id || o.id, o]));
      } catch (err) {
        if (err.name === 'AbortError') throw err;
        // Without the overview the list still shows; its columns read "—".
      }
    }
    return { items, info, overview, down: await down };
  };

  const draw = ({ items, info, overview, down }) => {
    clear(downCount, down ? h('a', { class: 'badge tone-down', href: href(state, { status: 'DOWN', page: 1 }) }, `${down} down`) : null);
    const shown = state.kind ? items.filter((c) => c.check_type === state.kind) : items;
    if (!shown.length) {
      const filtered = state.search || state.status || state.kind || state.project;
      clear(tbody, h('tr', {}, h('td', { colspan: 9, class: 'empty' },
        filtered ? 'No check matches these filters.' : 'No checks yet. ',
        !filtered && ctx.can('UPTIME_CHECKS:EDIT') ? h('a', { href: '/console/checks/new' }, 'Create the first one') : null)));
    } else {
      clear(tbody, shown.map((c) => row(c, overview.get(c.id))));
    }
    const total = info.total_count || 0;
    const pages = Math.max(1, Math.ceil(total / PER_PAGE));
    const from = total ? (state.page - 1) * PER_PAGE + 1 : 0;
    clear(pager,
      h('span', {}, `${from}–${from + items.length - (items.length ? 1 : 0)} of ${total} checks`),
      h('span', { class: 'actions' },
        state.page > 1 ? h('a', { class: 'btn btn-sm', href: href(state, { page: state.page - 1 }), rel: 'prev' }, '← Previous') : null,
        h('span', {}, `Page ${state.page} of ${pages}`),
        state.page < pages ? h('a', { class: 'btn btn-sm', href: href(state, { page: state.page + 1 }), rel: 'next' }, 'Next →') : null));
  };

  const failBox = h('div', {});
  body.before(failBox);
  const refresh = async () => {
    try {
      draw(await load());
      clear(failBox);
      return true;
    } catch (err) {
      if (err.name !== 'AbortError') clear(failBox, errorBox(err));
      return false;
    }
  };
  if (!await refresh()) return;
  root.dataset.ready = 'true';

  // Live updates: poll while the tab is visible; a hidden tab catches up when shown again.
  let timer = 0;
  const tick = async () => {
    if (ctx.signal.aborted) return;
    if (document.hidden) { live.classList.add('paused'); live.textContent = 'Paused'; return; }
    try {
      draw(await load());
      live.classList.remove('paused');
      live.textContent = 'Live';
    } catch (err) {
      if (err.name === 'AbortError') return;
      live.classList.add('paused');
      live.textContent = 'Reconnecting…';
    }
    schedule();
  };
  const schedule = () => { clearTimeout(timer); if (!ctx.signal.aborted) timer = setTimeout(tick, POLL_MS); };
  const onVisible = () => { if (!document.hidden) { clearTimeout(timer); tick(); } };
  document.addEventListener('visibilitychange', onVisible);
  ctx.signal.addEventListener('abort', () => { clearTimeout(timer); document.removeEventListener('visibilitychange', onVisible); });
  schedule();
}
