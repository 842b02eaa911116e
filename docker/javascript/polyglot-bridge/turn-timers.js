'use strict';
// Timers of the trusted test process that keep the order they would have in one process.
//
// Upstream, a spec and the solution share one process: timers a test sets in one synchronous
// turn are set microseconds apart. Here every call into the solution is a round trip to
// another process (channel.js), so the timers of one turn are set as far apart as those
// round trips take; on a busy machine that is tens of milliseconds, and a 0 ms timer set
// after a 20 ms one fires after it (javascript__promises' `race` then fails for a correct
// solution). These timers count every delay from the start of the turn that set it, so the
// whole turn sets its timers at one instant, as upstream, and fire due timers in the order of
// (that due time, creation): the order a single process gives them. Installed in the spec's
// global only; the solution process keeps Node's own timers.

function install(target, real = { setTimeout, clearTimeout, now: () => performance.now() }) {
  const pending = new Map(); // id -> entry
  let nextId = 1;
  let sequence = 0;
  let turnStart = null;
  let armed = null; // the real timer that runs the earliest due entry
  let armedFor = Infinity;

  function startOfTurn() {
    if (turnStart === null) {
      turnStart = real.now();
      queueMicrotask(() => { turnStart = null; });
    }
    return turnStart;
  }

  function earliest() {
    let first = null;
    for (const entry of pending.values()) {
      if (first === null || entry.due < first.due || (entry.due === first.due && entry.seq < first.seq)) first = entry;
    }
    return first;
  }

  function arm() {
    const first = earliest();
    if (first === null) {
      if (armed !== null) real.clearTimeout(armed);
      armed = null;
      armedFor = Infinity;
      return;
    }
    const keepAlive = [...pending.values()].some((entry) => entry.refed);
    if (armed !== null && armedFor === first.due) {
      if (keepAlive) armed.ref(); else armed.unref();
      return;
    }
    if (armed !== null) real.clearTimeout(armed);
    armedFor = first.due;
    armed = real.setTimeout(fire, Math.max(0, first.due - real.now()));
    if (!keepAlive) armed.unref();
  }

  // One due entry per real timer callback: microtasks run between two, as between Node's.
  function fire() {
    armed = null;
    armedFor = Infinity;
    const entry = earliest();
    if (entry !== null && entry.due <= real.now()) {
      if (entry.interval === null) pending.delete(entry.id);
      else schedule(entry, real.now() + entry.interval);
      try {
        entry.callback(...entry.args);
      } finally {
        arm();
      }
      return;
    }
    arm();
  }

  function schedule(entry, due) {
    entry.due = due;
    entry.seq = sequence++;
    pending.set(entry.id, entry);
  }

  class Timeout {
    constructor(id) {
      this.id = id;
    }

    ref() {
      const entry = pending.get(this.id);
      if (entry) { entry.refed = true; arm(); }
      return this;
    }

    unref() {
      const entry = pending.get(this.id);
      if (entry) { entry.refed = false; arm(); }
      return this;
    }

    hasRef() {
      const entry = pending.get(this.id);
      return entry ? entry.refed : false;
    }

    refresh() {
      const entry = pending.get(this.id);
      if (entry) { schedule(entry, real.now() + entry.delay); arm(); }
      return this;
    }

    close() {
      clear(this);
      return this;
    }

    [Symbol.toPrimitive]() {
      return this.id;
    }
  }

  function delayOf(ms) {
    const delay = Number(ms);
    return delay >= 1 && delay <= 2147483647 ? delay : 1; // Node's coercion of odd delays
  }

  function create(callback, ms, args, repeat) {
    if (typeof callback !== 'function') {
      throw new TypeError(`The "callback" argument must be of type function. Received ${typeof callback}`);
    }
    const delay = delayOf(ms);
    const entry = { id: nextId++, callback, args, delay, interval: repeat ? delay : null, refed: true };
    schedule(entry, startOfTurn() + delay);
    arm();
    return new Timeout(entry.id);
  }

  function clear(handle) {
    if (handle === null || handle === undefined) return;
    const id = handle instanceof Timeout ? handle.id : Number(handle);
    if (pending.delete(id)) arm();
  }

  target.setTimeout = (callback, ms, ...args) => create(callback, ms, args, false);
  target.setInterval = (callback, ms, ...args) => create(callback, ms, args, true);
  target.clearTimeout = clear;
  target.clearInterval = clear;
}

module.exports = { install };
