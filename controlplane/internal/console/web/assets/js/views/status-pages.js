// Status pages: the list, each with a link to its public page, and a form to create one.
import { h } from '../ui.js';
import { page, section, table, status, load, link, form, disclosure, can } from './parts.js';

export const publicURL = (p) => `/status/${encodeURIComponent(p.subdomain)}`;

export async function render(root, params, ctx) {
  const { api, navigate } = ctx;
  const create = can(ctx, 'STATUS_PAGES', 'EDIT') ? disclosure('New status page', form({
    id: 'status-page-create',
    submit: 'Create status page',
    fields: [
      { name: 'name', label: 'Name', required: true },
      { name: 'subdomain', label: 'Subdomain', required: true, help: 'The public page is served at /status/<subdomain>.' },
      { name: 'description', label: 'Description', type: 'textarea' },
    ],
    onSubmit: (v) => api.post('/v1/status_pages', { name: v.name, subdomain: v.subdomain, ...(v.description ? { description: v.description } : {}) }),
    done: (p) => navigate(`/console/status-pages/${encodeURIComponent(p.id)}`),
  })) : null;

  page(root, 'Status pages', create,
    section('status-page-list', 'All status pages',
      load(async () => table('Status pages', [
        { label: 'Name', cell: (p) => link(`/console/status-pages/${encodeURIComponent(p.id)}`, p.name) },
        { label: 'Status', cell: (p) => (p.status ? status(p.status) : '—') },
        { label: 'Public page', cell: (p) => h('a', { href: publicURL(p), target: '_blank', rel: 'noopener', 'data-external': '' }, publicURL(p)) },
        { label: 'Custom domain', cell: (p) => p.custom_domain || '—' },
        { label: 'Private', cell: (p) => (p.has_password ? 'password' : 'no') },
      ], await api.get('/v1/status_pages?per_page=100'), 'No status pages yet.'))));
}
