// Operators (AGENTS:READ): the live agents per region with version, capacity, in-flight jobs and
// results/s; unserved and unhealthy regions; and the checks that lost runs in the last 24 hours.
//
// The API counts skipped runs per check (skipped_runs_24h) but not per region and reason; that
// breakdown is only in the control plane's /metrics, so this view lists the checks instead.
import { h } from '../ui.js';
import { page, section, table, when, since, load, can, link, status } from './parts.js';

const REFRESH_MS = 10000;

function agentsByRegion(overview) {
  return overview.regions.map((r) => ({
    ...r,
    live: overview.agents.filter((a) => a.regions.includes(r.region)),
  }));
}

// served: a region with live agents is served; one that active checks use without any is
// unserved (its runs go nowhere); one nobody uses is merely idle.
function served(r) {
  if (r.served) return status('SERVED');
  return r.active_checks > 0 ? status('UNSERVED') : status('UNUSED');
}

function regionsTable(overview) {
  return table('Regions', [
    { label: 'Region', cell: (r) => r.region },
    { label: 'Served', cell: served },
    { label: 'Agents', cell: (r) => String(r.agents) },
    { label: 'Browser agents', cell: (r) => String(r.browser_agents) },
    { label: 'Active checks', cell: (r) => String(r.active_checks) },
    { label: 'In-flight jobs', cell: (r) => String(r.live.reduce((n, a) => n + a.in_flight_jobs, 0)) },
    { label: 'Results/s', cell: (r) => r.live.reduce((n, a) => n + a.results_per_second, 0).toFixed(1) },
    { label: 'Unserved since', cell: (r) => (r.unserved_since ? [when(r.unserved_since), ` (${since(r.unserved_since)})`] : '—') },
  ], agentsByRegion(overview), 'No regions in use and no agents connected.');
}

function agentsTable(overview) {
  const agents = [...overview.agents].sort((a, b) => a.regions.join().localeCompare(b.regions.join()) || a.id.localeCompare(b.id));
  return table('Live agents', [
    { label: 'Agent', cell: (a) => a.id },
    { label: 'Regions', cell: (a) => a.regions.join(', ') },
    { label: 'Version', cell: (a) => a.version },
    { label: 'Capacity', cell: (a) => (a.capabilities.length ? a.capabilities.join(', ') : 'HTTP, DNS, TCP') },
    { label: 'In-flight jobs', cell: (a) => String(a.in_flight_jobs) },
    { label: 'Results/s', cell: (a) => a.results_per_second.toFixed(1) },
    { label: 'Host', cell: (a) => a.hostname },
    { label: 'Replica', cell: (a) => a.replica },
    { label: 'Connected', cell: (a) => [when(a.connected_since), ` (${since(a.connected_since)})`] },
  ], agents, 'No agent is connected.');
}

export async function render(root, params, ctx) {
  const { api } = ctx;
  if (!can(ctx, 'AGENTS')) {
    page(root, 'Operators', h('p', { class: 'muted' }, 'The operators view needs the AGENTS:READ permission.'));
    return;
  }
  const live = h('div', { class: 'stack', 'aria-live': 'polite' });
  const refresh = async () => {
    const [overview, unhealthy] = await Promise.all([api.get('/v1/agents'), api.get('/v1/regions/unhealthy')]);
    live.replaceChildren(
      section('op-regions', 'Regions', regionsTable(overview)),
      section('op-unhealthy', 'Unhealthy regions', table('Unhealthy regions', [
        { label: 'Region', cell: (r) => r.region },
        { label: 'Since', cell: (r) => when(r.unhealthy_since) },
        { label: 'Why', cell: (r) => r.reason },
      ], unhealthy, 'Every region\'s probes are trusted.')),
      section('op-agents', 'Live agents', agentsTable(overview)),
      h('p', { class: 'hint' }, `Refreshed ${new Date().toLocaleTimeString()}, every ${REFRESH_MS / 1000} s.`));
  };
  page(root, 'Operators', live,
    can(ctx, 'UPTIME_CHECKS') ? section('op-skipped', 'Skipped runs (24 h)',
      h('p', { class: 'hint' }, 'Checks of this organization that lost runs; the breakdown per region and reason is in the control plane\'s metrics (vantage_runs_skipped_total).'),
      load(async () => {
        const checks = (await api.get('/v1/checks?per_page=100')) || [];
        const skipped = checks.filter((c) => c.skipped_runs_24h > 0).sort((a, b) => b.skipped_runs_24h - a.skipped_runs_24h);
        return table('Checks with skipped runs', [
          { label: 'Check', cell: (c) => link(`/console/checks/${encodeURIComponent(c.id)}`, c.name) },
          { label: 'Skipped runs', cell: (c) => String(c.skipped_runs_24h) },
          { label: 'Status', cell: (c) => status(c.status) },
        ], skipped, 'No check lost a run in the last 24 hours.');
      })) : null);
  try {
    await refresh();
  } catch (err) {
    live.replaceChildren(h('p', { class: 'field-error', role: 'alert' }, err.message));
    return;
  }
  // Light polling while the view is on screen; the shell aborts ctx.signal when it leaves.
  const timer = setInterval(() => refresh().catch(() => {}), REFRESH_MS);
  if (ctx.signal) ctx.signal.addEventListener('abort', () => clearInterval(timer), { once: true });
}
