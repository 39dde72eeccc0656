// Alerting: integrations (create; each links to its test button and deliveries), webhooks
// (create; each links to its deliveries) and maintenance windows (create, enable/disable,
// delete). Each part needs its own area; a part the session cannot read says so alone.
import { h } from '../ui.js';
import { page, section, table, when, status, load, link, form, disclosure, can, action, options, confirmDialog } from './parts.js';

// settingsByType lists each integration type's settings (docs/integrations.md); secrets are
// password fields because the API never returns them.
export const settingsByType = {
  SLACK: [['webhook_url', 'Webhook URL', true]],
  DISCORD: [['webhook_url', 'Webhook URL', true]],
  MICROSOFT_TEAMS: [['webhook_url', 'Webhook URL', true]],
  TELEGRAM: [['bot_token', 'Bot token', true], ['chat_id', 'Chat id', false], ['api_url', 'API URL (optional)', false]],
  PUSHOVER: [['app_token', 'App token', true], ['user_key', 'User key', true], ['api_url', 'API URL (optional)', false]],
  INCIDENT_IO: [['url', 'Alert source URL', true], ['token', 'Token', true]],
  ONCALL: [['routing_key', 'Routing key', true], ['events_url', 'Events URL (optional)', false]],
};

const webhookEvents = ['uptime.down', 'uptime.up', 'uptime.degraded', 'uptime.restored', 'heartbeat.down', 'heartbeat.up',
  'status_page.incident.started', 'status_page.incident.updated', 'status_page.incident.resolved',
  'agent.region_unserved', 'agent.region_served', 'agent.unhealthy', 'agent.healthy',
  'status_page.custom_domain_released', 'status_page.custom_domain_unverified',
  'certificate.expiring', 'certificate.expired'];
const weekdays = ['MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY', 'SATURDAY', 'SUNDAY'];

function integrationForm(api, navigate) {
  const typeSel = h('select', { id: 'integration-type', name: 'type' },
    ...Object.keys(settingsByType).map((t) => h('option', { value: t }, t.replace(/_/g, ' '))));
  const holder = h('div');
  const build = () => {
    const type = typeSel.value;
    holder.replaceChildren(form({
      id: 'integration-create', submit: 'Create integration',
      fields: [
        { name: 'name', label: 'Integration name', required: true },
        ...settingsByType[type].map(([name, label, secret]) => ({ name: `settings.${name}`, label, type: secret ? 'password' : 'text' })),
      ],
      onSubmit: (v) => {
        const settings = {};
        for (const [k, val] of Object.entries(v)) if (k.startsWith('settings.') && val) settings[k.slice(9)] = val;
        return api.post('/v1/integrations', { name: v.name, type, settings });
      },
      done: (i) => navigate(`/console/alerting/integrations/${encodeURIComponent(i.id)}`),
    }));
  };
  typeSel.addEventListener('change', build);
  build();
  return h('div', {}, h('div', { class: 'field' }, h('label', { for: 'integration-type' }, 'Type'), typeSel), holder);
}

function integrations(ctx) {
  const { api, navigate } = ctx;
  return section('integrations', 'Integrations',
    can(ctx, 'INTEGRATIONS', 'EDIT') ? disclosure('New integration', integrationForm(api, navigate)) : null,
    load(async () => table('Integrations', [
      { label: 'Name', cell: (i) => link(`/console/alerting/integrations/${encodeURIComponent(i.id)}`, i.name) },
      { label: 'Type', cell: (i) => i.type.replace(/_/g, ' ') },
      { label: 'Status pages', cell: (i) => (i.status_pages || []).map((p) => p.name).join(', ') || '—' },
      { label: 'Created', cell: (i) => when(i.created_at) },
    ], await api.get('/v1/integrations?per_page=100'), 'No integrations yet.')));
}

