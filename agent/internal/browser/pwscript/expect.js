// The expect API around the runtime's matchers (expectapi.go): expect.soft, expect.poll,
// expect.configure, expect.extend, the asymmetric matchers and .resolves/.rejects. Given the
// runtime's expect (base) and its hooks, it returns the expect a script imports.
(function (base, hooks) {
  const custom = Object.create(null); // expect.extend's matchers, by name

  class Asymmetric {
    constructor(name, sample, match, inverse) {
      this.name = name; this.sample = sample; this.match = match; this.inverse = !!inverse;
    }
    asymmetricMatch(other) { const r = !!this.match(other); return this.inverse ? !r : r; }
    toString() { return (this.inverse ? 'Not' : '') + this.name; }
    toJSON() { return (this.inverse ? 'Not' : '') + this.name + '<' + String(this.sample) + '>'; }
  }
  const isA = (ctor, v) => {
    if (ctor === String) return typeof v === 'string' || v instanceof String;
    if (ctor === Number) return typeof v === 'number' || v instanceof Number;
    if (ctor === Boolean) return typeof v === 'boolean' || v instanceof Boolean;
    if (ctor === BigInt) return typeof v === 'bigint';
    if (ctor === Symbol) return typeof v === 'symbol';
    if (ctor === Function) return typeof v === 'function';
    if (ctor === Object) return v !== null && typeof v === 'object';
    return v instanceof ctor;
  };
  const asymmetric = (inverse) => ({
    stringContaining: (s) => new Asymmetric('StringContaining', s, (v) => typeof v === 'string' && v.includes(s), inverse),
    stringMatching: (re) => new Asymmetric('StringMatching', re, (v) => typeof v === 'string' && (typeof re === 'string' ? new RegExp(re) : re).test(v), inverse),
    objectContaining: (o) => new Asymmetric('ObjectContaining', JSON.stringify(o), (v) => v !== null && typeof v === 'object' &&
      Object.keys(o).every((k) => k in Object(v) && hooks.equals(v[k], o[k])), inverse),
    arrayContaining: (a) => new Asymmetric('ArrayContaining', JSON.stringify(a), (v) => Array.isArray(v) &&
      a.every((x) => v.some((y) => hooks.equals(y, x))), inverse),
    closeTo: (n, digits = 2) => new Asymmetric('CloseTo', n, (v) => typeof v === 'number' &&
      (v === n || Math.abs(v - n) < Math.pow(10, -digits) / 2), inverse),
  });

  function matcherContext(negated) {
    return {
      isNot: negated, promise: '', equals: hooks.equals, expand: false,
      utils: { printReceived: (v) => JSON.stringify(v), printExpected: (v) => JSON.stringify(v), stringify: (v) => JSON.stringify(v),
        matcherHint: (name) => name },
    };
  }

  // customMatcher runs a matcher of expect.extend: it fails when its pass is what .not negates.
  function customMatcher(name, received, negated, args) {
    const site = new Error('');
    const judge = (res) => {
      if (!res || typeof res.pass !== 'boolean') throw hooks.error(`expect.extend: the matcher ${name} must return { pass, message }`, site);
      if (res.pass === negated) {
        const msg = typeof res.message === 'function' ? res.message() : String(res.message ?? `expect(received).${negated ? 'not.' : ''}${name}() failed`);
        throw hooks.error(msg, site);
      }
    };
    const out = custom[name].call(matcherContext(negated), received, ...args);
    if (out && typeof out.then === 'function') return out.then(judge);
    judge(out);
  }

  // expectation wraps base(received) for a configuration: soft failures are recorded and the
  // test goes on; a timeout replaces the default of web-first matchers.
  function expectation(received, message, config, negated, settle) {
    const target = base(received, message);
    const call = (name, args) => {
      const run = () => {
        if (name in custom) return customMatcher(name, received, negated, args);
        const m = negated ? target.not[name] : target[name];
        return m(...args);
      };
      let res;
      try {
        res = config.timeout !== undefined ? hooks.withTimeout(config.timeout, run) : run();
      } catch (err) {
        if (config.soft) { hooks.softFail(err); return undefined; }
        throw err;
      }
      if (config.soft && res && typeof res.then === 'function') return res.then(undefined, (err) => hooks.softFail(err));
      return res;
    };
    return new Proxy({}, {
      get(_, name) {
        if (typeof name !== 'string' || name === 'then' || name === 'asymmetricMatch') return undefined;
        if (name === 'not') return expectation(received, message, config, !negated, settle);
        if (name === 'resolves' || name === 'rejects') return settled(received, message, config, name);
        if (!(name in custom)) (negated ? target.not : target)[name]; // unknown: "not supported"
        return (...args) => call(name, args);
      },
    });
  }

  // settled is expect(promise).resolves / .rejects: the matcher applies to what it settles to.
  function settled(received, message, config, how) {
    const make = (negated) => new Proxy({}, {
      get(_, name) {
        if (typeof name !== 'string' || name === 'then') return undefined;
        if (name === 'not') return make(!negated);
        return async (...args) => {
          const site = new Error('');
          let value, rejected = false;
          try { value = await received; } catch (err) { value = err; rejected = true; }
          if (rejected !== (how === 'rejects')) {
            throw hooks.error(`expect(received).${how}.${negated ? 'not.' : ''}${name}()\n\nReceived promise ${rejected ? 'rejected' : 'resolved'} instead of ${rejected ? 'resolved' : 'rejected'}\n${rejected ? 'Rejected to' : 'Resolved to'} value: ${hooks.format(value)}`, site);
          }
          if (rejected && (name === 'toThrow' || name === 'toThrowError')) {
            const reason = value;
            value = () => { throw reason; }; // toThrow judges what a call throws
          }
          const e = expectation(value, message, config, negated);
          return e[name](...args);
        };
      },
    });
    return make(false);
  }

  function poll(fn, options, config) {
    const timeout = options?.timeout ?? config.timeout ?? hooks.defaultTimeout();
    const intervals = options?.intervals ?? [100, 250, 500, 1000];
    const message = options?.message;
    const site = new Error('');
    const make = (negated) => new Proxy({}, {
      get(_, name) {
        if (typeof name !== 'string' || name === 'then') return undefined;
        if (name === 'not') return make(!negated);
        const attempt = async (...args) => {
          const deadline = Date.now() + timeout;
          for (let i = 0; ; i++) {
            let last;
            try {
              const e = expectation(await fn(), message, { timeout: config.timeout }, negated);
              await e[name](...args);
              return;
            } catch (err) {
              last = err;
            }
            const wait = intervals[Math.min(i, intervals.length - 1)];
            if (Date.now() + wait >= deadline) {
              throw hooks.retitle(last, `\n\nCall Log:\n- Timeout ${timeout}ms exceeded while waiting on the predicate`, site);
            }
            await new Promise((resolve) => setTimeout(resolve, wait));
          }
        };
        return (...args) => {
          const p = attempt(...args);
          return config.soft ? p.then(undefined, (err) => hooks.softFail(err)) : p;
        };
      },
    });
    return make(false);
  }

  function make(config) {
    const expect = (received, message) => expectation(received, message, config, false);
    expect.soft = (received, message) => expectation(received, message, { ...config, soft: true }, false);
    expect.poll = (fn, options) => {
      if (typeof fn !== 'function') throw new TypeError('expect.poll: expected a function');
      return poll(fn, options, config);
    };
    expect.configure = (options = {}) => make({ ...config, ...options });
    expect.extend = (matchers) => {
      for (const [name, fn] of Object.entries(matchers)) {
        if (typeof fn !== 'function') throw new TypeError(`expect.extend: ${name}: expected a function`);
        custom[name] = fn;
      }
      return expect;
    };
    expect.any = (ctor) => new Asymmetric('Any', ctor && ctor.name, (v) => isA(ctor, v));
    expect.anything = () => new Asymmetric('Anything', '', (v) => v !== null && v !== undefined);
    Object.assign(expect, asymmetric(false));
    expect.not = asymmetric(true);
    return expect;
  }
  return make({});
})
