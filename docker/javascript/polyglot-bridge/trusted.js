'use strict';
// The test process's side of the bridge, loaded by jest into the test's own module registry
// (so the values it makes belong to the test's realm). Every solution module the tests import
// is replaced (transform.js) by `solutionModule(path, names)`: the exports the solution process
// reports, rebuilt here as plain data, with everything else a HANDLE made here:
//  - a handle answers only the property names the hidden tests themselves use (read from the
//    spec files' syntax by transform.js), never a framework's hooks (FRAMEWORK_HOOKS);
//  - it owns no enumerable keys, no prototype and no `then`: it equals no plain value, is no
//    thenable, no asymmetric matcher, no primitive;
//  - two handles are compared (toEqual/toStrictEqual) here, from snapshots of their data the
//    solution process sends (handleEquality); two that show no state at all are unequal.
// Errors the solution throws are rethrown here as errors of the builtin type, or of a local
// stand-in class for each of the solution's own error classes.
const fs = require('fs');
const { Channel } = require('./channel');
const { encoder, decoder, builtinBase, BUILTIN_ERRORS, ProtocolError } = require('./wire');
const { sharing } = require('./shared');

// Under jest's --testTimeout (60 s): a solution that never answers fails its test in time.
const CALL_TIMEOUT_MS = Number(process.env.POLYGLOT_BRIDGE_CALL_TIMEOUT_MS) || 50000;
const FRAMEWORK_HOOKS = new Set([
  'then', 'catch', 'finally', 'asymmetricMatch', 'toAsymmetricMatcher', 'sample', 'jasmineToString',
  'toJSON', 'nodeType', 'nodeName', 'isEqualNode', 'constructor', 'prototype', 'inspect',
  'hasOwnProperty', 'isPrototypeOf', 'propertyIsEnumerable',
]);

// --- what the tests may ask of a handle ---------------------------------------------------
// The property names the hidden specs use (transform.js reads them from the specs' syntax
// and passes them with each solution module). Framework hooks are never answered, even when
// a spec names them (e.g. `.then` on a promise the test made); Symbol.iterator only when a
// spec names it.
let declared = { names: new Set(), iterator: false };

function declare(names) {
  const kept = new Set(names.filter((name) => typeof name === 'string' && !FRAMEWORK_HOOKS.has(name) && !/^(__|@@|\$\$)/.test(name)));
  const iterator = kept.delete('@@iterator');
  if (iterator) kept.add('next');
  declared = { names: kept, iterator };
}

function answers(key) {
  if (typeof key === 'symbol') return key === Symbol.iterator && declared.iterator;
  return declared.names.has(key);
}

function wireKey(key) {
  return typeof key === 'symbol' ? { sym: 'iterator' } : key;
}

// --- handles: objects the solution process keeps ------------------------------------------
const handleById = new Map();
const handleIds = new WeakMap(); // handle -> id
const ownFunctions = new Map(); // id -> a test function the solution may call, or a token's object
const ownFunctionIds = new WeakMap();
const pending = new Map(); // the solution's promise id -> {resolve, reject}
let nextId = 1;

function remote(request) {
  const message = bridge().call(request);
  if (message.ok) return decode(message.v);
  throw decode(message.e);
}

