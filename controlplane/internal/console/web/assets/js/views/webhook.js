// One webhook: what it covers, and its deliveries with their attempts (resend with WEBHOOKS:EDIT).
import { h } from '../ui.js';
import { page, section, when, dl, action, can, load, link, confirmDialog } from './parts.js';
import { deliveriesTable } from './deliveries.js';

export async function render(root, params, ctx) {
  const { api, navigate } = ctx;
  const path = `/v1/webhooks/${encodeURIComponent(params.id)}`;
  const w = await api.get(path);
  const edit = can(ctx, 'WEBHOOKS', 'EDIT');
  const log = h('div');
  const fillLog = () => log.replaceChildren(load(async () => deliveriesTable(
    await api.get(`${path}/deliveries?per_page=50`),
    edit ? async (d) => { await api.post(`${path}/deliveries/${encodeURIComponent(d.id)}/resend`, {}); fillLog(); } : null)));
  fillLog();
  const names = (list) => list.map((x) => x.name).join(', ') || '—';
  page(root, w.description || w.url,
    h('p', {}, link('/console/alerting', '← Alerting')),
    dl([
      ['URL', h('code', {}, w.url)],
      ['Events', w.events.join(', ')],
      ['Checks', names(w.checks)],
      ['Heartbeats', names(w.heartbeats)],
      ['Status pages', names(w.status_pages)],
      ['Created', when(w.created_at)],
    ]),
    edit ? h('div', { class: 'actions' }, action('Delete', async () => {
      if (!(await confirmDialog('Delete this webhook?', 'Confirm', true))) return;
      await api.del(path);
      navigate('/console/alerting');
    }, { danger: true })) : null,
    section('webhook-deliveries', 'Deliveries', log));
}
