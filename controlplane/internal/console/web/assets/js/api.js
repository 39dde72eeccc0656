// The console's only way to the server: same-origin fetches of the public /v1 API (and the
// /console/session routes) with the session cookie. Every change carries the CSRF token the
// server set in the vantage_csrf cookie. Success envelopes are unwrapped; failure envelopes
// become ApiError, whose fields map names each field a validation message is about.

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);

// ApiError is a failure envelope (or a network failure, status 0).
export class ApiError extends Error {
  constructor(status, errors) {
    const list = errors && errors.length ? errors : [{ message: `request failed (${status})` }];
    super(list.map((e) => e.message).join('; '));
    this.status = status;
    this.errors = list;
    this.fields = {};
    for (const e of list) {
      const m = /^([A-Za-z_][\w.[\]-]*): (.+)$/s.exec(e.message || '');
      if (m) this.fields[m[1]] = this.fields[m[1]] ? `${this.fields[m[1]]}; ${m[2]}` : m[2];
    }
    this.type = list[0].type || null;
  }

  get notFound() { return this.status === 404; }
}

function cookie(name) {
  for (const part of document.cookie.split(';')) {
    const [k, ...v] = part.trim().split('=');
    if (k === name) return decodeURIComponent(v.join('='));
  }
  return '';
}

function url(path, query) {
  const u = new URL(path, location.origin);
  for (const [k, v] of Object.entries(query || {})) {
    if (v !== undefined && v !== null && v !== '') u.searchParams.set(k, v);
  }
  return u.pathname + u.search;
}

// Client calls the API. onUnauthorized runs when the session has ended (401), so the shell
// can send the person back to sign-in.
export class Client {
  constructor({ onUnauthorized } = {}) {
    this.onUnauthorized = onUnauthorized || (() => {});
    this.calls = 0; // API calls made; the benchmark and tests read it
  }

  // request returns the whole success envelope.
  async request(method, path, { query, body, signal } = {}) {
    const headers = { Accept: 'application/json' };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    if (!SAFE.has(method)) headers['X-CSRF-Token'] = cookie('vantage_csrf');
    this.calls++;
    let res;
    try {
      res = await fetch(url(path, query), {
        method, headers, signal, credentials: 'include', cache: 'no-store',
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (err) {
      if (err.name === 'AbortError') throw err;
      throw new ApiError(0, [{ message: 'The server cannot be reached. Check your connection.' }]);
    }
    let env = null;
    try {
      env = await res.json();
    } catch {
      env = null;
    }
    if (!res.ok || !env || env.success === false) {
      if (res.status === 401 && !path.startsWith('/console/session')) this.onUnauthorized();
      throw new ApiError(res.status, env && env.errors);
    }
    return env;
  }

  async get(path, query, opts) { return (await this.request('GET', path, { ...opts, query })).result; }

  // list returns a page: {items, info: {page, per_page, count, total_count}}.
  async list(path, query, opts) {
    const env = await this.request('GET', path, { ...opts, query });
    return { items: env.result || [], info: env.result_info || {} };
  }

  async post(path, body, opts) { return (await this.request('POST', path, { ...opts, body: body ?? {} })).result; }
  async patch(path, body, opts) { return (await this.request('PATCH', path, { ...opts, body })).result; }
  async put(path, body, opts) { return (await this.request('PUT', path, { ...opts, body })).result; }
  async del(path, opts) { return (await this.request('DELETE', path, opts)).result; }
}