function makeHandle(wire) {
  const id = wire.id;
  const callable = wire.kind === 'function';
  const name = callable && typeof wire.name === 'string' ? wire.name : '';
  const target = callable ? function () {}.bind(null) : Object.create(null);
  const self = { t: 'r', id };
  const methods = new Set(Array.isArray(wire.methods) ? wire.methods.filter((method) => typeof method === 'string') : []);
  const bound = new Map(); // method name -> the one local function calling it (h.m === h.m)
  const method = (key) => {
    if (!bound.has(key)) {
      bound.set(key, function (...args) {
        return remote({ op: 'invoke', target: self, key, self: encode(this), args: args.map((arg) => encode(arg)) });
      });
    }
    return bound.get(key);
  };
  const handle = new Proxy(target, {
    get(_, key) {
      if (key === Symbol.hasInstance && callable) return (value) => handleIds.has(value) && remote({ op: 'instanceOf', value: { t: 'r', id: handleIds.get(value) }, target: self });
      if (callable && (key === 'name' || key === 'length')) return key === 'name' ? name : 0;
      if (!answers(key)) return undefined;
      if (typeof key === 'string' && methods.has(key)) return method(key);
      return remote({ op: 'get', target: self, key: wireKey(key) });
    },
    set(_, key, value) {
      if (typeof key === 'symbol' || FRAMEWORK_HOOKS.has(key)) return false;
      return remote({ op: 'set', target: self, key, value: encode(value) });
    },
    has(_, key) {
      return answers(key) && remote({ op: 'has', target: self, key: wireKey(key) });
    },
    apply(_, thisArg, args) {
      return remote({ op: 'apply', target: self, self: encode(thisArg), args: args.map((arg) => encode(arg)) });
    },
    construct(_, args) {
      return remote({ op: 'construct', target: self, args: args.map((arg) => encode(arg)) });
    },
    ownKeys: (t) => Reflect.ownKeys(t).filter((k) => !Reflect.getOwnPropertyDescriptor(t, k).configurable),
    getOwnPropertyDescriptor: (t, k) => {
      const own = Reflect.getOwnPropertyDescriptor(t, k);
      return own && !own.configurable ? own : undefined;
    },
    getPrototypeOf: () => null,
    setPrototypeOf: () => false,
    defineProperty: () => false,
    deleteProperty: () => false,
    preventExtensions: () => false,
    isExtensible: () => true,
  });
  handleById.set(id, handle);
  handleIds.set(handle, id);
  return handle;
}

function isHandle(value) {
  return (typeof value === 'object' || typeof value === 'function') && value !== null && handleIds.has(value);
}

// --- errors: builtin types by name, the solution's own classes as local stand-ins ---------
const standIns = new Map(); // the solution's class id -> local class

function standIn(classes, base) {
  let parent = globalThis[base] || Error;
  for (let index = classes.length - 1; index >= 0; index -= 1) {
    const { id, name } = classes[index];
    if (!standIns.has(id)) {
      const local = { [name]: class extends parent {} }[name];
      Object.defineProperty(local.prototype, 'name', { value: name, writable: true, configurable: true });
      standIns.set(id, local);
    }
    parent = standIns.get(id);
  }
  return parent;
}

function localError({ base, message, classes }) {
  const Type = standIn(classes, base);
  return new Type(message);
}

const BUILTINS = Object.fromEntries(BUILTIN_ERRORS.filter((name) => globalThis[name]).map((name) => [name, globalThis[name]]));

// Arrays, plain objects, Maps and Sets are shared with the solution process (shared.js).
const shared = sharing();

const encode = encoder({
  ...shared.encoding,
  peerId: (value) => handleIds.get(value),
  ownFunction: (fn) => ({ t: 'h', id: lend(fn), kind: 'function' }),
  // Any other object of the tests (a timer, a class instance, a cyclic structure) crosses as
  // an opaque token: the solution can only hand it back.
  ownObject: (object) => ({ t: 'h', id: lend(object), kind: 'object' }),
  promise: (promise) => {
    const id = nextId;
    nextId += 1;
    promise.then(
      (value) => settleRemote(id, true, value),
      (error) => settleRemote(id, false, error),
    );
    return { t: 'p', id };
  },
  error: (error) => ({ t: 'e', base: builtinBase(error, BUILTINS), message: String(error.message) }),
});

function lend(value) {
  if (!ownFunctionIds.has(value)) {
    ownFunctionIds.set(value, nextId);
    ownFunctions.set(nextId, value);
    nextId += 1;
  }
  return ownFunctionIds.get(value);
}

