// Fixtures declared with test.extend(), run in the script's runtime (fixtures.go). Given the
// fixture definitions of a test, in declaration order (the base's first), setup returns a
// promise of { fixtures, teardown }: fixtures inherits the built-in ones (page, context…) and
// adds each defined fixture, set up in order — a function fixture runs until it calls use(value)
// and finishes after the test, when teardown() releases it. Worker-scoped fixtures are set up
// once per run and kept in worker; finishWorker() tears them down.
(function () {
  const worker = new Map();
  function start(name, fn, fixtures, testInfo) {
    let release;
    const released = new Promise((resolve) => { release = resolve; });
    let provide;
    const provided = new Promise((resolve) => { provide = resolve; });
    let called = false;
    const done = Promise.resolve().then(() => fn(fixtures, async (value) => {
      called = true;
      provide(value);
      await released;
    }, testInfo));
    const value = Promise.race([provided, done.then(() => {
      if (!called) throw new Error(`Fixture "${name}" finished without calling use(value)`);
    })]);
    return { value, release, done };
  }
  async function setup(defs, options, builtins, testInfo) {
    const fixtures = Object.create(builtins);
    const teardowns = [];
    try {
      for (const [name, def, opts] of defs) {
        if (Object.prototype.hasOwnProperty.call(options, name)) {
          Object.defineProperty(fixtures, name, { value: options[name], enumerable: true, configurable: true });
          continue;
        }
        let value = def;
        if (typeof def === 'function') {
          if (opts && opts.scope === 'worker') {
            if (!worker.has(name)) worker.set(name, start(name, def, fixtures, testInfo));
            value = await worker.get(name).value;
          } else {
            const f = start(name, def, fixtures, testInfo);
            teardowns.push(f);
            value = await f.value;
          }
        }
        Object.defineProperty(fixtures, name, { value, enumerable: true, configurable: true });
      }
    } catch (e) {
      await teardown(teardowns);
      throw e;
    }
    return { fixtures, teardown: () => teardown(teardowns) };
  }
  async function teardown(list) {
    let first;
    for (const f of list.reverse()) {
      f.release();
      try { await f.done; } catch (e) { first = first || e; }
    }
    if (first) throw first;
  }
  async function finishWorker() {
    const list = [...worker.values()];
    worker.clear();
    await teardown(list);
  }
  return { setup, finishWorker };
})()
