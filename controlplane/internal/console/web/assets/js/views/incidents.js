// Incidents across checks and heartbeats: open ones first, then the recent ones.
//
// One call per page: GET /v1/incidents lists the organization's feed, open entries first (a DOWN
// heartbeat is an open entry: heartbeats keep no incident records), then resolved ones, each
// newest first, and names each entry's check or heartbeat. A page's open entries fill the Open
// panel, its resolved ones the Recent panel; the pager moves through the whole feed.
import { h } from '../ui.js';
import { page, section, table, when, since, load, link, label } from './parts.js';

const PER_PAGE = 50;

function readPage() {
  const n = Number(new URLSearchParams(location.search).get('page'));
  return Number.isInteger(n) && n > 0 ? n : 1;
}

const pageHref = (n) => (n > 1 ? `/console/incidents?page=${n}` : '/console/incidents');

function source(i) {
  return i.heartbeat_id
    ? link(`/console/heartbeats/${encodeURIComponent(i.heartbeat_id)}`, i.name)
    : link(`/console/checks/${encodeURIComponent(i.check_id)}`, i.name);
}

const columns = (open) => [
  { label: 'Check or heartbeat', cell: source },
  { label: 'Kind', cell: (i) => label(i.kind) },
  { label: 'Started', cell: (i) => when(i.started_at) },
  open ? { label: 'Open for', cell: (i) => since(i.started_at) } : { label: 'Ended', cell: (i) => when(i.ended_at) },
  open ? null : { label: 'Lasted', cell: (i) => since(i.started_at, i.ended_at) },
  { label: 'Caused by', cell: (i) => (i.caused_by ? h('code', {}, i.caused_by) : '—') },
].filter(Boolean);

function pager(n, info) {
  const total = info.total_count || 0;
  const pages = Math.max(1, Math.ceil(total / PER_PAGE));
  if (pages === 1) return null;
  return h('nav', { class: 'pager', 'aria-label': 'Incident pages' },
    h('span', {}, `${total} incidents`),
    h('span', { class: 'actions' },
      n > 1 ? h('a', { class: 'btn btn-sm', href: pageHref(n - 1), rel: 'prev' }, '← Newer') : null,
      h('span', {}, `Page ${n} of ${pages}`),
      n < pages ? h('a', { class: 'btn btn-sm', href: pageHref(n + 1), rel: 'next' }, 'Older →') : null));
}

export async function render(root, params, ctx) {
  const n = readPage();
  const feed = ctx.api.list('/v1/incidents', { page: n, per_page: PER_PAGE });
  const part = (open) => feed.then(({ items }) => items.filter((i) => (open ? !i.ended_at : i.ended_at)));
  page(root, 'Incidents',
    section('open-incidents', 'Open',
      load(async () => table('Open incidents, newest first', columns(true), await part(true),
        n > 1 ? 'The open incidents are on the first page.' : 'No check or heartbeat has an open incident.'))),
    section('recent-incidents', 'Recent',
      load(async () => table('Resolved incidents, newest first', columns(false), await part(false),
        'No resolved incident on this page.'))),
    load(() => feed.then(({ info }) => pager(n, info), () => null)));
}
