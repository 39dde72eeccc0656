// Heartbeats: the list with status and last ping, and a form to create one.
import { page, section, table, when, since, status, load, link, form, disclosure, can, duration } from './parts.js';

export function schedule(b) {
  if (b.report_period_cron) return `cron ${b.report_period_cron}${b.timezone ? ` (${b.timezone})` : ''}`;
  if (b.report_period) return `every ${duration(b.report_period)}`;
  return '—';
}

export async function render(root, params, ctx) {
  const { api, navigate } = ctx;
  const create = can(ctx, 'HEARTBEAT_CHECKS', 'EDIT') ? disclosure('New heartbeat', form({
    id: 'heartbeat-create',
    submit: 'Create heartbeat',
    fields: [
      { name: 'name', label: 'Name', required: true },
      { name: 'report_period', label: 'Expected every (seconds)', type: 'number', value: 3600, min: 1 },
      { name: 'report_period_cron', label: 'Or a cron schedule', placeholder: '*/5 * * * *' },
      { name: 'timezone', label: 'Time zone of the cron schedule', placeholder: 'UTC' },
      { name: 'grace_period', label: 'Grace period (seconds)', type: 'number', value: 300, min: 1, required: true },
      { name: 'alert_priority', label: 'Alert priority', type: 'select', options: [['LOW', 'Low'], ['HIGH', 'High']], value: 'LOW' },
    ],
    onSubmit: (v) => {
      const body = { name: v.name, grace_period: v.grace_period, alert_priority: v.alert_priority };
      if (v.report_period_cron) {
        body.report_period_cron = v.report_period_cron;
        if (v.timezone) body.timezone = v.timezone;
      } else if (v.report_period != null) {
        body.report_period = v.report_period;
      }
      return api.post('/v1/heartbeats', body);
    },
    done: (hb) => navigate(`/console/heartbeats/${encodeURIComponent(hb.id)}`),
  })) : null;

  page(root, 'Heartbeats', create,
    section('heartbeat-list', 'All heartbeats',
      load(async () => table('Heartbeats', [
        { label: 'Name', cell: (b) => link(`/console/heartbeats/${encodeURIComponent(b.id)}`, b.name) },
        { label: 'Status', cell: (b) => status(b.status) },
        { label: 'Schedule', cell: schedule },
        { label: 'Last ping', cell: (b) => when(b.last_seen) },
        { label: 'Since last ping', cell: (b) => since(b.last_seen) },
        { label: 'Last run took', cell: (b) => (b.last_duration_ms != null ? `${b.last_duration_ms} ms` : '—') },
      ], await api.get('/v1/heartbeats?per_page=100'), 'No heartbeats yet.'))));
}