function settleRemote(id, ok, value) {
  let v;
  try {
    v = encode(value);
  } catch (error) {
    ok = false;
    v = encode(new TypeError(error.message));
  }
  if (!bridge().closed) bridge().notify({ op: 'settle', id, ok, v });
}

const decode = decoder({
  ...shared.decoding,
  peerRef: (wire) => handleById.get(wire.id) || makeHandle(wire),
  ownRef: (id) => {
    if (!ownFunctions.has(id)) throw new ProtocolError(`no function ${id} here`);
    return ownFunctions.get(id);
  },
  promise: (id) => {
    if (pending.has(id)) return pending.get(id).promise;
    let settle;
    const promise = new Promise((resolve, reject) => { settle = { resolve, reject }; });
    pending.set(id, { ...settle, promise });
    return promise;
  },
  error: localError,
  errorClass: ({ base, classes }) => standIn(classes, base),
});

// --- the channel --------------------------------------------------------------------------
let channel = null;

function bridge() {
  if (!channel) {
    channel = new Channel({
      mode: 'listen',
      socketPath: process.env.POLYGLOT_BRIDGE_SOCKET,
      serve: serveCallback,
      onNote: settleLocal,
      encodeError: (error) => (error instanceof Error ? encode(error) : encode(error)),
      callTimeoutMs: CALL_TIMEOUT_MS,
      connectMs: 60000, // the solution process is normally connecting already
      sync: shared.sync(encode, decode),
    });
    channel.onClose = (reason) => {
      // This side never closes the channel: a close is the peer dying, a protocol violation,
      // a flood or an unanswered call. The harness names the verdict after it.
      noteEvent('bridge_broken');
      for (const { reject } of pending.values()) reject(new Error(`the solution process is gone (${reason})`));
      pending.clear();
    };
  }
  return channel;
}

// What the trusted side caught, as {name: count} in POLYGLOT_EVENTS (the report directory's
// bridge.json, which only this process can write), read with the report (utils/languages/).
function noteEvent(what) {
  const path = process.env.POLYGLOT_EVENTS;
  if (!path) return;
  try {
    let counts = {};
    try { counts = JSON.parse(fs.readFileSync(path, 'utf8')); } catch (error) { /* the first event */ }
    counts[what] = (counts[what] || 0) + 1;
    fs.writeFileSync(path, JSON.stringify(counts));
  } catch (error) { /* the report stands without it */ }
}

// The only request the solution process may make: call a function the tests passed to it.
function serveCallback(request) {
  if (request.op !== 'apply' || typeof ownFunctions.get(request.target && request.target.id) !== 'function') throw new ProtocolError('the solution may only call the functions the tests passed to it');
  if (!Array.isArray(request.args)) throw new ProtocolError('malformed call');
  const fn = ownFunctions.get(request.target.id);
  return encode(fn(...request.args.map((arg) => decode(arg))));
}

function settleLocal(note) {
  if (note.op !== 'settle' || !pending.has(note.id)) throw new ProtocolError('unexpected note');
  const { resolve, reject } = pending.get(note.id);
  if (note.ok) resolve(decode(note.v));
  else reject(decode(note.v));
}

// --- what jest sees -------------------------------------------------------------------------
function solutionModule(relativePath, specNames, compiled) {
  declare(specNames);
  const loaded = remote({ op: 'load', path: relativePath, code: compiled });
  if (!Array.isArray(loaded) || loaded.length !== 2 || !['namespace', 'value'].includes(loaded[0])) throw new ProtocolError('malformed module from the solution process');
  return loaded[0] === 'namespace' ? namespace(loaded[1], (value) => value) : loaded[1];
}

