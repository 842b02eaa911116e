'use strict';
// Containers both processes see, as in one process (red team 15: javascript__grade-school was
// resolved by a solution handing out its internal roster, because the test's push went into a
// copy). An array, a plain data object, a Map or a Set crosses by value, but as ONE object:
//  - its owner (the side that made it) gives it an id; the other side keeps ONE copy per id, so
//    the same container crossing twice is the same copy (`a === b` as in one process);
//  - a copy sent back is the owner's original again ({t:'R'});
//  - every message a side sends carries `sync`: each container it shares (originals it lent,
//    copies it holds) whose own level changed since it last crossed, with its new content; the
//    receiver writes it into its object in place before it reads the message. So a test's push
//    into a returned array reaches the solution's array before the solution runs again, and a
//    solution's change to an argument reaches the test's array before the test runs again.
// Each side reads only its own objects and data; the peer may name only ids it was given
// (an original of this side) or its own (refreshing this side's copy). Nothing in a sync can be
// what a container could not hold when it first crossed (wire.js decides what is plain data:
// an object that gains a getter or a method stops being shared, its copy keeps its last data).
// Both sides hold their containers weakly: a container nobody else holds is forgotten. A side
// follows at most LIMIT containers of each kind (its own, its copies), the least recently
// crossed forgotten first: every message compares each followed container's own
// level, and within one synchronous test nothing is collected, so a test calling the solution
// 10,000 times would otherwise compare everything it ever got at every call.
const { containerKind, ProtocolError } = require('./wire');

const TAGS = { mine: 'A', yours: 'R' };
const LIMIT = 256;

// The container's own level: items (containers by identity), for comparing and for filling.
function level(kind, value) {
  const out = [];
  if (kind === 'a') {
    for (let index = 0; index < value.length; index += 1) out.push(value[index]);
    out.push(value.length);
  } else if (kind === 'o') {
    for (const key of Object.keys(value)) out.push(key, value[key]);
  } else if (kind === 'm') {
    for (const [key, item] of Map.prototype.entries.call(value)) out.push(key, item);
  } else {
    for (const item of Set.prototype.values.call(value)) out.push(item);
  }
  return out;
}

// Whether `value`'s own level is still `seen` (level() without building it: every message
// compares every followed container).
function unchanged(kind, value, seen) {
  if (kind === 'a') {
    const { length } = value;
    if (seen.length !== length + 1 || seen[length] !== length) return false;
    for (let index = 0; index < length; index += 1) if (!Object.is(value[index], seen[index])) return false;
    return true;
  }
  let index = 0;
  if (kind === 'o') {
    for (const key in value) {
      if (!Object.prototype.hasOwnProperty.call(value, key)) continue;
      if (seen[index] !== key || !Object.is(value[key], seen[index + 1])) return false;
      index += 2;
    }
  } else if (kind === 'm') {
    for (const [key, item] of Map.prototype.entries.call(value)) {
      if (!Object.is(key, seen[index]) || !Object.is(item, seen[index + 1])) return false;
      index += 2;
    }
  } else {
    for (const item of Set.prototype.values.call(value)) {
      if (!Object.is(item, seen[index])) return false;
      index += 1;
    }
  }
  return index === seen.length;
}

// How far a container is locked ('f' frozen, 's' sealed, 'n' not extensible, '' none): a copy
// is locked as its original is, so a test's push into a frozen roster's copy throws as it does
// in one process (red team 16: a frozen internal array whose copy took the push, the write
// then refused on the solution's side and the copy rewritten at the next call).
function lockOf(value) {
  if (Object.isExtensible(value)) return '';
  if (Object.isFrozen(value)) return 'f';
  return Object.isSealed(value) ? 's' : 'n';
}

const LOCKS = { f: Object.freeze, s: Object.seal, n: Object.preventExtensions };

function empty(kind) {
  if (kind === 'a') return [];
  if (kind === 'o') return {};
  return kind === 'm' ? new Map() : new Set();
}

