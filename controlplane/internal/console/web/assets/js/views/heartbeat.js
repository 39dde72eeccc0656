// One heartbeat: its ping URLs to copy, its last ping and run, and (with HEARTBEAT_CHECKS:EDIT)
// pause/resume, mute/unmute and delete.
//
// The API keeps only the last ping (last_seen, last_duration_ms), not a history of pings, so
// that is what the "last pings" part can show.
import { h } from '../ui.js';
import { page, section, when, since, status, dl, copyable, action, can, confirmDialog } from './parts.js';
import { schedule } from './heartbeats.js';

// pingBase is where the ping listener (VANTAGE_PING_ADDR, :8082 by default) answers: the session
// gives it when the control plane knows its public address, else this host on the default port.
export function pingBase(ctx) {
  const s = ctx.session || {};
  if (s.ping_base_url) return String(s.ping_base_url).replace(/\/$/, '');
  return `${location.protocol}//${location.hostname}:8082`;
}

export async function render(root, params, ctx) {
  const { api, navigate } = ctx;
  const path = `/v1/heartbeats/${encodeURIComponent(params.id)}`;
  const hb = await api.get(path);
  const base = `${pingBase(ctx)}/${encodeURIComponent(hb.id)}`;
  const rerender = () => render(root, params, ctx);
  const edit = can(ctx, 'HEARTBEAT_CHECKS', 'EDIT');
  const paused = hb.status === 'PAUSED';
  const muted = hb.status === 'MUTED';
  page(root, hb.name,
    h('p', {}, status(hb.status)),
    edit ? h('div', { class: 'actions' },
      action(paused ? 'Resume' : 'Pause', async () => { await api.patch(path, { paused: !paused }); await rerender(); }),
      action(muted ? 'Unmute' : 'Mute', async () => { await api.patch(path, { muted: !muted }); await rerender(); }),
      action('Delete', async () => {
        if (!(await confirmDialog(`Delete heartbeat "${hb.name}"?`, 'Confirm', true))) return;
        await api.del(path);
        navigate('/console/heartbeats');
      }, { danger: true })) : null,
    section('heartbeat-ping', 'Ping URLs',
      h('p', { class: 'hint' }, 'Call these from the job (GET or POST, no authentication).'),
      copyable('Success ping URL', base),
      copyable('Start ping URL (times the run)', `${base}/start`),
      copyable('Failure ping URL', `${base}/fail`)),
    section('heartbeat-last', 'Last ping',
      dl([
        ['Last ping', when(hb.last_seen)],
        ['Since then', since(hb.last_seen)],
        ['Last run took', hb.last_duration_ms != null ? `${hb.last_duration_ms} ms` : '—'],
      ])),
    section('heartbeat-settings', 'Settings',
      dl([
        ['Schedule', schedule(hb)],
        ['Grace period', `${hb.grace_period} s`],
        ['Alert priority', hb.alert_priority],
        ['Reminders', hb.reminder_alert_interval_minutes == null || hb.reminder_alert_interval_minutes <= 0 ? 'never' : `every ${hb.reminder_alert_interval_minutes} min`],
        ['Created', when(hb.created_at)],
        ['Updated', when(hb.updated_at)],
      ])));
}
