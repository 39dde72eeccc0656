// Incidents across checks and heartbeats: open ones first, then the recent ones.
//
// The API keeps incidents per check (/v1/checks/{kind}/{id}/incidents) and has no list across
// checks, so the calls are bounded: open incidents come from the checks that are DOWN or
// RECOVERING (filtered list calls), recent ones from the first RECENT_CHECKS checks of the
// list over the last RECENT_DAYS days. Heartbeats have no incident records: a DOWN heartbeat is
// shown as open since its last ping.
import { h } from '../ui.js';
import { page, section, table, when, since, status, load, link, parallel } from './parts.js';

const RECENT_CHECKS = 50;
const RECENT_DAYS = 7;
const OPEN_STATUSES = ['DOWN', 'RECOVERING'];

const kindPath = (c) => String(c.check_type || 'UPTIME').toLowerCase();

async function incidentsOf(api, check, from) {
  const q = new URLSearchParams({ per_page: '100' });
  if (from) q.set('from', from);
  const list = await api.get(`/v1/checks/${kindPath(check)}/${encodeURIComponent(check.id)}/incidents?${q}`);
  return (list || []).map((i) => ({ ...i, check }));
}

async function openRows(api) {
  const lists = await Promise.all(OPEN_STATUSES.map((s) => api.get(`/v1/checks?filter=${s}&per_page=100`)));
  const checks = lists.flat();
  const incidents = (await parallel(checks, 6, (c) => incidentsOf(api, c))).flat();
  return incidents.filter((i) => !i.ended_at);
}

async function recentRows(api) {
  const from = new Date(Date.now() - RECENT_DAYS * 86400e3).toISOString();
  const checks = await api.get(`/v1/checks?per_page=${RECENT_CHECKS}`);
  const incidents = (await parallel(checks || [], 6, (c) => incidentsOf(api, c, from))).flat();
  return incidents.filter((i) => i.ended_at).sort((a, b) => b.started_at.localeCompare(a.started_at));
}

const columns = (open) => [
  { label: 'Check', cell: (i) => link(`/console/checks/${encodeURIComponent(i.check.id)}`, i.check.name) },
  { label: 'Kind', cell: (i) => i.check.check_type },
  { label: 'Started', cell: (i) => when(i.started_at) },
  open ? { label: 'Open for', cell: (i) => since(i.started_at) } : { label: 'Ended', cell: (i) => when(i.ended_at) },
  open ? { label: 'Status now', cell: (i) => status(i.check.status) } : { label: 'Lasted', cell: (i) => since(i.started_at, i.ended_at) },
  { label: 'Caused by', cell: (i) => (i.caused_by ? h('code', {}, i.caused_by) : '—') },
];

export async function render(root, params, ctx) {
  const { api } = ctx;
  page(root, 'Incidents',
    section('open-incidents', 'Open',
      load(async () => {
        const rows = (await openRows(api)).sort((a, b) => a.started_at.localeCompare(b.started_at));
        return table('Open check incidents, oldest first', columns(true), rows, 'No check has an open incident.');
      })),
    section('down-heartbeats', 'Heartbeats down',
      load(async () => {
        const hbs = (await api.get('/v1/heartbeats?per_page=100')) || [];
        const down = hbs.filter((b) => b.status === 'DOWN');
        return table('Heartbeats that are down', [
          { label: 'Heartbeat', cell: (b) => link(`/console/heartbeats/${encodeURIComponent(b.id)}`, b.name) },
          { label: 'Last ping', cell: (b) => when(b.last_seen) },
          { label: 'Silent for', cell: (b) => since(b.last_seen) },
        ], down, 'No heartbeat is down.');
      })),
    section('recent-incidents', `Recent (last ${RECENT_DAYS} days)`,
      h('p', { class: 'hint' }, `Resolved incidents of the first ${RECENT_CHECKS} checks, newest first.`),
      load(async () => table('Resolved check incidents, newest first', columns(false), await recentRows(api),
        `No incident ended in the last ${RECENT_DAYS} days.`))));
}
