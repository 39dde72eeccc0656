// Small DOM helpers shared by the views. Views build their DOM with h() and never assign HTML
// strings, so nothing the API returns can become markup.

const SVG_NS = 'http://www.w3.org/2000/svg';

function build(el, attrs, children) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2).toLowerCase(), v);
    else if (k === 'value' || k === 'checked' || k === 'selected' || k === 'indeterminate') el[k] = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

// h creates an HTML element: h('a', {href: '/x', class: 'btn'}, 'text', child, [more]).
// Attributes named on* with a function value become event listeners.
export function h(tag, attrs, ...children) { return build(document.createElement(tag), attrs, children); }

// s creates an SVG element, like h.
export function s(tag, attrs, ...children) { return build(document.createElementNS(SVG_NS, tag), attrs, children); }

// clear empties an element and appends the given children.
export function clear(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

export function setTitle(...parts) { document.title = [...parts.filter(Boolean), 'Vantage'].join(' · '); }

// ---- formatting ----

const rtf = new Intl.RelativeTimeFormat('en', { numeric: 'auto', style: 'short' });

// ago is "3 min. ago" for a timestamp (or "—").
export function ago(ts, now = Date.now()) {
  if (!ts) return '—';
  const secs = Math.round((new Date(ts).getTime() - now) / 1000);
  const abs = Math.abs(secs);
  if (abs < 45) return secs <= 0 ? 'just now' : 'in a few sec.';
  if (abs < 3600) return rtf.format(Math.round(secs / 60), 'minute');
  if (abs < 86400) return rtf.format(Math.round(secs / 3600), 'hour');
  return rtf.format(Math.round(secs / 86400), 'day');
}

const dtf = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
export function dateTime(ts) { return ts ? dtf.format(new Date(ts)) : '—'; }

// time is a <time> element showing ago(ts) with the full date as its title.
export function time(ts) {
  if (!ts) return h('span', { class: 'muted' }, '—');
  return h('time', { datetime: ts, title: dateTime(ts) }, ago(ts));
}

export function ms(v) {
  if (v === null || v === undefined || Number.isNaN(v)) return '—';
  if (v >= 10000) return `${(v / 1000).toFixed(1)} s`;
  return `${Math.round(v)} ms`;
}

export function pct(v, digits = 2) {
  if (v === null || v === undefined || Number.isNaN(Number(v))) return '—';
  const n = Number(v);
  return `${n >= 100 ? '100' : n.toFixed(digits)}%`;
}

export function duration(secs) {
  if (secs === null || secs === undefined) return '—';
  const s0 = Math.round(secs);
  if (s0 < 60) return `${s0}s`;
  if (s0 < 3600) return s0 % 60 ? `${Math.floor(s0 / 60)}m ${s0 % 60}s` : `${s0 / 60}m`;
  if (s0 < 86400) return `${Math.floor(s0 / 3600)}h ${Math.floor((s0 % 3600) / 60)}m`;
  return `${Math.floor(s0 / 86400)}d ${Math.floor((s0 % 86400) / 3600)}h`;
}

export function region(r) { return String(r || '').replace(/^[a-z]+:/, ''); }

const KINDS = { UPTIME: 'HTTP', BROWSER: 'Browser', DNS: 'DNS', TCP: 'TCP', MULTISTEP: 'Multistep', PING: 'Ping', GRPC: 'gRPC', WEBSOCKET: 'WebSocket' };
export function kindLabel(k) { return KINDS[k] || k || '—'; }

// statusTone is the colour family of a check status.
export function statusTone(status) {
  switch (status) {
    case 'UP': return 'up';
    case 'DOWN': return 'down';
    case 'RECOVERING': case 'VERIFYING': case 'DEGRADED': return 'warn';
    case 'PAUSED': case 'MUTED': case 'MAINTENANCE': return 'idle';
    default: return 'none';
  }
}

export function statusBadge(status) {
  const label = status ? status.charAt(0) + status.slice(1).toLowerCase().replace('_', ' ') : 'Unknown';
  return h('span', { class: `badge tone-${statusTone(status)}` }, h('span', { class: 'dot', 'aria-hidden': 'true' }), label);
}

// ---- forms ----

// field wraps a labelled control with a hint and a slot for the API's error about name.
export function field(label, control, { name, hint, wide } = {}) {
  const id = control.id || `f-${(name || label).replace(/[^\w-]/g, '-')}-${Math.random().toString(36).slice(2, 7)}`;
  control.id = id;
  const err = h('p', { class: 'field-error', id: `${id}-err`, hidden: true });
  const describedBy = [err.id];
  let hintEl = null;
  if (hint) {
    hintEl = h('p', { class: 'hint', id: `${id}-hint` }, hint);
    describedBy.unshift(hintEl.id);
  }
  control.setAttribute('aria-describedby', describedBy.join(' '));
  const wrap = h('div', { class: `field${wide ? ' wide' : ''}`, 'data-field': name || '' },
    h('label', { for: id }, label), control, hintEl, err);
  return wrap;
}

// fieldFor finds the field wrapper of name or of its closest parent.
function fieldFor(form, name) {
  for (let n = name; n;) {
    const wrap = form.querySelector(`[data-field="${CSS.escape(n)}"]`);
    if (wrap) return wrap;
    const parent = n.replace(/(\[[^\]]*\]|\.[^.[]*)$/, '');
    if (parent === n) return null;
    n = parent;
  }
  return null;
}

// showErrors puts each of err.fields next to the field it names (data-field, or the closest
// parent name: "assertions[0].expected" falls back to "assertions"), and returns the messages
// no field took.
export function showErrors(form, err) {
  for (const el of form.querySelectorAll('.field-error')) { el.hidden = true; el.textContent = ''; }
  for (const el of form.querySelectorAll('[aria-invalid]')) el.removeAttribute('aria-invalid');
  const rest = [];
  // An error that is not the API's (a network failure, a bug) is shown whole.
  const unnamed = err.errors ? err.errors.filter((e) => !/^[A-Za-z_][\w.[\]-]*: /.test(e.message || '')).map((e) => e.message) : [err.message || String(err)];
  let first = null;
  for (const [name, msg] of Object.entries(err.fields || {})) {
    const wrap = fieldFor(form, name);
    if (!wrap) { rest.push(`${name}: ${msg}`); continue; }
    const slot = wrap.querySelector(':scope > .field-error') || wrap.querySelector('.field-error');
    slot.textContent = wrap.dataset.field === name ? msg : `${name}: ${msg}`;
    slot.hidden = false;
    const control = wrap.querySelector('input, select, textarea');
    if (control) control.setAttribute('aria-invalid', 'true');
    first = first || control;
  }
  if (first) first.focus();
  return [...unnamed, ...rest];
}

// ---- toasts ----

export function toast(message, kind = 'info') {
  const box = document.getElementById('toasts');
  const t = h('div', { class: `toast toast-${kind}` }, message);
  box.append(t);
  setTimeout(() => t.remove(), kind === 'error' ? 8000 : 4000);
}

// errorBox is a view-wide message for a failed load.
export function errorBox(err) {
  if (err && err.status === 404) {
    return h('div', { class: 'empty' }, h('h1', { tabindex: '-1' }, 'Not found'),
      h('p', {}, 'This does not exist, or it belongs to another organization.'),
      h('p', {}, h('a', { href: '/console/checks' }, 'Back to checks')));
  }
  return h('div', { class: 'alert alert-error', role: 'alert' }, err && err.message ? err.message : String(err));
}

// confirmDialog asks a yes/no question in a modal <dialog>; resolves true on confirm.
export function confirmDialog(question, confirmLabel = 'Confirm', danger = false) {
  return new Promise((resolve) => {
    const dlg = h('dialog', { class: 'dialog', 'aria-label': question },
      h('form', { method: 'dialog' },
        h('p', {}, question),
        h('div', { class: 'actions' },
          h('button', { value: 'cancel', class: 'btn' }, 'Cancel'),
          h('button', { value: 'ok', class: `btn ${danger ? 'btn-danger' : 'btn-primary'}` }, confirmLabel))));
    dlg.addEventListener('close', () => { resolve(dlg.returnValue === 'ok'); dlg.remove(); });
    document.body.append(dlg);
    dlg.showModal();
  });
}
