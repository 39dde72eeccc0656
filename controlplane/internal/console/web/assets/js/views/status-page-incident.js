// One status-page incident (or scheduled maintenance): its timeline of updates with the
// component changes each made, and (with STATUS_PAGES:EDIT) a form to post an update that can
// also change component statuses.
import { h } from '../ui.js';
import { page, section, when, status, form, can, options, dl, link } from './parts.js';
import { componentFields, componentChanges } from './status-page.js';

const updateStatuses = ['INVESTIGATING', 'IDENTIFIED', 'MONITORING', 'RESOLVED', 'UPDATE'];
const maintenanceStatuses = ['SCHEDULED', 'IN_PROGRESS', 'VERIFYING', 'COMPLETED'];

function timeline(updates) {
  if (!updates || updates.length === 0) return h('p', { class: 'muted' }, 'No updates.');
  const sorted = [...updates].sort((a, b) => String(b.date_happened).localeCompare(String(a.date_happened)));
  return h('ol', { class: 'vc-timeline' }, ...sorted.map((u) => h('li', { class: 'vc-timeline-item' },
    h('div', { class: 'vc-when' }, status(u.status), when(u.date_happened)),
    h('p', {}, u.description),
    (u.components || []).length ? h('ul', { class: 'vc-changes' }, ...u.components.map((c) => h('li', {},
      `${c.name}: ${c.old_status ? c.old_status.replace(/_/g, ' ').toLowerCase() : '—'} → ${c.new_status.replace(/_/g, ' ').toLowerCase()}`))) : null)));
}

export async function render(root, params, ctx) {
  const { api } = ctx;
  const pageBase = `/v1/status_pages/${encodeURIComponent(params.id)}`;
  const path = `${pageBase}/incidents/${encodeURIComponent(params.incidentId)}`;
  const [inc, components] = await Promise.all([api.get(path), api.get(`${pageBase}/components?per_page=100`)]);
  const rerender = () => render(root, params, ctx);
  const maintenance = !!inc.scheduled_maintenance;
  const statuses = maintenance ? [...maintenanceStatuses, 'UPDATE'] : updateStatuses;
  page(root, inc.title,
    h('p', {}, link(`/console/status-pages/${encodeURIComponent(params.id)}`, '← Status page')),
    dl([
      ['Impact', inc.impact ? status(inc.impact) : '—'],
      ['Started', when(inc.started)],
      ['Ended', when(inc.ended)],
      ['Components', (inc.components || []).map((c) => c.name).join(', ') || '—'],
      maintenance ? ['Scheduled', [when(inc.scheduled_maintenance.start_date), ` for ${inc.scheduled_maintenance.duration_minutes} min`]] : null,
    ]),
    can(ctx, 'STATUS_PAGES', 'EDIT') ? section('incident-update', 'Post an update', form({
      id: 'incident-update-create', submit: 'Post update',
      fields: [
        { name: 'status', label: 'Status', type: 'select', options: options(statuses), value: statuses[0] },
        { name: 'description', label: 'Update', type: 'textarea', required: true },
        { name: 'notify_subscribers', label: 'Notify subscribers', type: 'checkbox', value: true },
        ...componentFields(components || []),
      ],
      onSubmit: (v) => api.post(`${path}/updates`, {
        status: v.status, description: v.description, notify_subscribers: v.notify_subscribers,
        components_affected: componentChanges(v),
      }),
      done: rerender,
    })) : null,
    section('incident-timeline', 'Updates', timeline(inc.updates)));
}