// Writes decoded content (wire.js decodeContent: items, [key, value] pairs) into `target`,
// touching only what differs (a sealed container takes new values for the keys it has).
function fill(kind, target, content) {
  if (kind === 'a') {
    if (target.length !== content.length) target.length = content.length;
    for (let index = 0; index < content.length; index += 1) if (!Object.is(target[index], content[index])) target[index] = content[index];
  } else if (kind === 'o') {
    const wanted = new Map(content);
    for (const key of Object.keys(target)) if (!wanted.has(key)) delete target[key];
    for (const [key, item] of content) {
      // defineProperty for a new key: one named __proto__ stays plain data
      if (!Object.prototype.hasOwnProperty.call(target, key)) Object.defineProperty(target, key, { value: item, writable: true, enumerable: true, configurable: true });
      else if (!Object.is(target[key], item)) target[key] = item;
    }
  } else if (kind === 'm') {
    Map.prototype.clear.call(target);
    for (const [key, item] of content) Map.prototype.set.call(target, key, item);
  } else {
    Set.prototype.clear.call(target);
    for (const item of content) Set.prototype.add.call(target, item);
  }
}

function flat(kind, content) {
  if (kind === 'a') return content.concat([content.length]);
  return kind === 's' ? content : content.flat();
}

function checkLock(wire) {
  if (wire.x !== undefined && !Object.prototype.hasOwnProperty.call(LOCKS, wire.x)) throw new ProtocolError('malformed lock');
}

class SharedContainers {
  constructor({ limit = LIMIT } = {}) {
    this.limit = limit;
    this.mine = new Map(); // id -> {ref, kind, seen}: this side's containers the peer holds copies of
    this.mineIds = new WeakMap();
    this.copies = new Map(); // the peer's id -> {ref, kind, seen}: this side's copies of the peer's
    this.copyIds = new WeakMap();
    this.nextId = 1;
  }

  // The wire of a container this side sends (content: () => its encoded content).
  encode(value, kind, content) {
    const peerId = this.copyIds.get(value);
    if (peerId !== undefined) return this.crossing(this.copies.get(peerId), TAGS.yours, peerId, value, content);
    let id = this.mineIds.get(value);
    if (id === undefined) {
      id = this.nextId;
      this.nextId += 1;
      this.track(this.mine, this.mineIds, id, value, kind);
    }
    return this.crossing(this.mine.get(id), TAGS.mine, id, value, content);
  }

  crossing(entry, t, id, value, content) {
    entry.seen = level(entry.kind, value);
    entry.lock = lockOf(value);
    this.recent(t === TAGS.mine ? this.mine : this.copies, id, entry);
    return this.wire(t, id, entry, content());
  }

  wire(t, id, entry, v) {
    return entry.lock ? { t, id, k: entry.kind, v, x: entry.lock } : { t, id, k: entry.kind, v };
  }

  track(table, ids, id, value, kind) {
    table.set(id, { ref: new WeakRef(value), kind, seen: null, lock: '' });
    ids.set(value, id);
    if (table.size > this.limit) {
      const [oldest, entry] = table.entries().next().value;
      table.delete(oldest);
      const forgotten = entry.ref.deref();
      if (forgotten !== undefined) ids.delete(forgotten);
    }
  }

  recent(table, id, entry) {
    table.delete(id);
    table.set(id, entry);
  }

  // {t:'A'}: the peer's container, as this side's one copy of it, refreshed.
  copyOf(wire, decodeContent) {
    checkLock(wire);
    const content = decodeContent(wire.k, wire.v);
    const entry = this.copies.get(wire.id);
    let copy = entry && entry.ref.deref();
    if (copy === undefined || containerKind(copy) !== wire.k) {
      copy = empty(wire.k);
      this.track(this.copies, this.copyIds, wire.id, copy, wire.k);
    } else {
      this.recent(this.copies, wire.id, entry);
    }
    return this.write(this.copies.get(wire.id), copy, content, wire.x);
  }

