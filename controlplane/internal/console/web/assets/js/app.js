// The console's shell: reads the session, draws the header (navigation, organization switcher,
// theme, sign-out) and routes every /console/... URL to its view with the history API, so deep
// links, reloads and back/forward all work.
import { Client } from './api.js';
import { h, clear, errorBox, toast, setTitle } from './ui.js';
import { routes, landing } from './routes.js';

const api = new Client({ onUnauthorized: () => signedOut() });
const main = document.getElementById('main');
const topbar = document.getElementById('topbar');

let session = null;
let current = null; // {controller} of the view on screen

// ---- theme ----

const THEMES = ['auto', 'light', 'dark'];
function applyTheme(t) {
  if (t === 'auto') delete document.documentElement.dataset.theme;
  else document.documentElement.dataset.theme = t;
}
function theme() { return localStorage.getItem('vantage.theme') || 'auto'; }
applyTheme(theme());

// ---- routing ----

function match(pathname) {
  const parts = pathname.replace(/\/+$/, '').split('/');
  for (const r of routes) {
    const want = r.path.split('/');
    if (want.length !== parts.length) continue;
    const params = {};
    let ok = true;
    for (let i = 0; i < want.length && ok; i++) {
      if (want[i].startsWith(':')) params[want[i].slice(1)] = decodeURIComponent(parts[i]);
      else ok = want[i] === parts[i];
    }
    if (ok) return { route: r, params };
  }
  return null;
}

// navigate shows path; replace keeps the history entry (redirects, filter changes).
export function navigate(path, { replace = false } = {}) {
  const target = new URL(path, location.href);
  if (target.href !== location.href) {
    if (replace) history.replaceState(null, '', target.href);
    else history.pushState(null, '', target.href);
  }
  return render();
}

function can(permission) { return !!session && (session.permissions || []).includes(permission); }

async function render() {
  if (current) current.controller.abort();
  const controller = new AbortController();
  current = { controller };
  const path = location.pathname;
  if (path === '/console' || path === '/console/') return navigate(landing, { replace: true });
  const m = match(path);
  if (!m) {
    drawHeader(path);
    setTitle('Not found');
    clear(main, errorBox({ status: 404 }));
    return;
  }
  if (!m.route.public && !session) {
    const next = path + location.search;
    return navigate(`/console/login?next=${encodeURIComponent(next)}`, { replace: true });
  }
  drawHeader(path);
  main.setAttribute('aria-busy', 'true');
  const ctx = {
    api, session, navigate, can, signal: controller.signal,
    refreshSession: loadSession,
  };
  try {
    const mod = await m.route.view();
    if (controller.signal.aborted) return;
    const root = h('div', { class: 'view' });
    clear(main, root);
    await mod.render(root, m.params, ctx);
  } catch (err) {
    if (err.name === 'AbortError' || controller.signal.aborted) return;
    clear(main, errorBox(err));
  } finally {
    if (!controller.signal.aborted) {
      main.removeAttribute('aria-busy');
      const heading = main.querySelector('h1');
      if (heading && document.activeElement === document.body) {
        heading.setAttribute('tabindex', '-1');
        heading.focus({ preventScroll: true });
      }
    }
  }
}

// Same-origin links to /console/... are routed here instead of reloading the page; a link
// marked data-external (a server route such as the SSO redirect) is left to the browser.
document.addEventListener('click', (e) => {
  if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  const a = e.target.closest('a[href]');
  if (!a || (a.target && a.target !== '_self') || a.hasAttribute('download') || a.hasAttribute('data-external')) return;
  const u = new URL(a.href, location.href);
  if (u.origin !== location.origin || !u.pathname.startsWith('/console/') || u.pathname.startsWith('/console/assets/')) return;
  e.preventDefault();
  if (u.pathname === location.pathname && u.search === location.search && u.hash) {
    location.hash = u.hash;
    return;
  }
  navigate(u.pathname + u.search + u.hash);
  window.scrollTo(0, 0);
});
window.addEventListener('popstate', () => render());

// ---- session and header ----

async function loadSession() {
  try {
    session = await api.get('/console/session');
  } catch {
    session = null;
  }
  return session;
}

function signedOut() {
  if (!session) return;
  session = null;
  toast('Your session has ended. Sign in again.', 'error');
  navigate(`/console/login?next=${encodeURIComponent(location.pathname + location.search)}`, { replace: true });
}

function orgSwitcher() {
  const orgs = session.organizations || [];
  if (orgs.length < 2) {
    const org = orgs.find((o) => o.id === session.organization_id);
    return h('span', { class: 'org-name', title: 'Organization' }, org ? org.name : '');
  }
  const select = h('select', {
    id: 'org-switch', class: 'org-switch',
    onchange: async () => {
      try {
        await api.post('/console/session/organization', { organization_id: select.value });
        await loadSession();
        navigate(landing);
      } catch (err) {
        toast(err.message, 'error');
        select.value = session.organization_id;
      }
    },
  }, orgs.map((o) => h('option', { value: o.id, selected: o.id === session.organization_id }, o.name)));
  return h('span', { class: 'org' }, h('label', { for: 'org-switch', class: 'sr-only' }, 'Organization'), select);
}

function themeButton() {
  const labels = { auto: 'Theme: system', light: 'Theme: light', dark: 'Theme: dark' };
  const btn = h('button', {
    type: 'button', class: 'btn btn-ghost btn-icon', title: labels[theme()], 'aria-label': labels[theme()],
    onclick: () => {
      const next = THEMES[(THEMES.indexOf(theme()) + 1) % THEMES.length];
      localStorage.setItem('vantage.theme', next);
      applyTheme(next);
      btn.title = labels[next];
      btn.setAttribute('aria-label', labels[next]);
    },
  }, h('span', { class: 'theme-glyph', 'aria-hidden': 'true' }));
  return btn;
}

async function signOut() {
  try {
    await api.del('/console/session');
  } catch (err) {
    if (err.status !== 401) { toast(err.message, 'error'); return; }
  }
  session = null;
  navigate('/console/login');
}

function drawHeader(path) {
  if (!session) { topbar.hidden = true; return; }
  topbar.hidden = false;
  const links = routes.filter((r) => r.nav && (!r.needs || can(r.needs)))
    .map((r) => h('a', {
      href: r.path, class: 'nav-link',
      'aria-current': path === r.path || path.startsWith(`${r.path}/`) ? 'page' : false,
    }, r.nav));
  clear(topbar,
    h('a', { href: landing, class: 'brand', 'aria-label': 'Vantage console home' },
      h('img', { src: new URL('../icon.svg', import.meta.url).pathname, alt: '', width: 22, height: 22 }), h('span', {}, 'Vantage')),
    h('nav', { 'aria-label': 'Main' }, links),
    h('div', { class: 'topbar-end' },
      orgSwitcher(),
      h('span', { class: 'who', title: session.kind === 'token' ? 'Signed in with an API token' : 'Signed in' }, session.display || ''),
      themeButton(),
      h('button', { type: 'button', class: 'btn btn-ghost', onclick: signOut }, 'Sign out')));
}

// ---- start ----

await loadSession();
render();
