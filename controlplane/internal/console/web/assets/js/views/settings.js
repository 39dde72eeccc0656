// Settings: API tokens (created secrets are shown once; revoke), people and invitations,
// environment variables (secret values are write-only) and the audit log. Each part needs its
// own area and loads on its own.
import { h } from '../ui.js';
import { page, section, table, when, load, form, disclosure, can, action, copyable, confirmDialog } from './parts.js';

const areaLabels = {
  UPTIME_CHECKS: 'Checks', HEARTBEAT_CHECKS: 'Heartbeats', STATUS_PAGES: 'Status pages', MAINTENANCE_WINDOWS: 'Maintenance windows',
  PEOPLE: 'People and audit log', INTEGRATIONS: 'Integrations', API_TOKENS: 'API tokens', WEBHOOKS: 'Webhooks',
  ENVIRONMENT_VARIABLES: 'Environment variables', PROJECTS: 'Projects', AGENTS: 'Agents (operators)',
};
const areas = Object.keys(areaLabels);

// grantable lists what the session may hand on: a token cannot grant more than its creator holds.
function grantable(ctx) {
  return areas.map((a) => [a, can(ctx, a, 'EDIT') ? ['READ', 'EDIT'] : can(ctx, a, 'READ') ? ['READ'] : []])
    .filter(([, levels]) => levels.length);
}

const expiries = [['365', 'In a year'], ['90', 'In 90 days'], ['30', 'In 30 days'], ['never', 'Never']];

function tokens(ctx) {
  const { api } = ctx;
  const edit = can(ctx, 'API_TOKENS', 'EDIT');
  const box = h('div');
  const created = h('div', { id: 'token-created' });
  const fill = () => box.replaceChildren(load(async () => {
    const page1 = await api.get('/v1/tokens?per_page=100');
    return table('API tokens', [
      { label: 'Name', cell: (t) => t.name },
      { label: 'Grants', cell: (t) => t.grants.map((g) => `${g.scope}:${g.permission}`).join(', ') },
      { label: 'Created', cell: (t) => when(t.createdAt) },
      { label: 'Expires', cell: (t) => (t.expiresAfter ? when(t.expiresAfter) : 'never') },
      ...(edit ? [{ label: 'Actions', cell: (t) => action('Revoke', async () => {
        if (!(await confirmDialog(`Revoke token "${t.name}"? Whatever uses it stops working at once.`, 'Confirm', true))) return;
        await api.del(`/v1/tokens/${encodeURIComponent(t.id)}`); created.replaceChildren(); fill();
      }, { 'aria-label': `Revoke token ${t.name}`, danger: true }) }] : []),
    ], (page1 && page1.result) || [], 'No API tokens.');
  }));
  fill();
  const create = edit ? disclosure('New API token', form({
    id: 'token-create', submit: 'Create token',
    fields: [
      { name: 'name', label: 'Token name', required: true },
      { name: 'expires', label: 'Expires', type: 'select', options: expiries, value: '365' },
      ...grantable(ctx).map(([a, levels]) => ({
        name: `grant:${a}`, label: areaLabels[a],
        type: 'select', options: [['', 'No access'], ...levels.map((l) => [l, l === 'READ' ? 'Read' : 'Read and edit'])], value: '',
      })),
    ],
    onSubmit: (v) => {
      const grants = Object.entries(v).filter(([k, val]) => k.startsWith('grant:') && val)
        .map(([k, val]) => ({ scope: k.slice(6), permission: val }));
      const body = { name: v.name, grants };
      if (v.expires === 'never') body.expiresAt = null;
      else body.expiresAt = new Date(Date.now() + Number(v.expires) * 86400e3).toISOString();
      return api.post('/v1/tokens', body);
    },
    done: (t, el) => {
      el.reset();
      created.replaceChildren(h('div', { class: 'alert alert-info', role: 'status' },
        h('p', {}, `Token "${t.name}" created. Copy it now: it is shown only this once.`),
        copyable('New API token', t.token)));
      fill();
    },
  })) : null;
  return section('tokens', 'API tokens', create, created, box);
}