  // {t:'R'}: this side's own container coming home, with the peer's view of it.
  home(wire, decodeContent) {
    if (!(wire.id < this.nextId)) throw new ProtocolError(`no container ${wire.id} here`);
    checkLock(wire);
    const content = decodeContent(wire.k, wire.v);
    const entry = this.mine.get(wire.id);
    let original = entry && entry.ref.deref();
    if (original !== undefined && entry.kind !== wire.k) throw new ProtocolError('a shared container changed its kind');
    if (original === undefined) {
      original = empty(wire.k);
      this.track(this.mine, this.mineIds, wire.id, original, wire.k);
    }
    return this.write(this.mine.get(wire.id), original, content, wire.x);
  }

  // The peer's view of a container written into this side's, and locked as the peer's is. A
  // write its lock refuses cannot come from a peer that sees the same lock: a protocol error.
  write(entry, target, content, lock = '') {
    if (!unchanged(entry.kind, target, flat(entry.kind, content))) {
      try {
        fill(entry.kind, target, content);
      } catch (error) {
        throw new ProtocolError(`a shared container could not be written: ${error.message}`);
      }
    }
    if (lock) LOCKS[lock](target);
    entry.seen = level(entry.kind, target);
    entry.lock = lockOf(target);
    return target;
  }

  // What this side's next message carries: every shared container changed since it crossed.
  changes(encodeContent) {
    const sync = [];
    for (const [table, ids, t] of [[this.mine, this.mineIds, TAGS.mine], [this.copies, this.copyIds, TAGS.yours]]) {
      for (const [id, entry] of table) {
        const value = entry.ref.deref();
        if (value === undefined) table.delete(id);
        else this.collect(table, ids, t, id, entry, value, encodeContent, sync);
      }
    }
    return sync;
  }

  collect(table, ids, t, id, entry, value, encodeContent, sync) {
    try {
      const lock = lockOf(value);
      if (lock === entry.lock && unchanged(entry.kind, value, entry.seen)) return;
      if (containerKind(value) !== entry.kind) throw new TypeError('no longer plain data');
      const v = encodeContent(entry.kind, value);
      entry.seen = level(entry.kind, value);
      entry.lock = lock;
      sync.push(this.wire(t, id, entry, v));
    } catch (error) {
      // It cannot cross any more (it gained a getter, a method, a symbol): it stops being shared.
      table.delete(id);
      ids.delete(value);
    }
  }

  // The peer's `sync`: written into the containers it names that this side still holds.
  apply(sync, decodeContent) {
    if (!Array.isArray(sync)) throw new ProtocolError('malformed sync');
    for (const wire of sync) {
      const mine = wire && wire.t === TAGS.yours;
      if (!wire || !(mine || wire.t === TAGS.mine) || !Number.isSafeInteger(wire.id) || wire.id <= 0) throw new ProtocolError('malformed sync entry');
      if (mine && !(wire.id < this.nextId)) throw new ProtocolError(`no container ${wire.id} here`);
      const entry = (mine ? this.mine : this.copies).get(wire.id);
      const target = entry && entry.ref.deref();
      if (target === undefined) continue;
      if (wire.k !== entry.kind) throw new ProtocolError('a shared container changed its kind');
      checkLock(wire);
      this.write(entry, target, decodeContent(wire.k, wire.v), wire.x);
    }
  }
}

// The sides' hooks for wire.js and channel.js, or none when POLYGLOT_BRIDGE_COPIES=1 (both
// processes see the sandbox's environment): containers then cross as copies, as before (the
// tests' negative control, never grading).
function sharing(options = {}) {
  if (process.env.POLYGLOT_BRIDGE_COPIES === '1') return { encoding: {}, decoding: {}, sync: () => null };
  const shared = new SharedContainers(options);
  return {
    encoding: { container: (value, kind, content) => shared.encode(value, kind, content) },
    decoding: { copyOf: (wire, content) => shared.copyOf(wire, content), home: (wire, content) => shared.home(wire, content) },
    sync: (encode, decode) => ({
      changes: () => shared.changes(encode.content),
      apply: (entries) => shared.apply(entries, decode.content),
    }),
  };
}

module.exports = { SharedContainers, sharing };
