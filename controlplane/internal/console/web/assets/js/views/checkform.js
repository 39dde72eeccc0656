// Create and edit a check of any kind (uptime, browser by URL or script, DNS, TCP, ping, gRPC,
// WebSocket) with all of
// its fields. The API is the judge of every value: its validation errors are shown next to the
// field they name, and a browser script's syntax error at its line and column.
import { h, clear, field, setTitle, showErrors, errorBox, toast, region, kindLabel } from '../ui.js';
import { scriptEditor } from '../editor.js';

const SEGMENT = { UPTIME: 'uptime', BROWSER: 'browser', DNS: 'dns', TCP: 'tcp', MULTISTEP: 'multistep', PING: 'ping', GRPC: 'grpc', WEBSOCKET: 'websocket' };
const REGIONS = ['us-east-1', 'us-east-2', 'us-west-1', 'eu-central-1', 'eu-west-2', 'ap-south-1', 'ap-southeast-2', 'ap-northeast-1'].map((r) => `cloud:${r}`);
const COMPARISONS = ['EQUALS', 'NOT_EQUALS', 'GREATER_THAN', 'LESS_THAN', 'CONTAINS', 'NOT_CONTAINS', 'NULL', 'NOT_NULL', 'EMPTY', 'NOT_EMPTY', 'TRUE', 'FALSE'];
const ASSERTION_TYPES = {
  UPTIME: ['JSON_BODY', 'TEXT_BODY', 'RESPONSE_HEADERS', 'HTML_BODY'],
  BROWSER: ['JSON_BODY', 'TEXT_BODY', 'RESPONSE_HEADERS', 'HTML_BODY'],
  DNS: ['DNS_RESPONSE_CODE', 'DNS_TEXT_ANSWER', 'DNS_JSON_ANSWER'],
  TCP: ['TCP_RESPONSE_TIME', 'TCP_RESPONSE_DATA'],
};
// ALERTS maps each alert list to the integration type whose records it names.
const ALERTS = [['slack_alerts', 'SLACK', 'Slack'], ['discord_alerts', 'DISCORD', 'Discord'], ['microsoft_teams_alerts', 'MICROSOFT_TEAMS', 'Microsoft Teams'],
  ['telegram_alerts', 'TELEGRAM', 'Telegram'], ['pushover_alerts', 'PUSHOVER', 'Pushover'], ['incident_io_alerts', 'INCIDENT_IO', 'incident.io'], ['oncall_alerts', 'ONCALL', 'On-call']];
const SAMPLE_SCRIPT = `import { test, expect } from '@playwright/test'

test('home page loads', async ({ page }) => {
  await page.goto('https://example.com')
  await expect(page).toHaveTitle(/Example/)
})
`;

const input = (attrs) => h('input', { autocomplete: 'off', ...attrs });
const select = (name, options, value) => h('select', { name }, options.map((o) => {
  const [v, l] = Array.isArray(o) ? o : [o, o];
  return h('option', { value: v, selected: String(v) === String(value ?? '') }, l);
}));
const checkbox = (label, name, checked, hint) => {
  const box = input({ type: 'checkbox', name, checked: !!checked });
  const f = field(label, box, { name, hint });
  f.classList.add('check-row');
  return f;
};

