// Sign-in (/console/login): with an API token, a link sent by e-mail, or single sign-on. The one-time
// links `make run` and the e-mails give (/console/signin?code=…, /console/signin/link) are
// answered by the server, which signs in and redirects here to the console.
import { h, field, setTitle, showErrors } from '../ui.js';
import { landing } from '../routes.js';

// nextPath is where to go after signing in: a console path only, never another site.
function nextPath() {
  const next = new URLSearchParams(location.search).get('next') || '';
  return /^\/console\/(?!login|signin)/.test(next) && !next.startsWith('//') ? next : landing;
}

export async function render(root, params, ctx) {
  setTitle('Sign in');
  const status = h('div', { class: 'alert', role: 'alert', hidden: true });
  const say = (msg, kind = 'error') => {
    status.className = `alert alert-${kind}`;
    status.textContent = msg;
    status.hidden = false;
  };

  const signIn = async (token, form) => {
    try {
      await ctx.api.post('/console/session', { token });
      await ctx.refreshSession();
      ctx.navigate(nextPath(), { replace: true });
    } catch (err) {
      const rest = form ? showErrors(form, err) : [err.message];
      if (rest.length) say(rest.join('; '));
    }
  };

  const token = h('input', { type: 'password', name: 'token', autocomplete: 'off', required: true, spellcheck: 'false' });
  const tokenForm = h('form', {
    class: 'stack', novalidate: true,
    onsubmit: (e) => { e.preventDefault(); signIn(token.value.trim(), tokenForm); },
  },
  field('API token', token, { name: 'token', hint: 'A token from Settings → API tokens, or the one make run printed.' }),
  h('button', { type: 'submit', class: 'btn btn-primary' }, 'Sign in with token'));

  const email = h('input', { type: 'email', name: 'email', autocomplete: 'email', required: true });
  const emailForm = h('form', {
    class: 'stack', novalidate: true,
    onsubmit: async (e) => {
      e.preventDefault();
      try {
        await ctx.api.post('/console/signin/email', { email: email.value.trim() });
        say('If this address belongs to a Vantage user, a sign-in link is on its way. It works once and expires soon.', 'info');
        emailForm.reset();
      } catch (err) {
        const rest = showErrors(emailForm, err);
        if (rest.length) say(rest.join('; '));
      }
    },
  },
  field('E-mail address', email, { name: 'email' }),
  h('button', { type: 'submit', class: 'btn' }, 'E-mail me a sign-in link'));

  // The deployment says which other ways in it offers: e-mail needs SMTP, SSO a provider.
  let options = { email: true, oidc: false };
  try {
    options = await ctx.api.get('/console/signin/options', undefined, { signal: ctx.signal });
  } catch (err) {
    if (err.name === 'AbortError') return;
  }
  const others = [
    options.oidc && options.oidc_url ? h('a', { class: 'btn', href: options.oidc_url, 'data-external': '' }, 'Sign in with single sign-on') : null,
    options.email ? emailForm : null,
  ].filter(Boolean);
  root.append(h('div', { class: 'signin' },
    h('div', { class: 'signin-card' },
      h('div', { class: 'signin-brand' }, h('img', { src: new URL('../../icon.svg', import.meta.url).pathname, alt: '', width: 36, height: 36 }), h('span', {}, 'Vantage')),
      h('h1', {}, 'Sign in to the console'),
      status,
      tokenForm,
      others.length ? h('div', { class: 'or', role: 'separator' }, h('span', {}, 'or')) : null,
      others)));
}
