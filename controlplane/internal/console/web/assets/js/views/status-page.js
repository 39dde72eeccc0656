// One status page: its components and groups, incidents (open first), scheduled maintenance,
// subscribers and a link to the public page. Edit controls appear with STATUS_PAGES:EDIT.
import { h, toast } from '../ui.js';
import {
  page, section, table, when, status, load, link, form, disclosure, can, action,
  componentStatuses, options, dl, label,
} from './parts.js';
import { publicURL } from './status-pages.js';

const incidentStatuses = ['INVESTIGATING', 'IDENTIFIED', 'MONITORING', 'RESOLVED', 'UPDATE'];
export const impactOptions = options(['MAJOR_OUTAGE', 'PARTIAL_OUTAGE', 'DEGRADED_PERFORMANCE', 'NO_IMPACT', 'MAINTENANCE']);

// componentFields gives one select per component, "unchanged" first, for incident forms.
export function componentFields(components, prefix = 'component') {
  return components.map((c) => ({
    name: `${prefix}:${c.id}`, label: `${c.name} status`, type: 'select',
    options: [['', `Unchanged (${c.status.replace(/_/g, ' ').toLowerCase()})`], ...options(componentStatuses)], value: '',
  }));
}

export function componentChanges(values, prefix = 'component') {
  return Object.entries(values)
    .filter(([k, v]) => k.startsWith(`${prefix}:`) && v)
    .map(([k, v]) => ({ id: k.slice(prefix.length + 1), status: v }));
}

export async function render(root, params, ctx) {
  const { api } = ctx;
  const base = `/v1/status_pages/${encodeURIComponent(params.id)}`;
  const sp = await api.get(base);
  const edit = can(ctx, 'STATUS_PAGES', 'EDIT');
  const rerender = () => render(root, params, ctx);
  const [components, groups] = await Promise.all([
    api.get(`${base}/components?per_page=100`).then((r) => r || []),
    api.get(`${base}/groups?per_page=100`).then((r) => r || []),
  ]);
  const groupName = Object.fromEntries(groups.map((g) => [g.id, g.name]));

  page(root, sp.name,
    dl([
      ['Public page', h('a', { href: publicURL(sp), target: '_blank', rel: 'noopener', 'data-external': '', id: 'public-page-link' }, publicURL(sp))],
      ['Subdomain', sp.subdomain],
      ['Custom domain', sp.custom_domain || '—'],
      ['Private', sp.has_password ? 'password protected' : 'no'],
    ]),
    section('sp-components', 'Components',
      table('Components', [
        { label: 'Name', cell: (c) => c.name },
        { label: 'Group', cell: (c) => (c.group_id ? groupName[c.group_id] || c.group_id : '—') },
        { label: 'Status', cell: (c) => (edit ? componentStatusSelect(api, base, c) : status(c.status)) },
      ], components, 'No components yet.'),
      edit ? disclosure('New component', form({
        id: 'component-create', submit: 'Add component',
        fields: [
          { name: 'name', label: 'Component name', required: true },
          { name: 'status', label: 'Status', type: 'select', options: options(componentStatuses), value: 'OPERATIONAL' },
          { name: 'group_id', label: 'Group', type: 'select', options: [['', 'No group'], ...groups.map((g) => [g.id, g.name])], value: '' },
        ],
        onSubmit: async (v) => {
          const c = await api.post(`${base}/components`, { name: v.name, status: v.status });
          if (v.group_id) await api.patch(`${base}/components/${encodeURIComponent(c.id)}`, { group_id: v.group_id });
          return c;
        },
        done: rerender,
      })) : null),
    section('sp-groups', 'Component groups',
      table('Component groups', [
        { label: 'Name', cell: (g) => g.name },
        { label: 'Description', cell: (g) => g.description || '—' },
        { label: 'Components', cell: (g) => String(components.filter((c) => c.group_id === g.id).length) },
        ...(edit ? [{ label: 'Actions', cell: (g) => action('Delete', async () => {
          await api.del(`${base}/groups/${encodeURIComponent(g.id)}`); await rerender();
        }, { 'aria-label': `Delete group ${g.name}` }) }] : []),
      ], groups, 'No groups.'),
      edit ? disclosure('New group', form({
        id: 'group-create', submit: 'Add group',
        fields: [{ name: 'name', label: 'Group name', required: true }, { name: 'description', label: 'Group description' }],
        onSubmit: (v) => api.post(`${base}/groups`, { name: v.name, ...(v.description ? { description: v.description } : {}) }),
        done: rerender,
      })) : null),
    incidentsSection(api, base, params.id, components, edit, ctx, rerender),
    subscribersSection(api, base, components, edit));
}

function componentStatusSelect(api, base, c) {
  const id = `component-status-${c.id}`;
  const sel = h('select', { id, 'aria-label': `Status of ${c.name}` },
    ...options(componentStatuses).map(([v, l]) => h('option', { value: v, selected: v === c.status ? '' : null }, l)));
  const msg = h('span', { class: 'field-error', role: 'alert' });
  sel.addEventListener('change', async () => {
    msg.textContent = '';
    try {
      await api.patch(`${base}/components/${encodeURIComponent(c.id)}`, { status: sel.value });
      toast(`${c.name} is now ${label(sel.value).toLowerCase()}.`);
    } catch (err) {
      msg.textContent = err.message;
    }
  });
  return h('span', {}, sel, msg);
}