export async function render(root, params, ctx) {
  const editing = !!params.id;
  let check = null;
  if (editing) {
    try {
      check = await ctx.api.get(`/v1/checks/${encodeURIComponent(params.id)}`, undefined, { signal: ctx.signal });
    } catch (err) {
      if (err.name !== 'AbortError') root.append(errorBox(err));
      return;
    }
  }
  if (!ctx.can('UPTIME_CHECKS:EDIT')) {
    root.append(h('div', { class: 'alert alert-error', role: 'alert' }, 'Your permissions let you read checks, not change them.'));
    return;
  }
  const q = new URLSearchParams(location.search);
  let kind = check ? check.check_type : (SEGMENT[q.get('kind')] ? q.get('kind') : 'UPTIME');
  setTitle(editing ? `Edit ${check.name}` : 'New check', 'Checks');

  const lookups = await loadLookups(ctx, check);
  const form = h('form', { class: 'stack check-form', novalidate: true });
  const status = h('div', { class: 'alert alert-error', role: 'alert', hidden: true });
  const c = check || {};

  root.append(
    h('div', { class: 'crumbs' }, h('a', { href: '/console/checks' }, 'Checks'), editing ? [' / ', h('a', { href: `/console/checks/${encodeURIComponent(c.id)}` }, c.name)] : null),
    h('div', { class: 'page-head' }, h('h1', {}, editing ? `Edit ${kindLabel(kind)} check` : 'New check')),
    status, form);

  // ---- what to check ----
  const name = input({ name: 'name', value: c.name || '', required: true });
  const project = select('project_id', [['', 'Unassigned'], ...lookups.projects.map((p) => [p.id, p.name])], c.project_id || '');
  const kindPick = h('div', { class: 'kind-pick', role: 'radiogroup', 'aria-label': 'Kind' },
    Object.keys(SEGMENT).map((k) => h('label', {},
      h('input', { type: 'radio', name: 'kind', value: k, checked: k === kind, disabled: editing, onchange: () => { kind = k; history.replaceState(null, '', `?kind=${k}`); drawTarget(); } }),
      kindLabel(k))));
  const targetBox = h('div', { class: 'stack' });
  form.append(h('fieldset', { class: 'stack' }, h('legend', {}, 'What to check'),
    editing ? null : kindPick,
    h('div', { class: 'grid' }, field('Name', name, { name: 'name' }), lookups.projects.length || c.project_id ? field('Project', project, { name: 'project_id' }) : null),
    targetBox));

  let collectTarget = () => ({});
  const drawTarget = () => {
    clear(targetBox);
    collectTarget = { UPTIME: httpFields, BROWSER: browserFields, DNS: dnsFields, TCP: tcpFields, MULTISTEP: multistepFields, PING: pingFields, GRPC: grpcFields, WEBSOCKET: websocketFields }[kind](targetBox, c, kind);
  };
  drawTarget();

  // ---- where and how often ----
  const regionBoxes = REGIONS.map((r) => h('label', { class: 'check-row field' },
    h('input', { type: 'checkbox', name: 'test_regions', value: r, checked: (c.test_regions || ['cloud:us-east-1', 'cloud:eu-central-1']).includes(r) }), region(r)));
  const quorumKind = select('region_quorum', [['majority', 'Majority of reporting regions'], ['any', 'Any one region'], ['all', 'All reporting regions'], ['count', 'At least N regions']],
    typeof c.region_quorum === 'number' ? 'count' : (c.region_quorum || 'majority'));
  const quorumN = input({ type: 'number', min: 1, max: 8, name: 'region_quorum_count', value: typeof c.region_quorum === 'number' ? c.region_quorum : 2 });
  const quorumNField = field('Failing regions', quorumN, { name: 'region_quorum_count' });
  const syncQuorum = () => { quorumNField.hidden = quorumKind.value !== 'count'; };
  quorumKind.addEventListener('change', syncQuorum);
  syncQuorum();
  const interval = input({ type: 'number', min: 30, step: 1, name: 'test_interval', value: c.test_interval ?? 60 });
  const timeout = input({ type: 'number', min: 1000, step: 100, name: 'timeout', value: c.timeout ?? 10000 });
  // Empty means off (null): slowness is judged only when a threshold is set.
  const slowAbove = input({ type: 'number', min: 1, step: 50, name: 'degraded_response_time_ms', value: c.degraded_response_time_ms ?? '' });
  form.append(h('fieldset', { class: 'stack' }, h('legend', {}, 'Where and how often'),
    h('div', { class: 'field', 'data-field': 'test_regions' }, h('span', { class: 'label', id: 'regions-label' }, 'Regions'),
      h('div', { class: 'regions', role: 'group', 'aria-labelledby': 'regions-label' }, regionBoxes), h('p', { class: 'field-error', hidden: true })),
    h('div', { class: 'grid' },
      field('A run fails when', quorumKind, { name: 'region_quorum', hint: 'How many failing regions make a run fail.' }), quorumNField,
      field('Interval (seconds)', interval, { name: 'test_interval' }),
      field('Timeout (ms)', timeout, { name: 'timeout' }),
      field('Degraded above (ms)', slowAbove, { name: 'degraded_response_time_ms', hint: 'Passing runs slower than this are degraded, never down. Empty: off.' }))));

  // ---- verdict and alerts ----
  const confirmation = input({ type: 'number', min: 0, name: 'confirmation_period_seconds', value: c.confirmation_period_seconds ?? 60 });
  const recovery = input({ type: 'number', min: 0, name: 'recovery_period_seconds', value: c.recovery_period_seconds ?? 180 });
  const reminder = input({ type: 'number', min: -1, name: 'reminder_alert_interval_minutes', value: c.reminder_alert_interval_minutes ?? 1440 });
  const priority = select('alert_priority', ['HIGH', 'LOW'], c.alert_priority || (kind === 'TCP' ? 'LOW' : 'HIGH'));
  const deps = h('select', { name: 'depends_on', multiple: true, size: 5 },
    lookups.dependencies.filter((d) => d.id !== c.id).map((d) => h('option', { value: d.id, selected: (c.depends_on || []).includes(d.id) }, d.label)));
  const pickers = [
    picker('People', 'user_alerts', lookups.users, c.user_alerts),
    picker('Webhooks', 'webhook_alerts', lookups.webhooks, c.webhook_alerts),
    ...ALERTS.map(([key, type, label]) => picker(label, key, lookups.integrations.filter((i) => i.type === type), c[key])),
  ].filter(Boolean);
  form.append(h('fieldset', { class: 'stack' }, h('legend', {}, 'Verdict and alerts'),
    h('div', { class: 'grid' },
      field('Confirmation (seconds)', confirmation, { name: 'confirmation_period_seconds', hint: 'How long a failure lasts before the check is DOWN.' }),
      field('Recovery (seconds)', recovery, { name: 'recovery_period_seconds', hint: 'How long it passes again before it is UP.' }),
      field('Reminder (minutes)', reminder, { name: 'reminder_alert_interval_minutes', hint: '-1: never remind.' }),
      field('Alert priority', priority, { name: 'alert_priority' })),
    field('Depends on', deps, { name: 'depends_on', wide: true, hint: 'While one of these is DOWN, this check’s alerts are held back. Ctrl/⌘-click for several.' }),
    pickers.length ? h('div', { class: 'grid' }, pickers.map((p) => p.el)) : h('p', { class: 'muted' }, 'No people, webhooks or integrations to alert yet.')));

  const submit = h('button', { type: 'submit', class: 'btn btn-primary' }, editing ? 'Save changes' : 'Create check');
  form.append(h('div', { class: 'actions sticky-actions' },
    h('a', { class: 'btn', href: editing ? `/console/checks/${encodeURIComponent(c.id)}` : '/console/checks' }, 'Cancel'), submit));

  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    status.hidden = true;
    const body = {
      name: name.value.trim(),
      test_regions: regionBoxes.map((l) => l.querySelector('input')).filter((b) => b.checked).map((b) => b.value),
      region_quorum: quorumKind.value === 'count' ? intOr(quorumN.value) : quorumKind.value,
      test_interval: intOr(interval.value), timeout: intOr(timeout.value),
      degraded_response_time_ms: slowAbove.value.trim() === '' ? null : intOr(slowAbove.value),
      confirmation_period_seconds: intOr(confirmation.value), recovery_period_seconds: intOr(recovery.value),
      reminder_alert_interval_minutes: intOr(reminder.value), alert_priority: priority.value,
      depends_on: [...deps.selectedOptions].map((o) => o.value),
      ...Object.fromEntries(pickers.map((p) => [p.key, p.value()])),
      ...collectTarget(editing),
    };
    if (!editing && project.value) body.project_id = project.value;
    submit.disabled = true;
    try {
      const seg = SEGMENT[kind];
      let saved;
      if (editing) {
        saved = await ctx.api.patch(`/v1/checks/${seg}/${encodeURIComponent(c.id)}`, body);
        if ((c.project_id || '') !== project.value) {
          await ctx.api.post(`/v1/checks/${encodeURIComponent(c.id)}/move`, { project_id: project.value || null });
        }
      } else {
        saved = await ctx.api.post(`/v1/checks/${seg}`, body);
      }
      toast(editing ? 'Check saved' : 'Check created');
      ctx.navigate(`/console/checks/${encodeURIComponent(saved.id || c.id)}`);
    } catch (err) {
      const rest = showErrors(form, err);
      const editor = form.querySelector('.editor');
      if (editor && editor.markError) editor.markError(err.fields.script || '');
      if (rest.length) {
        status.textContent = rest.join('; ');
        status.hidden = false;
        status.scrollIntoView({ block: 'nearest' });
      }
    } finally {
      submit.disabled = false;
    }
  });
  root.dataset.ready = 'true';
}