// An object made here from a namespace's [name, value] pairs (solver.js encodeNamespace), each
// value as `keep` makes it.
function namespace(pairs, keep) {
  const valid = Array.isArray(pairs) && pairs.every((pair) => Array.isArray(pair) && pair.length === 2 && typeof pair[0] === 'string');
  if (!valid) throw new ProtocolError('malformed namespace from the solution process');
  const object = {};
  for (const [name, value] of pairs) Object.defineProperty(object, name, { value: keep(value), writable: true, enumerable: true, configurable: true });
  return object;
}

// A function in a snapshot's data, as jest compares functions in one process: equal only to
// itself. A token, not the function: a snapshot holding a callable `asymmetricMatch` would make
// jest ask the solution whether two objects are equal (own_property_matcher).
const functionTokens = new WeakMap();
function dataOnly(value) {
  if (typeof value !== 'function') return value;
  if (!functionTokens.has(value)) functionTokens.set(value, Symbol(`function ${value.name}`));
  return functionTokens.get(value);
}

// The solution run as a program (program.js): its status and output, as data.
function solutionProgram(relativePath, args, cwd) {
  return remote({ op: 'program', path: relativePath, args, cwd });
}

// An equality tester (expect.addEqualityTesters): a handle never equals a plain value; two
// handles are compared HERE, as jest compares two objects (builtin tag, own enumerable
// properties, items of iterables, the class for toStrictEqual and iterables), plus the state
// the runtime sees hidden (private fields, values a WeakMap keeps for it, captured variables),
// from snapshots of their data: no method of the solution (an asymmetricMatch, an equals)
// takes part. Two handles showing no state at all are unequal.
function handleEquality(a, b, customTesters) {
  const aHandle = isHandle(a);
  const bHandle = isHandle(b);
  if (!aHandle && !bHandle) return undefined;
  if (!aHandle || !bHandle) return false;
  if (a === b) return true;
  // A cycle (a doubly linked list) meets the same pair again: as jest does, equal so far.
  if (comparing.some(([x, y]) => x === a && y === b)) return true;
  comparing.push([a, b]);
  try {
    return compareHandles.call(this, a, b, customTesters || []);
  } finally {
    comparing.pop();
  }
}

const comparing = [];

function compareHandles(a, b, testers) {
  const strict = testers.some((tester) => tester && tester.name === 'typeEquality');
  const [left, right] = [a, b].map((handle) => snapshotOf(handle));
  if (left.tag !== right.tag) return false;
  const iterable = left.items !== null || right.items !== null;
  if ((strict || iterable) && left.ctor !== right.ctor) return false;
  if (iterable && !this.equals(left.items, right.items, testers, strict)) return false;
  // Two objects of which nothing is observable are not equal for want of data (issue 32): a
  // class keeping its state where not even the runtime shows it cannot pass a comparison.
  if (!observable(left) && !observable(right)) {
    noteEvent('handles_without_data');
    return false;
  }
  return this.equals(left.props, right.props, testers, strict) && this.equals(left.hidden, right.hidden, testers, strict);
}

// Whether a snapshot shows any state: own enumerable properties, items, private fields, what a
// store keeps for the object, what its own methods capture.
function observable(found) {
  const { hidden } = found;
  return Object.keys(found.props).length > 0 || found.items !== null || Object.keys(hidden.private).length > 0
    || hidden.kept.length > 0 || Object.keys(hidden.captured).length > 0;
}

function snapshotOf(handle) {
  const fields = namespace(remote({ op: 'snapshot', target: { t: 'r', id: handleIds.get(handle) } }), (value) => value);
  const valid = typeof fields.tag === 'string' && (fields.items === null || Array.isArray(fields.items)) && Array.isArray(fields.kept);
  if (!valid) throw new ProtocolError('malformed snapshot from the solution process');
  return {
    tag: fields.tag, ctor: fields.ctor, props: namespace(fields.props, dataOnly), items: fields.items,
    hidden: { private: namespace(fields.private, dataOnly), kept: fields.kept, captured: namespace(fields.captured, dataOnly) },
  };
}

module.exports = { solutionModule, solutionProgram, handleEquality, isHandle, start: bridge };