function people(ctx) {
  const { api } = ctx;
  const edit = can(ctx, 'PEOPLE', 'EDIT');
  const users = h('div');
  const invites = h('div');
  const fillUsers = () => users.replaceChildren(load(async () => table('Members', [
    { label: 'Name', cell: (u) => [u.first_name, u.last_name].filter(Boolean).join(' ') || '—' },
    { label: 'E-mail', cell: (u) => u.email },
    { label: 'Role', cell: (u) => u.role },
    ...(edit ? [{ label: 'Actions', cell: (u) => action('Remove', async () => {
      if (!(await confirmDialog(`Remove ${u.email} from the organization?`, 'Confirm', true))) return;
      await api.del(`/v1/users/${encodeURIComponent(u.id)}`); fillUsers();
    }, { 'aria-label': `Remove ${u.email}`, danger: true }) }] : []),
  ], await api.get('/v1/users?per_page=100'), 'No members.')));
  const fillInvites = () => invites.replaceChildren(load(async () => table('Pending invitations', [
    { label: 'E-mail', cell: (i) => i.email },
    { label: 'Role', cell: (i) => i.role },
    { label: 'Sent', cell: (i) => when(i.created_at) },
  ], await api.get('/v1/invitations?per_page=100'), 'No pending invitations.')));
  fillUsers();
  fillInvites();
  return section('people', 'People',
    users,
    h('h3', {}, 'Invitations'),
    edit ? disclosure('Invite someone', form({
      id: 'invitation-create', submit: 'Send invitation',
      fields: [
        { name: 'email', label: 'E-mail address', type: 'email', required: true },
        { name: 'role', label: 'Role', type: 'select', options: [['STANDARD', 'Standard'], ['ADMIN', 'Admin']], value: 'STANDARD' },
      ],
      onSubmit: (v) => api.post('/v1/invitations', v),
      done: (r, el) => { el.reset(); fillInvites(); },
    })) : null,
    invites);
}

function environment(ctx) {
  const { api } = ctx;
  const edit = can(ctx, 'ENVIRONMENT_VARIABLES', 'EDIT');
  const box = h('div');
  const fill = () => box.replaceChildren(load(async () => table('Environment variables', [
    { label: 'Name', cell: (v) => h('code', {}, v.name) },
    { label: 'Type', cell: (v) => v.type },
    { label: 'Value', cell: (v) => (v.type === 'secret' ? h('span', { class: 'muted' }, 'hidden (write-only)') : valueCell(api, v)) },
    { label: 'Scope', cell: (v) => (v.project_id ? `project ${v.project_id}` : 'organization') },
    { label: 'Updated', cell: (v) => when(v.updated_at) },
    ...(edit ? [{ label: 'Actions', cell: (v) => h('span', {},
      disclosure(v.type === 'secret' ? 'Replace value' : 'Change value', form({
        id: `env-update-${v.id}`, submit: 'Save',
        fields: [{ name: 'value', label: `New value of ${v.name}`, type: v.type === 'secret' ? 'password' : 'text', required: true }],
        onSubmit: (x) => api.patch(`/v1/env/${encodeURIComponent(v.id)}`, { value: x.value }),
        done: fill,
      })),
      action('Delete', async () => {
        if (!(await confirmDialog(`Delete variable ${v.name}?`, 'Confirm', true))) return;
        await api.del(`/v1/env/${encodeURIComponent(v.id)}`); fill();
      }, { 'aria-label': `Delete ${v.name}`, danger: true })) }] : []),
  ], await api.get('/v1/env?per_page=100'), 'No environment variables.')));
  fill();
  return section('environment', 'Environment variables',
    h('p', { class: 'hint' }, 'Checks use them as {{NAME}}. Secret values can be replaced but never read back.'),
    edit ? disclosure('New variable', form({
      id: 'env-create', submit: 'Create variable',
      fields: [
        { name: 'name', label: 'Variable name', required: true, placeholder: 'API_KEY' },
        { name: 'type', label: 'Variable type', type: 'select', options: [['config', 'Config (readable)'], ['secret', 'Secret (write-only)']], value: 'config' },
        { name: 'value', label: 'Value', type: 'password', required: true },
      ],
      onSubmit: (v) => api.post('/v1/env', v),
      done: (r, el) => { el.reset(); fill(); },
    })) : null,
    box);
}