// intOr reads a number field; an unparsable value goes to the API as it is, whose error names it.
function intOr(v) {
  const n = Number(v);
  return v !== '' && Number.isInteger(n) ? n : v;
}

// loadLookups reads the names a form offers (projects, people, webhooks, integrations, checks
// and heartbeats to depend on): one call each, in parallel, of the lists the session may read;
// the others stay empty.
async function loadLookups(ctx, check) {
  const opts = { signal: ctx.signal };
  const list = (path, area) => (ctx.can(`${area}:READ`)
    ? ctx.api.list(path, { per_page: 100 }, opts).then((r) => r.items).catch(() => [])
    : Promise.resolve([]));
  const [projects, users, webhooks, integrations, checks, heartbeats] = await Promise.all([
    list('/v1/projects', 'PROJECTS'), list('/v1/users', 'PEOPLE'), list('/v1/webhooks', 'WEBHOOKS'),
    list('/v1/integrations', 'INTEGRATIONS'), list('/v1/checks', 'UPTIME_CHECKS'), list('/v1/heartbeats', 'HEARTBEAT_CHECKS')]);
  const person = (u) => [u.first_name, u.last_name].filter(Boolean).join(' ') || u.email || u.id;
  const dependencies = [...checks.map((c) => ({ id: c.id, label: `${c.name} (check)` })), ...heartbeats.map((b) => ({ id: b.id, label: `${b.name} (heartbeat)` }))];
  for (const id of (check && check.depends_on) || []) {
    if (!dependencies.some((d) => d.id === id)) dependencies.push({ id, label: id });
  }
  return {
    projects, dependencies, integrations,
    users: users.map((u) => ({ id: u.id, name: person(u) })),
    webhooks: webhooks.map((w) => ({ id: w.id, name: w.description || w.url })),
  };
}

