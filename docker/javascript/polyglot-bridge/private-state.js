'use strict';
// What the runtime itself can see of an object's state that its own enumerable properties do
// not show (issue 32): a class's `#private` fields, values kept for it in a WeakMap or Map its
// methods close over (`store.set(this, {n, d})`), and the variables its own methods capture
// (`function make(n) { return { value() { return n; } }; }`). Read through V8's inspector
// (Runtime.getProperties: privateProperties and a function's [[Scopes]]), in this process's own
// thread, where a session answers synchronously. Without this, two objects whose data jest
// cannot see compared equal for want of data, so a class keeping junk in a WeakMap passed
// every `toEqual` of two of its instances (javascript__rational-numbers, red team 2).
//
// This runs beside the solution: its answers are the solution process's claims, like every
// snapshot. What stops a solution that makes all its objects look alike is the equality canary
// (utils/languages/javascript.py): two different expected values asserted equal.
const inspector = require('inspector');

const session = new inspector.Session();
session.connect();
const post = session.post.bind(session);
const weakMapHas = WeakMap.prototype.has;
const weakMapGet = WeakMap.prototype.get;
const mapHas = Map.prototype.has;
const mapGet = Map.prototype.get;
const SLOT = `__polyglot_probe_${process.pid}_${Math.random().toString(36).slice(2)}`;
const MAX_FUNCTIONS = 64;
const MAX_VARIABLES = 256;

function ask(method, params) {
  let reply = null;
  let failure = null;
  post(method, params, (error, result) => { failure = error; reply = result; });
  if (failure || reply === null) throw new Error(`inspector: ${method} failed`);
  return reply;
}

// The inspector names objects by id; a value crosses in and out through one global slot.
function remoteId(value) {
  globalThis[SLOT] = value;
  try {
    return ask('Runtime.evaluate', { expression: `globalThis[${JSON.stringify(SLOT)}]` }).result.objectId;
  } finally {
    delete globalThis[SLOT];
  }
}

function localValue(remote) {
  if (!remote) return undefined;
  if (!remote.objectId) {
    if ('value' in remote) return remote.value;
    if (remote.type === 'undefined') return undefined;
    if (remote.type === 'bigint') return BigInt(String(remote.unserializableValue).replace(/n$/, ''));
    return Number(remote.unserializableValue);
  }
  ask('Runtime.callFunctionOn', { objectId: remote.objectId, functionDeclaration: `function () { globalThis[${JSON.stringify(SLOT)}] = this; }` });
  try {
    return globalThis[SLOT];
  } finally {
    delete globalThis[SLOT];
  }
}

function properties(objectId) {
  return ask('Runtime.getProperties', { objectId, ownProperties: true });
}

// #name -> value, for every private field of the object (of every class in its chain).
function privateFields(objectId) {
  const fields = {};
  for (const field of properties(objectId).privateProperties || []) {
    if ('value' in field) fields[field.name] = localValue(field.value);
  }
  return fields;
}

// The variables of a function's closure scopes (never the global or script scope).
function closureVariables(fn, innermostOnly) {
  const scopes = (properties(remoteId(fn)).internalProperties || []).find((item) => item.name === '[[Scopes]]');
  if (!scopes || !scopes.value.objectId) return [];
  const variables = [];
  for (const scope of properties(scopes.value.objectId).result) {
    if (!/^\d+$/.test(scope.name) || !scope.value || !/^(Closure|Block|Local|Module)/.test(scope.value.description || '')) continue;
    for (const variable of properties(scope.value.objectId).result.slice(0, MAX_VARIABLES)) {
      variables.push([variable.name, variable.value]);
    }
    if (innermostOnly) break;
  }
  return variables;
}

// The functions that act on the object: its own methods, and its classes' methods,
// accessors and constructors.
function functionsOf(object) {
  const found = { own: [], inherited: new Set() };
  for (const name of Object.getOwnPropertyNames(object)) {
    const descriptor = Object.getOwnPropertyDescriptor(object, name);
    if (typeof descriptor.value === 'function') found.own.push([name, descriptor.value]);
  }
  for (let proto = Object.getPrototypeOf(object); proto && proto !== Object.prototype && found.inherited.size < MAX_FUNCTIONS;
    proto = Object.getPrototypeOf(proto)) {
    for (const name of Object.getOwnPropertyNames(proto)) {
      const descriptor = Object.getOwnPropertyDescriptor(proto, name);
      for (const fn of [descriptor.value, descriptor.get, descriptor.set]) {
        if (typeof fn === 'function') found.inherited.add(fn);
      }
    }
  }
  return found;
}

// The WeakMaps and Maps a function closes over, as [store, has, get]; kept per function (a
// class's methods close over the same module variables for every instance).
const storesByFunction = new WeakMap();

function storesOf(fn) {
  if (!storesByFunction.has(fn)) {
    const stores = [];
    for (const [, remote] of closureVariables(fn, false)) {
      if (!remote || (remote.subtype !== 'weakmap' && remote.subtype !== 'map')) continue;
      stores.push([localValue(remote), ...(remote.subtype === 'weakmap' ? [weakMapHas, weakMapGet] : [mapHas, mapGet])]);
    }
    storesByFunction.set(fn, stores);
  }
  return storesByFunction.get(fn);
}

// What the stores `functions` close over keep for `object` (each store once).
function keptFor(object, functions) {
  const seen = new Set();
  const values = [];
  for (const fn of functions) {
    for (const [store, has, get] of storesOf(fn)) {
      if (seen.has(store) || !Reflect.apply(has, store, [object])) continue;
      seen.add(store);
      values.push(Reflect.apply(get, store, [object]));
    }
  }
  return values;
}

// {private, kept, captured}: the object's private fields, what stores its methods close over
// keep for it, and (own methods only: a factory's instance) the variables those capture.
function hiddenState(object) {
  if ((typeof object !== 'object' && typeof object !== 'function') || object === null) return { private: {}, kept: [], captured: {} };
  const functions = functionsOf(object);
  const kept = keptFor(object, [...functions.inherited, ...functions.own.map(([, own]) => own)].slice(0, MAX_FUNCTIONS));
  const captured = {};
  for (const [name, fn] of functions.own.slice(0, MAX_FUNCTIONS)) {
    if (functions.inherited.has(fn)) continue;
    for (const [variable, remote] of closureVariables(fn, true)) {
      // Functions are behaviour, not state (and every instance has its own copies).
      if (remote && remote.type !== 'function') captured[`${name}.${variable}`] = localValue(remote);
    }
  }
  return { private: privateFields(remoteId(object)), kept, captured };
}

module.exports = { hiddenState };
