// The fake clock of page.clock, installed in every document of the page by an init script,
// as Playwright's is: Date, performance.now, the timers and requestAnimationFrame follow a
// time the script controls. It runs on its own ("auto", ticking with real time) until
// pauseAt; runFor and fastForward move it on by hand.
(() => {
  if (window.__pwscriptClock) return;
  const real = { Date, setTimeout: setTimeout.bind(window), setInterval: setInterval.bind(window), now: performance.now.bind(performance) };
  let installed = false, fixed = null, paused = false;
  let now = real.Date.now(), realBase = real.now(), seq = 0, ticker = null;
  const timers = new Map();

  const current = () => {
    if (!paused && installed) {
      const r = real.now();
      now += r - realBase;
      realBase = r;
    }
    return now;
  };
  function FakeDate(...args) {
    if (!new.target) return new real.Date(fixed !== null ? fixed : current()).toString();
    if (args.length === 0) return new real.Date(fixed !== null ? fixed : current());
    return new real.Date(...args);
  }
  FakeDate.prototype = real.Date.prototype;
  FakeDate.now = () => (fixed !== null ? fixed : Math.floor(current()));
  FakeDate.parse = real.Date.parse;
  FakeDate.UTC = real.Date.UTC;

  function schedule(fn, delay, args, repeat) {
    const id = ++seq;
    delay = Math.max(0, Number(delay) || 0);
    timers.set(id, { fn, at: current() + delay, every: repeat ? Math.max(1, delay) : 0, args });
    return id;
  }
  function fire(t, id) {
    if (t.every) t.at += t.every; else timers.delete(id);
    try { typeof t.fn === 'function' ? t.fn(...t.args) : (0, eval)(String(t.fn)); } catch (e) { real.setTimeout(() => { throw e; }); }
  }
  // advance moves the clock to target, firing the timers due in order (each at most once when
  // once is set: fastForward).
  function advance(target, once) {
    const fired = new Set();
    for (;;) {
      let next = null, nextID = 0;
      for (const [id, t] of timers) if (t.at <= target && (!once || !fired.has(id)) && (next === null || t.at < next.at)) { next = t; nextID = id; }
      if (!next) break;
      if (next.at > now) now = next.at;
      fired.add(nextID);
      fire(next, nextID);
    }
    now = Math.max(now, target);
    realBase = real.now();
  }
  function tick() {
    if (!paused) advance(current(), false);
  }
  function install(time) {
    if (installed) return;
    installed = true;
    if (time !== undefined) now = time;
    realBase = real.now();
    window.Date = FakeDate;
    window.setTimeout = (fn, d, ...a) => schedule(fn, d, a, false);
    window.setInterval = (fn, d, ...a) => schedule(fn, d, a, true);
    window.clearTimeout = window.clearInterval = (id) => { timers.delete(id); };
    window.requestAnimationFrame = (fn) => schedule(() => fn(current()), 16, [], false);
    window.cancelAnimationFrame = (id) => { timers.delete(id); };
    performance.now = () => current() - startNow;
    const startNow = now;
    ticker = real.setInterval(tick, 10);
  }
  window.__pwscriptClock = {
    install,
    fastForward(ms) { install(); advance(current() + ms, true); },
    runFor(ms) { install(); advance(current() + ms, false); },
    pauseAt(time) { install(); advance(time, true); paused = true; now = time; },
    resume() { install(); paused = false; realBase = real.now(); },
    setFixedTime(time) { fixed = time; if (!installed) window.Date = FakeDate; },
    setSystemTime(time) { install(); now = time; realBase = real.now(); },
  };
})();
