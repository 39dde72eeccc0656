// The delivery log shared by integrations and webhooks: each delivery with every attempt.
import { h } from '../ui.js';
import { table, when, status, action } from './parts.js';

export function deliveriesTable(deliveries, resend) {
  return table('Deliveries, newest first', [
    { label: 'Event', cell: (d) => d.event_type },
    { label: 'Status', cell: (d) => status(d.status) },
    { label: 'Created', cell: (d) => when(d.created_at) },
    { label: 'Delivered', cell: (d) => when(d.delivered_at) },
    { label: 'Attempts', cell: (d) => attempts(d) },
    ...(resend ? [{ label: 'Actions', cell: (d) => (d.status === 'PENDING' ? '—' : action('Resend', () => resend(d), { 'aria-label': `Resend ${d.event_type} delivery` })) }] : []),
  ], deliveries, 'No deliveries yet.');
}

function attempts(d) {
  const list = d.attempts || [];
  if (list.length === 0) return d.next_attempt_at ? ['none yet, next ', when(d.next_attempt_at)] : 'none';
  return h('details', {}, h('summary', {}, `${list.length} attempt${list.length === 1 ? '' : 's'}${d.last_status_code ? `, last HTTP ${d.last_status_code}` : ''}`),
    h('ol', { class: 'vc-attempts' }, ...list.map((a) => h('li', {},
      when(a.attempted_at), ` — ${a.status_code ? `HTTP ${a.status_code}` : 'no answer'}, ${a.latency_ms} ms`,
      a.error ? [' — ', h('span', { class: 'vc-error-text' }, a.error)] : null))));
}