// valueCell fetches a config variable's value on demand: lists never carry values.
function valueCell(api, v) {
  const out = h('span');
  const b = action('Show', async () => {
    const full = await api.get(`/v1/env/${encodeURIComponent(v.id)}`);
    out.replaceChildren(h('code', {}, full.value || ''));
  }, { 'aria-label': `Show value of ${v.name}` });
  out.append(b);
  return out;
}

const AUDIT_PER_PAGE = 50;

function audit(ctx) {
  const { api } = ctx;
  const box = h('div');
  let pageNo = 1;
  let search = '';
  const fill = () => box.replaceChildren(load(async () => {
    const q = new URLSearchParams({ page: String(pageNo), per_page: String(AUDIT_PER_PAGE) });
    if (search) q.set('search', search);
    const events = (await api.get(`/v1/audit_logs?${q}`)) || [];
    const prev = h('button', { type: 'button', disabled: pageNo === 1 ? '' : null }, 'Newer');
    const next = h('button', { type: 'button', disabled: events.length < AUDIT_PER_PAGE ? '' : null }, 'Older');
    prev.addEventListener('click', () => { pageNo -= 1; fill(); });
    next.addEventListener('click', () => { pageNo += 1; fill(); });
    return [table('Audit log, newest first', [
      { label: 'When', cell: (e) => when(e.created_at) },
      { label: 'Who', cell: (e) => `${e.actor_display_name || e.actor_id || '—'} (${e.actor_type})` },
      { label: 'Action', cell: (e) => h('code', {}, e.audit_action) },
      { label: 'On', cell: (e) => `${e.auditable_type}${e.auditable_display_name ? ` ${e.auditable_display_name}` : ''}` },
      { label: 'From', cell: (e) => e.remote_ip || '—' },
    ], events, 'No events.'), h('div', { class: 'pager' }, prev, ` page ${pageNo} `, next)];
  }));
  const input = h('input', { id: 'audit-search', type: 'search', name: 'search' });
  const searchForm = h('form', { class: 'vc-inline-form', role: 'search' },
    h('label', { for: 'audit-search' }, 'Search the audit log'), input, h('button', { type: 'submit' }, 'Search'));
  searchForm.addEventListener('submit', (ev) => { ev.preventDefault(); search = input.value; pageNo = 1; fill(); });
  fill();
  return section('audit', 'Audit log', searchForm, box);
}

export async function render(root, params, ctx) {
  const parts = [
    ['tokens', 'API tokens', 'API_TOKENS', tokens],
    ['people', 'People', 'PEOPLE', people],
    ['environment', 'Environment variables', 'ENVIRONMENT_VARIABLES', environment],
    ['audit', 'Audit log', 'PEOPLE', audit],
  ];
  const visible = parts.filter(([, , area]) => can(ctx, area));
  page(root, 'Settings',
    h('nav', { class: 'vc-subnav', 'aria-label': 'Settings sections' },
      ...visible.flatMap(([id, label], i) => [i ? ' · ' : null, h('a', { href: `#${id}` }, label)])),
    visible.length ? null : h('p', { class: 'muted' }, 'This session holds no settings permission.'),
    ...visible.map(([, , , build]) => build(ctx)));
}
