// Building blocks of the operational views (incidents, heartbeats, status pages, alerting,
// settings, operators), on top of ui.js: permission checks, panels, tables, and forms whose API
// validation errors land next to the field they name. Everything is built with h(), so data
// from the API is only ever text, never markup.
import { h, time, statusTone, setTitle, field, showErrors, confirmDialog } from '../ui.js';

export { confirmDialog };

// can tells whether the session holds area:level; EDIT grants READ, as the API rules it.
export function can(ctx, area, level = 'READ') {
  const perms = (ctx.session && ctx.session.permissions) || [];
  return perms.includes(`${area}:EDIT`) || (level === 'READ' && perms.includes(`${area}:READ`));
}

// when is a timestamp as "5 min. ago" with the date on hover.
export const when = time;

// duration renders seconds as "3 h 5 min"-style text.
export function duration(seconds) {
  if (seconds == null) return '—';
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min`;
  const hrs = Math.floor(m / 60);
  if (hrs < 48) return `${hrs} h ${m % 60} min`;
  return `${Math.floor(hrs / 24)} d ${hrs % 24} h`;
}

export function since(ts, until) {
  if (!ts) return '—';
  const end = until ? new Date(until) : new Date();
  return duration((end - new Date(ts)) / 1000);
}

// Tones of the statuses the check badges do not know: components, incidents, deliveries.
const tones = {
  OPERATIONAL: 'up', SERVED: 'up', UNSERVED: 'down', UNUSED: 'idle', RESOLVED: 'up', COMPLETED: 'up', DELIVERED: 'up', ENABLED: 'up', NO_IMPACT: 'idle',
  MAJOR_OUTAGE: 'down', FAILED: 'down', INVESTIGATING: 'down',
  PARTIAL_OUTAGE: 'warn', DEGRADED_PERFORMANCE: 'warn', IDENTIFIED: 'warn', MONITORING: 'warn', PENDING: 'warn',
  IN_PROGRESS: 'warn', SCHEDULED: 'idle', DISABLED: 'idle', UPDATE: 'idle',
};

export function label(value) {
  const v = String(value || '');
  return v.charAt(0) + v.slice(1).toLowerCase().replace(/_/g, ' ');
}

export function status(value) {
  const tone = tones[value] || statusTone(value);
  return h('span', { class: `badge tone-${tone}` }, h('span', { class: 'dot', 'aria-hidden': 'true' }), value ? label(value) : 'Unknown');
}

export function section(id, title, ...children) {
  return h('section', { class: 'panel', 'aria-labelledby': `${id}-title`, id },
    h('div', { class: 'panel-head' }, h('h2', { id: `${id}-title` }, title)),
    h('div', { class: 'panel-body stack' }, ...children));
}

// table renders rows under columns [{label, cell(row) → node|string, num}]; empty is the text
// shown when there are no rows.
export function table(caption, columns, rows, empty) {
  if (!rows || rows.length === 0) return h('p', { class: 'muted vc-empty' }, empty);
  return h('div', { class: 'table-wrap' }, h('table', { class: 'data' },
    h('caption', { class: 'sr-only' }, caption),
    h('thead', {}, h('tr', {}, columns.map((c) => h('th', { scope: 'col', class: c.num ? 'num' : null }, c.label)))),
    h('tbody', {}, rows.map((r) => h('tr', {}, columns.map((c) => h('td', { class: c.num ? 'num' : null }, c.cell(r))))))));
}

export function page(root, title, ...children) {
  root.replaceChildren();
  root.append(h('div', { class: 'page-head' }, h('h1', {}, title)));
  for (const c of children.flat()) if (c) root.append(c);
  setTitle(title);
}

function errorText(err) {
  if (err && err.status === 404) return 'Not found.';
  return (err && err.message) || String(err);
}

function inlineError(err) {
  return h('div', { class: 'alert alert-error', role: 'alert' }, errorText(err));
}

// load runs fn and puts its nodes in a placeholder, or the error in their place: each part of a
// view loads on its own, so one refused area (403) does not blank the page.
export function load(fn) {
  const box = h('div', { class: 'loading', 'aria-busy': 'true' }, 'Loading…');
  Promise.resolve().then(fn).then((node) => {
    box.replaceChildren(...[].concat(node).filter(Boolean));
  }, (err) => {
    box.replaceChildren(inlineError(err));
  }).finally(() => {
    box.removeAttribute('aria-busy');
    box.classList.remove('loading');
  });
  return box;
}

let seq = 0;
const nextId = (p) => `${p}-${++seq}`;

// form builds a labelled form from field specs and calls onSubmit(values). A failure shows each
// message beside the field it names (ui.showErrors) and the rest above the button; success calls
// done(result, form).
//   spec: {name, label, type: text|number|select|checkbox|textarea|password|email|url|datetime-local|multi,
//          options: [[value, label]], value, required, hint, placeholder, min}
export function form({ id, fields, submit, onSubmit, done }) {
  const fid = id || nextId('vc-form');
  const controls = {};
  const rows = fields.map((f) => {
    const cid = `${fid}-${f.name.replace(/[^\w-]/g, '-')}`;
    if (f.type === 'multi') {
      const boxes = f.options.map(([v, l]) => h('label', { class: 'check-row' },
        h('input', { type: 'checkbox', name: f.name, value: v, checked: (f.value || []).includes(v) }), ` ${l}`));
      const fs = h('fieldset', { id: cid }, h('legend', {}, f.label),
        boxes.length ? boxes : h('p', { class: 'muted' }, 'None to choose from.'),
        h('p', { class: 'field-error', hidden: true }));
      controls[f.name] = fs;
      return h('div', { class: 'field wide', 'data-field': f.name }, fs);
    }
    if (f.type === 'checkbox') {
      const c = h('input', { id: cid, name: f.name, type: 'checkbox', checked: !!f.value });
      controls[f.name] = c;
      return h('div', { class: 'field wide', 'data-field': f.name },
        h('label', { class: 'check-row' }, c, ` ${f.label}`), h('p', { class: 'field-error', hidden: true }));
    }
    let c;
    if (f.type === 'select') {
      c = h('select', { id: cid, name: f.name }, f.options.map(([v, l]) => h('option', { value: v, selected: v === f.value }, l)));
    } else if (f.type === 'textarea') {
      c = h('textarea', { id: cid, name: f.name, rows: f.rows || 3, required: !!f.required }, f.value || '');
    } else {
      c = h('input', {
        id: cid, name: f.name, type: f.type || 'text', value: f.value != null ? String(f.value) : undefined,
        required: !!f.required, autocomplete: f.type === 'password' ? 'new-password' : 'off',
        placeholder: f.placeholder, min: f.min,
      });
    }
    controls[f.name] = c;
    return field(f.label, c, { name: f.name, hint: f.hint, wide: f.type === 'textarea' });
  });
  const general = h('div', { class: 'alert alert-error', role: 'alert', hidden: true });
  const button = h('button', { type: 'submit', class: 'btn btn-primary' }, submit);
  const el = h('form', { id: fid, class: 'grid vc-form', novalidate: true }, rows, general, h('div', { class: 'actions' }, button));
  el.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    general.hidden = true;
    const values = {};
    for (const f of fields) values[f.name] = readControl(f, controls[f.name]);
    button.disabled = true;
    try {
      const result = await onSubmit(values);
      showErrors(el, { fields: {} });
      if (done) await done(result, el);
    } catch (err) {
      const rest = showErrors(el, err);
      const placed = Object.keys(err.fields || {}).length > 0 && rest.length === 0;
      if (!placed) {
        general.textContent = rest.length ? rest.join(' ') : errorText(err);
        general.hidden = false;
      }
    } finally {
      button.disabled = false;
    }
  });
  return el;
}

function readControl(f, c) {
  if (f.type === 'checkbox') return c.checked;
  if (f.type === 'multi') return [...c.querySelectorAll('input:checked')].map((i) => i.value);
  if (f.type === 'number') return c.value === '' ? undefined : Number(c.value);
  if (f.type === 'datetime-local') return c.value ? new Date(c.value).toISOString() : undefined;
  return c.value;
}

// disclosure keeps a form folded so list pages stay lists until someone acts.
export function disclosure(summary, body) {
  return h('details', { class: 'vc-disclosure' }, h('summary', { class: 'btn' }, summary), h('div', { class: 'vc-disclosure-body' }, body));
}

// action is a button that disables itself while fn runs and reports a failure beside it.
export function action(text, fn, attrs = {}) {
  const msg = h('span', { class: 'field-error', role: 'alert' });
  const { danger, ...rest } = attrs;
  const b = h('button', { type: 'button', class: `btn btn-sm${danger ? ' btn-danger' : ''}`, ...rest }, text);
  b.addEventListener('click', async () => {
    msg.textContent = '';
    b.disabled = true;
    try { await fn(b); } catch (err) { msg.textContent = errorText(err); } finally { if (b.isConnected) b.disabled = false; }
  });
  return h('span', { class: 'vc-action' }, b, msg);
}

// copyable shows a value in a read-only field with a Copy button (clipboard where allowed).
export function copyable(text, value, id) {
  const input = h('input', { id: id || nextId('vc-copy'), type: 'text', readonly: true, value, class: 'mono vc-copy-value' });
  const b = h('button', { type: 'button', class: 'btn btn-sm' }, 'Copy');
  b.addEventListener('click', async () => {
    input.select();
    try { await navigator.clipboard.writeText(value); b.textContent = 'Copied'; } catch { b.textContent = 'Press Ctrl+C'; }
  });
  return h('div', { class: 'field wide vc-copy' }, h('label', { for: input.id }, text), h('div', { class: 'row' }, input, b));
}

export function dl(pairs) {
  return h('dl', { class: 'kv' }, pairs.filter(Boolean).map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]));
}

export function link(href, text) {
  return h('a', { href }, text);
}

export const componentStatuses = ['OPERATIONAL', 'DEGRADED_PERFORMANCE', 'PARTIAL_OUTAGE', 'MAJOR_OUTAGE', 'MAINTENANCE', 'NO_IMPACT'];

export function options(values) {
  return values.map((v) => [v, label(v)]);
}

// parallel maps fn over items, at most n at a time, keeping order.
export async function parallel(items, n, fn) {
  const out = new Array(items.length);
  let next = 0;
  async function worker() {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i], i);
    }
  }
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, worker));
  return out;
}
