// One integration: its settings (secrets redacted by the API), a test message and the delivery log.
import { h } from '../ui.js';
import { page, section, when, dl, action, can, load, link, confirmDialog } from './parts.js';
import { deliveriesTable } from './deliveries.js';

export async function render(root, params, ctx) {
  const { api, navigate } = ctx;
  const path = `/v1/integrations/${encodeURIComponent(params.id)}`;
  const it = await api.get(path);
  const edit = can(ctx, 'INTEGRATIONS', 'EDIT');
  const testResult = h('div', { role: 'status', id: 'integration-test-result' });
  const log = h('div');
  const fillLog = () => log.replaceChildren(load(async () => deliveriesTable(await api.get(`${path}/deliveries?per_page=50`))));
  fillLog();
  page(root, it.name,
    h('p', {}, link('/console/alerting', '← Alerting')),
    dl([
      ['Type', it.type.replace(/_/g, ' ')],
      ...Object.entries(it.settings || {}).map(([k, v]) => [k, h('code', {}, v)]),
      ['Status pages', (it.status_pages || []).map((p) => p.name).join(', ') || '—'],
      ['Created', when(it.created_at)],
    ]),
    edit ? h('div', { class: 'actions' },
      action('Send a test message', async () => {
        const r = await api.post(`${path}/test`, {});
        testResult.replaceChildren(h('p', { class: r.delivered ? 'vc-ok' : 'field-error' },
          r.delivered ? `Delivered (HTTP ${r.status_code}, ${r.latency_ms} ms).` : `Not delivered: ${r.error || `HTTP ${r.status_code}`}`),
        r.response ? h('pre', { class: 'code' }, r.response) : null);
        fillLog();
      }),
      action('Delete', async () => {
        if (!(await confirmDialog(`Delete integration "${it.name}"?`, 'Confirm', true))) return;
        await api.del(path);
        navigate('/console/alerting');
      }, { danger: true })) : null,
    testResult,
    section('integration-deliveries', 'Last deliveries', log));
}