function incidentsSection(api, base, pageId, components, edit, ctx, rerender) {
  const incidentLink = (i) => link(`/console/status-pages/${encodeURIComponent(pageId)}/incidents/${encodeURIComponent(i.id)}`, i.title);
  const list = load(async () => {
    const all = (await api.get(`${base}/incidents?per_page=100`)) || [];
    const incidents = all.filter((i) => !i.scheduled_maintenance);
    const maintenance = all.filter((i) => i.scheduled_maintenance);
    const open = incidents.filter((i) => !i.ended).sort((a, b) => String(b.started).localeCompare(String(a.started)));
    const closed = incidents.filter((i) => i.ended).sort((a, b) => String(b.started).localeCompare(String(a.started)));
    const cols = [
      { label: 'Title', cell: incidentLink },
      { label: 'Impact', cell: (i) => (i.impact ? status(i.impact) : '—') },
      { label: 'Latest update', cell: (i) => (i.latest_update ? status(i.latest_update.status) : '—') },
      { label: 'Started', cell: (i) => when(i.started) },
      { label: 'Ended', cell: (i) => when(i.ended) },
    ];
    return [
      h('h3', {}, 'Open'), table('Open incidents', cols, open, 'No open incident.'),
      h('h3', {}, 'Resolved'), table('Resolved incidents', cols, closed, 'No resolved incident.'),
      h('h3', { id: 'sp-maintenance' }, 'Scheduled maintenance'),
      table('Scheduled maintenance', [
        { label: 'Title', cell: incidentLink },
        { label: 'Starts', cell: (i) => when(i.scheduled_maintenance.start_date) },
        { label: 'Duration', cell: (i) => `${i.scheduled_maintenance.duration_minutes} min` },
        { label: 'State', cell: (i) => (i.latest_update ? status(i.latest_update.status) : '—') },
      ], maintenance, 'No maintenance scheduled.'),
    ];
  });
  return section('sp-incidents', 'Incidents',
    edit ? disclosure('New incident', form({
      id: 'incident-create', submit: 'Publish incident',
      fields: [
        { name: 'title', label: 'Title', required: true },
        { name: 'description', label: 'What is happening', type: 'textarea', required: true },
        { name: 'status', label: 'Status', type: 'select', options: options(incidentStatuses), value: 'INVESTIGATING' },
        { name: 'notify_subscribers', label: 'Notify subscribers', type: 'checkbox', value: true },
        ...componentFields(components),
      ],
      onSubmit: (v) => api.post(`${base}/incidents`, {
        title: v.title, description: v.description, status: v.status,
        notify_subscribers: v.notify_subscribers, components: componentChanges(v),
      }),
      done: (i) => ctx.navigate(`/console/status-pages/${encodeURIComponent(pageId)}/incidents/${encodeURIComponent(i.id)}`),
    })) : null,
    edit ? disclosure('Schedule maintenance', form({
      id: 'maintenance-create', submit: 'Schedule maintenance',
      fields: [
        { name: 'title', label: 'Maintenance title', required: true },
        { name: 'description', label: 'Announcement', type: 'textarea', required: true },
        { name: 'start_date', label: 'Starts at (local time)', type: 'datetime-local', required: true },
        { name: 'duration_minutes', label: 'Duration (minutes)', type: 'number', value: 60, min: 1 },
        { name: 'components_affected', label: 'Components affected', type: 'multi', options: components.map((c) => [c.id, c.name]) },
        { name: 'an_hour_before', label: 'Notify subscribers an hour before', type: 'checkbox', value: true },
        { name: 'at_start', label: 'Notify subscribers at the start', type: 'checkbox', value: true },
        { name: 'at_end', label: 'Notify subscribers at the end', type: 'checkbox', value: true },
      ],
      onSubmit: (v) => api.post(`${base}/scheduled_maintenance`, {
        title: v.title, description: v.description, start_date: v.start_date, duration_minutes: v.duration_minutes,
        components_affected: v.components_affected,
        notifications: { an_hour_before: v.an_hour_before, at_start: v.at_start, at_end: v.at_end },
      }),
      done: rerender,
    })) : null,
    list);
}

function subscribersSection(api, base, components, edit) {
  const box = h('div');
  const fill = () => box.replaceChildren(load(async () => {
    const subs = (await api.get(`${base}/subscribers?per_page=100`)) || [];
    return table('Subscribers', [
      { label: 'E-mail', cell: (s) => s.email_address },
      { label: 'Confirmed', cell: (s) => (s.confirmed ? 'yes' : 'not yet') },
      { label: 'Components', cell: (s) => (s.component_subscription_mode === 'ALL_COMPONENTS' ? 'all' : `${s.component_ids.length} selected`) },
      { label: 'Since', cell: (s) => when(s.created_at) },
      ...(edit ? [{ label: 'Actions', cell: (s) => action('Remove', async () => {
        await api.del(`${base}/subscribers/${encodeURIComponent(s.id)}`); fill();
      }, { 'aria-label': `Remove subscriber ${s.email_address}` }) }] : []),
    ], subs, 'No subscribers.');
  }));
  fill();
  return section('sp-subscribers', 'Subscribers',
    edit ? disclosure('Add subscriber', form({
      id: 'subscriber-create', submit: 'Add subscriber',
      fields: [{ name: 'email_address', label: 'E-mail address', type: 'email', required: true }],
      onSubmit: (v) => api.post(`${base}/subscribers`, { email_address: v.email_address }),
      done: (r, el) => { el.reset(); fill(); },
    })) : null,
    box);
}