function webhooks(ctx) {
  const { api, navigate } = ctx;
  const create = can(ctx, 'WEBHOOKS', 'EDIT') ? disclosure('New webhook', load(async () => {
    // A webhook must name what it covers: the form offers the organization's checks, heartbeats and pages.
    const [checks, hbs, pages] = await Promise.all([
      api.get('/v1/checks?per_page=100').catch(() => []),
      api.get('/v1/heartbeats?per_page=100').catch(() => []),
      api.get('/v1/status_pages?per_page=100').catch(() => []),
    ]);
    let secretBox;
    const el = form({
      id: 'webhook-create', submit: 'Create webhook',
      fields: [
        { name: 'url', label: 'Endpoint URL', type: 'url', required: true, placeholder: 'https://example.com/hooks/vantage' },
        { name: 'description', label: 'Description' },
        { name: 'events', label: 'Events', type: 'multi', options: webhookEvents.map((e) => [e, e]), value: ['uptime.down', 'uptime.up'] },
        { name: 'check_ids', label: 'Checks', type: 'multi', options: (checks || []).map((c) => [c.id, c.name]) },
        { name: 'heartbeat_ids', label: 'Heartbeats', type: 'multi', options: (hbs || []).map((b) => [b.id, b.name]) },
        { name: 'status_page_ids', label: 'Status pages', type: 'multi', options: (pages || []).map((p) => [p.id, p.name]) },
      ],
      onSubmit: (v) => api.post('/v1/webhooks', {
        url: v.url, events: v.events, check_ids: v.check_ids, heartbeat_ids: v.heartbeat_ids, status_page_ids: v.status_page_ids,
        ...(v.description ? { description: v.description } : {}),
      }),
      done: (w) => {
        // The signing secret is returned once; show it before leaving the form.
        secretBox.replaceChildren(h('p', { role: 'status' }, 'Webhook created. Its signing secret is shown only now: ',
          h('code', { class: 'vc-secret' }, w.secret || ''), ' ', link(`/console/alerting/webhooks/${encodeURIComponent(w.id)}`, 'Open the webhook')));
      },
    });
    secretBox = h('div');
    return [el, secretBox];
  })) : null;
  return section('webhooks', 'Webhooks', create,
    load(async () => table('Webhooks', [
      { label: 'URL', cell: (w) => link(`/console/alerting/webhooks/${encodeURIComponent(w.id)}`, w.url) },
      { label: 'Description', cell: (w) => w.description || '—' },
      { label: 'Events', cell: (w) => w.events.join(', ') },
      { label: 'Covers', cell: (w) => `${w.checks.length} checks, ${w.heartbeats.length} heartbeats, ${w.status_pages.length} pages` },
    ], await api.get('/v1/webhooks?per_page=100'), 'No webhooks yet.')));
}

function maintenanceWindows(ctx) {
  const { api } = ctx;
  const edit = can(ctx, 'MAINTENANCE_WINDOWS', 'EDIT');
  const box = h('div');
  const fill = () => box.replaceChildren(load(async () => table('Maintenance windows', [
    { label: 'Name', cell: (w) => w.name },
    { label: 'Status', cell: (w) => status(w.status) },
    { label: 'Starts', cell: (w) => when(w.start_date) },
    { label: 'Duration', cell: (w) => `${w.duration_minutes} min` },
    { label: 'Repeats on', cell: (w) => (w.days_of_week || []).map((d) => d.slice(0, 3).toLowerCase()).join(', ') || '—' },
    { label: 'Time zone', cell: (w) => w.timezone || '—' },
    ...(edit ? [{ label: 'Actions', cell: (w) => h('span', {},
      action(w.status === 'ENABLED' ? 'Disable' : 'Enable', async () => {
        await api.patch(`/v1/maintenance-windows/${encodeURIComponent(w.id)}`, { status: w.status === 'ENABLED' ? 'DISABLED' : 'ENABLED' }); fill();
      }, { 'aria-label': `${w.status === 'ENABLED' ? 'Disable' : 'Enable'} ${w.name}` }),
      action('Delete', async () => {
        if (!(await confirmDialog(`Delete maintenance window "${w.name}"?`, 'Confirm', true))) return;
        await api.del(`/v1/maintenance-windows/${encodeURIComponent(w.id)}`); fill();
      }, { 'aria-label': `Delete ${w.name}`, danger: true })) }] : []),
  ], await api.get('/v1/maintenance-windows?per_page=100'), 'No maintenance windows.')));
  fill();
  const create = edit ? disclosure('New maintenance window', load(async () => {
    const [checks, hbs] = await Promise.all([
      api.get('/v1/checks?per_page=100').catch(() => []),
      api.get('/v1/heartbeats?per_page=100').catch(() => []),
    ]);
    return form({
      id: 'maintenance-window-create', submit: 'Create window',
      fields: [
        { name: 'name', label: 'Window name', required: true },
        { name: 'start_date', label: 'Starts at (local time)', type: 'datetime-local', required: true },
        { name: 'duration_minutes', label: 'Duration (minutes)', type: 'number', value: 60, min: 1 },
        { name: 'timezone', label: 'Time zone', value: Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC' },
        { name: 'days_of_week', label: 'Repeat on', type: 'multi', options: options(weekdays) },
        { name: 'checks', label: 'Checks', type: 'multi', options: (checks || []).map((c) => [c.id, c.name]) },
        { name: 'heartbeats', label: 'Heartbeats', type: 'multi', options: (hbs || []).map((b) => [b.id, b.name]) },
      ],
      onSubmit: (v) => api.post('/v1/maintenance-windows', v),
      done: (r, el) => { el.reset(); fill(); },
    });
  })) : null;
  return section('maintenance-windows', 'Maintenance windows', create, box);
}

export async function render(root, params, ctx) {
  page(root, 'Alerting',
    h('nav', { class: 'vc-subnav', 'aria-label': 'Alerting sections' },
      h('a', { href: '#integrations' }, 'Integrations'), ' · ',
      h('a', { href: '#webhooks' }, 'Webhooks'), ' · ',
      h('a', { href: '#maintenance-windows' }, 'Maintenance windows')),
    integrations(ctx), webhooks(ctx), maintenanceWindows(ctx));
}