// picker is a group of checkboxes choosing ids of one alert list; ids the caller cannot name
// (not listed) are kept as they are.
function picker(label, key, items, selected) {
  const chosen = new Set(selected || []);
  const known = new Set(items.map((i) => i.id));
  const kept = [...chosen].filter((id) => !known.has(id));
  if (!items.length && !kept.length) return null;
  const boxes = items.map((i) => h('label', { class: 'check-row field' },
    h('input', { type: 'checkbox', value: i.id, checked: chosen.has(i.id) }), i.name));
  const id = `alerts-${key}`;
  const el = h('div', { class: 'field', 'data-field': key },
    h('span', { class: 'label', id }, label),
    h('div', { class: 'rows', role: 'group', 'aria-labelledby': id }, boxes),
    kept.length ? h('p', { class: 'hint' }, `${kept.length} more not listed here are kept.`) : null,
    h('p', { class: 'field-error', hidden: true }));
  return { el, key, value: () => [...boxes.map((b) => b.querySelector('input')).filter((b) => b.checked).map((b) => b.value), ...kept] };
}

// ---- per-kind fields; each returns the function collecting its part of the body ----

function httpFields(box, c, kind) {
  const url = input({ type: 'url', name: 'url', value: c.url || '', placeholder: 'https://example.com/health', inputmode: 'url' });
  const method = select('method', ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'], c.method || 'GET');
  const body = h('textarea', { name: 'body', rows: 3 }, c.body || '');
  const text = input({ name: 'text_to_search_for', value: c.text_to_search_for || '' });
  const headers = keyValues('Headers', 'headers', c.headers, 'Header', 'Value');
  const assertions = assertionRows(c.assertions, kind);
  const user = input({ name: 'auth_username', value: c.auth_username ?? '' });
  const pass = input({ type: 'password', name: 'auth_password', value: c.auth_password ?? '' });
  const certDays = certificateDays(c, 'For https: URLs.');
  box.append(
    field('URL', url, { name: 'url', wide: true }),
    h('div', { class: 'grid' }, field('Method', method, { name: 'method' }), field('Text to search for', text, { name: 'text_to_search_for' }),
      field('Basic auth user', user, { name: 'auth_username', hint: '{{NAME}} reads an environment variable.' }), field('Basic auth password', pass, { name: 'auth_password' })),
    field('Request body', body, { name: 'body', wide: true }),
    headers.el, assertions.el,
    h('div', { class: 'grid' }, checkbox('Follow redirects', 'follow_redirects', c.follow_redirects ?? true), checkbox('Verify TLS certificate', 'verify_ssl', c.verify_ssl ?? true)),
    certDays.el);
  return (editing) => ({
    url: url.value.trim(), method: method.value, body: body.value || null,
    text_to_search_for: text.value || null, headers: headers.value(), assertions: assertions.value(),
    auth_username: user.value === '' && !editing ? undefined : (user.value || null),
    auth_password: pass.value === '' && !editing ? undefined : (pass.value || null),
    follow_redirects: box.querySelector('[name=follow_redirects]').checked, verify_ssl: box.querySelector('[name=verify_ssl]').checked,
    certificate_expiry_alert_days: certDays.value(),
  });
}

// certificateDays edits certificate_expiry_alert_days as a comma-separated list of days. What
// is not a whole number is sent as written, so that the API's 400 names the field.
function certificateDays(c, hint) {
  const days = input({ name: 'certificate_expiry_alert_days', value: (c.certificate_expiry_alert_days ?? [14, 7, 1]).join(', '), placeholder: '14, 7, 1' });
  return {
    el: field('Certificate expiry alerts (days before)', days, { name: 'certificate_expiry_alert_days',
      hint: `${hint} certificate.expiring is sent once per certificate at each; empty turns the alerts off.` }),
    value: () => days.value.split(/[\s,]+/).filter((t) => t !== '').map((t) => (/^\d+$/.test(t) ? Number(t) : t)),
  };
}

function browserFields(box, c) {
  let mode = c.id && !c.url ? 'script' : (c.script && !c.url ? 'script' : 'url');
  const url = input({ type: 'url', name: 'url', value: c.url || '', placeholder: 'https://example.com/', inputmode: 'url' });
  const text = input({ name: 'text_to_search_for', value: c.text_to_search_for || '' });
  const editor = scriptEditor('script', c.script || SAMPLE_SCRIPT);
  const urlPart = h('div', { class: 'stack' }, field('URL', url, { name: 'url', wide: true }), field('Text to search for', text, { name: 'text_to_search_for' }));
  const scriptPart = field('Script', editor.textarea, { name: 'script', wide: true, hint: 'A Playwright test: import from @playwright/test and declare at least one test().' });
  scriptPart.replaceChild(editor.el, editor.textarea);
  editor.el.append(editor.textarea);
  const sync = () => { urlPart.hidden = mode !== 'url'; scriptPart.hidden = mode !== 'script'; };
  box.append(h('div', { class: 'kind-pick', role: 'radiogroup', 'aria-label': 'Browser check source' },
    ['url', 'script'].map((m) => h('label', {}, h('input', { type: 'radio', name: 'browser_mode', value: m, checked: m === mode, onchange: () => { mode = m; sync(); } }),
      m === 'url' ? 'Load a URL' : 'Run a script'))), urlPart, scriptPart);
  sync();
  return () => (mode === 'url'
    ? { url: url.value.trim(), script: null, text_to_search_for: text.value || null }
    : { url: null, script: editor.textarea.value, version: 'NODE24_BROWSER' });
}

const SAMPLE_MULTISTEP = `import { test, expect } from '@playwright/test'

test('API answers', async ({ request }) => {
  const r = await request.get('https://example.com/api/health')
  await expect(r).toBeOK()
})
`;

// multistepFields edits a multistep check: a Playwright test that uses only the request fixture.
function multistepFields(box, c) {
  const editor = scriptEditor('script', c.script || SAMPLE_MULTISTEP);
  const part = field('Script', editor.textarea, { name: 'script', wide: true,
    hint: 'A Playwright test of HTTP calls: its tests get { request } (no page, context or browser).' });
  part.replaceChild(editor.el, editor.textarea);
  editor.el.append(editor.textarea);
  box.append(part);
  return () => ({ script: editor.textarea.value });
}

function dnsFields(box, c) {
  const domain = input({ name: 'dns_domain', value: c.dns_domain || '', placeholder: 'example.com' });
  const type = select('dns_record_type', ['A', 'AAAA', 'CNAME', 'MX', 'NS', 'SOA', 'TXT'], c.dns_record_type || 'A');
  const resolver = input({ name: 'dns_resolver', value: c.dns_resolver || '', placeholder: '1.1.1.1:53' });
  const proto = select('dns_protocol', ['UDP', 'TCP'], c.dns_protocol || 'UDP');
  const assertions = assertionRows(c.assertions, 'DNS');
  box.append(h('div', { class: 'grid' },
    field('Domain', domain, { name: 'dns_domain' }), field('Record type', type, { name: 'dns_record_type' }),
    field('Resolver', resolver, { name: 'dns_resolver', hint: 'host:port; empty for the default resolver.' }), field('Protocol', proto, { name: 'dns_protocol' })),
  assertions.el);
  return () => ({ dns_domain: domain.value.trim(), dns_record_type: type.value, dns_resolver: resolver.value.trim() || null, dns_protocol: proto.value, assertions: assertions.value() });
}

// Ping, gRPC and WebSocket checks take no assertions: their own fields say what passes.
function pingFields(box, c) {
  const host = input({ name: 'ping_hostname', value: c.ping_hostname || '', placeholder: 'gateway.example.com' });
  const count = input({ type: 'number', min: 1, max: 20, name: 'ping_count', value: c.ping_count ?? 3 });
  const family = select('ping_ip_family', [['Any', 'Either'], ['IPv4', 'IPv4'], ['IPv6', 'IPv6']], c.ping_ip_family || 'Any');
  const loss = input({ type: 'number', min: 0, max: 100, name: 'ping_max_loss_percent', value: c.ping_max_loss_percent ?? '' });
  const rtt = input({ type: 'number', min: 1, name: 'ping_max_avg_rtt_ms', value: c.ping_max_avg_rtt_ms ?? '' });
  box.append(h('div', { class: 'grid' },
    field('Host', host, { name: 'ping_hostname' }), field('Echo requests', count, { name: 'ping_count' }), field('IP family', family, { name: 'ping_ip_family' }),
    field('Max loss (%)', loss, { name: 'ping_max_loss_percent', hint: 'Empty: fails only when no reply comes back.' }),
    field('Max average round trip (ms)', rtt, { name: 'ping_max_avg_rtt_ms', hint: 'Empty: no bound.' })));
  return () => ({
    ping_hostname: host.value.trim(), ping_count: intOr(count.value), ping_ip_family: family.value,
    ping_max_loss_percent: loss.value === '' ? null : intOr(loss.value), ping_max_avg_rtt_ms: rtt.value === '' ? null : intOr(rtt.value),
  });
}

function grpcFields(box, c) {
  const host = input({ name: 'grpc_hostname', value: c.grpc_hostname || '', placeholder: 'cart.internal.example.com' });
  const port = input({ type: 'number', min: 1, max: 65535, name: 'grpc_port', value: c.grpc_port ?? '' });
  const service = input({ name: 'grpc_service', value: c.grpc_service || '', placeholder: 'shop.v1.Cart' });
  const metadata = keyValues('Metadata', 'grpc_metadata', c.grpc_metadata, 'Name', 'Value');
  box.append(h('div', { class: 'grid' },
    field('Host', host, { name: 'grpc_hostname' }), field('Port', port, { name: 'grpc_port' }),
    field('Health service', service, { name: 'grpc_service', hint: 'Empty: the server as a whole. Passes on SERVING.' })),
  metadata.el,
  h('div', { class: 'grid' }, checkbox('Use TLS', 'grpc_tls', c.grpc_tls), checkbox('Verify TLS certificate', 'verify_ssl', c.verify_ssl ?? true)));
  return () => ({
    grpc_hostname: host.value.trim(), grpc_port: intOr(port.value), grpc_service: service.value.trim(), grpc_metadata: metadata.value(),
    grpc_tls: box.querySelector('[name=grpc_tls]').checked, verify_ssl: box.querySelector('[name=verify_ssl]').checked,
  });
}

function websocketFields(box, c) {
  const url = input({ name: 'url', value: c.url || '', placeholder: 'wss://example.com/socket', inputmode: 'url' });
  const headers = keyValues('Headers', 'headers', c.headers, 'Header', 'Value');
  const message = h('textarea', { name: 'websocket_message', rows: 2 }, c.websocket_message || '');
  const expected = input({ name: 'websocket_expected', value: c.websocket_expected ?? '' });
  const comparison = select('websocket_comparison', [['CONTAINS', 'Contains'], ['EQUALS', 'Equals'], ['MATCHES', 'Matches (regular expression)']], c.websocket_comparison || 'CONTAINS');
  box.append(field('URL', url, { name: 'url', wide: true }),
    field('Message to send', message, { name: 'websocket_message', wide: true, hint: 'Sent once the connection is open; optional.' }),
    h('div', { class: 'grid' }, field('Expected reply', expected, { name: 'websocket_expected', hint: 'Empty: opening is enough.' }),
      field('Reply', comparison, { name: 'websocket_comparison' })),
    headers.el, checkbox('Verify TLS certificate', 'verify_ssl', c.verify_ssl ?? true));
  return () => ({
    url: url.value.trim(), headers: headers.value(), websocket_message: message.value || null,
    websocket_expected: expected.value === '' ? null : expected.value, websocket_comparison: comparison.value,
    verify_ssl: box.querySelector('[name=verify_ssl]').checked,
  });
}

function tcpFields(box, c) {
  const host = input({ name: 'tcp_hostname', value: c.tcp_hostname || '', placeholder: 'db.example.com' });
  const port = input({ type: 'number', min: 1, max: 65535, name: 'tcp_port', value: c.tcp_port ?? '' });
  const family = select('tcp_ip_family', [['IPv4', 'IPv4'], ['IPv6', 'IPv6'], ['Any', 'Either (happy eyeballs)']], c.tcp_ip_family || 'IPv4');
  const data = h('textarea', { name: 'tcp_data', rows: 2 }, c.tcp_data || '');
  const assertions = assertionRows(c.assertions, 'TCP');
  const certDays = certificateDays(c, 'With TLS.');
  box.append(h('div', { class: 'grid' },
    field('Host', host, { name: 'tcp_hostname' }), field('Port', port, { name: 'tcp_port' }), field('IP family', family, { name: 'tcp_ip_family' })),
  field('Data to send', data, { name: 'tcp_data', wide: true, hint: 'Sent right after connecting; optional.' }),
  checkbox('Expect the connection to fail', 'tcp_should_fail', c.tcp_should_fail),
  h('div', { class: 'grid' }, checkbox('Use TLS (handshake after connecting)', 'tcp_tls', c.tcp_tls),
    checkbox('Verify TLS certificate', 'verify_ssl', c.verify_ssl ?? true)),
  certDays.el,
  assertions.el);
  return () => ({
    tcp_hostname: host.value.trim(), tcp_port: intOr(port.value), tcp_ip_family: family.value, tcp_data: data.value || null,
    tcp_should_fail: box.querySelector('[name=tcp_should_fail]').checked, assertions: assertions.value(),
    tcp_tls: box.querySelector('[name=tcp_tls]').checked, verify_ssl: box.querySelector('[name=verify_ssl]').checked,
    certificate_expiry_alert_days: certDays.value(),
  });
}

// keyValues edits an object of strings as rows of two inputs.
function keyValues(label, name, obj, keyLabel, valueLabel) {
  const rows = h('div', { class: 'rows' });
  const add = (k = '', v = '') => {
    const row = h('div', { class: 'row' },
      input({ 'aria-label': keyLabel, value: k, class: 'kv-key' }), input({ 'aria-label': valueLabel, value: v, class: 'kv-value' }),
      h('button', { type: 'button', class: 'btn btn-sm', 'aria-label': `Remove ${keyLabel.toLowerCase()}`, onclick: () => row.remove() }, 'Remove'));
    rows.append(row);
  };
  for (const [k, v] of Object.entries(obj || {})) add(k, v);
  const el = h('div', { class: 'field wide', 'data-field': name },
    h('span', { class: 'label' }, label), rows,
    h('div', {}, h('button', { type: 'button', class: 'btn btn-sm', onclick: () => add() }, `Add ${keyLabel.toLowerCase()}`)),
    h('p', { class: 'field-error', hidden: true }));
  return {
    el,
    value: () => {
      const out = {};
      for (const row of rows.children) {
        const k = row.querySelector('.kv-key').value.trim();
        if (k) out[k] = row.querySelector('.kv-value').value;
      }
      return Object.keys(out).length ? out : null;
    },
  };
}

// assertionRows edits a check's assertions: type, property, comparison, expected.
function assertionRows(list, kind) {
  const rows = h('div', { class: 'rows' });
  const add = (a = {}) => {
    const row = h('div', { class: 'row assertion' },
      h('select', { 'aria-label': 'Assertion type', class: 'a-type' }, ASSERTION_TYPES[kind].map((t) => h('option', { value: t, selected: t === a.type }, t))),
      input({ 'aria-label': 'Property', class: 'a-property', value: a.property || '', placeholder: 'property' }),
      h('select', { 'aria-label': 'Comparison', class: 'a-comparison' }, COMPARISONS.map((t) => h('option', { value: t, selected: t === a.comparison }, t))),
      input({ 'aria-label': 'Expected', class: 'a-expected', value: a.expected || '', placeholder: 'expected' }),
      h('button', { type: 'button', class: 'btn btn-sm', 'aria-label': 'Remove assertion', onclick: () => row.remove() }, 'Remove'));
    rows.append(row);
  };
  for (const a of list || []) add(a);
  const el = h('div', { class: 'field wide', 'data-field': 'assertions' },
    h('span', { class: 'label' }, 'Assertions'), rows,
    h('div', {}, h('button', { type: 'button', class: 'btn btn-sm', onclick: () => add() }, 'Add assertion')),
    h('p', { class: 'field-error', hidden: true }));
  return {
    el,
    value: () => {
      const out = [...rows.children].map((row) => ({
        type: row.querySelector('.a-type').value, property: row.querySelector('.a-property').value,
        comparison: row.querySelector('.a-comparison').value, expected: row.querySelector('.a-expected').value,
      }));
      return out.length ? out : null;
    },
  };
}
