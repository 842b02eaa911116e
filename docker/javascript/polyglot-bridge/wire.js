'use strict';
// The wire format of values crossing between the test process and the solution process:
// JSON with tags. Plain data crosses BY VALUE and is rebuilt from scratch by the receiver
// (fresh arrays, fresh objects with data properties only: no getters, prototypes or symbols of
// the sender survive); anything else is a reference that the sender's `side` decides on:
//   strings, booleans, null, finite numbers   as themselves
//   [..]                                       an array (holes read as undefined)
//   {t:'u'} undefined   {t:'n', v:'NaN'|'Infinity'|'-Infinity'|'-0'}   {t:'b', v:'123'} bigint
//   {t:'o', v:[[key, value], ..]} a plain object (own enumerable string keys)
//   {t:'d', v:ms} Date   {t:'m', v:[[k, v], ..]} Map   {t:'s', v:[..]} Set
//   {t:'e', base:'TypeError', message, classes?:[{id, name}, ..]} an error (classes: the
//        solution's own error classes, most derived first, below the builtin `base`)
//   {t:'ec', base, classes} an error class of the solution (a local stand-in class stands in)
//   {t:'h', id, kind:'object'|'function', name?} an object the SENDER keeps (a handle)
//   {t:'r', id} an object the RECEIVER keeps (a handle coming home)
//   {t:'p', id} a promise the sender settles later with a {k:'note', op:'settle'} message
//   {t:'A', id, k, v} a container the SENDER shares (k: 'a' array, 'o' plain object, 'm' Map,
//        's' Set; v: its items, [key, value] pairs, entries, values), when the side shares
//        containers (shared.js): the receiver keeps one copy per id and refreshes it
//   {t:'R', id, k, v} the receiver's own shared container coming home (v: the sender's view)
//   (x: 'f', 's' or 'n' when the container is frozen, sealed or not extensible: the copy is too)
// Without `container` in the side, containers cross as the plain forms above ([..], 'o', 'm', 's').
const { types } = require('util');

const MAX_DEPTH = 256;
const BUILTIN_ERRORS = ['Error', 'TypeError', 'RangeError', 'SyntaxError', 'ReferenceError', 'EvalError', 'URIError', 'AggregateError'];
const SPECIAL_NUMBERS = { NaN: NaN, Infinity: Infinity, '-Infinity': -Infinity, '-0': -0 };

class ProtocolError extends Error {}

function isPlainObject(value) {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function encodeNumber(value) {
  if (Number.isFinite(value) && !Object.is(value, -0)) return value;
  return { t: 'n', v: Object.is(value, -0) ? '-0' : String(value) };
}

// What kind of container `value` is when it crosses as data ('a', 'o', 'm', 's'), or null.
// By the engine's own brand (internal slots), never by what the value says it is: a thenable
// whose Symbol.toStringTag is 'Promise' is an object of the solution's (red team 15).
function containerKind(value) {
  if (value === null || typeof value !== 'object') return null;
  if (Array.isArray(value)) return 'a';
  if (types.isMap(value)) return 'm';
  if (types.isSet(value)) return 's';
  if (types.isPromise(value) || types.isNativeError(value) || types.isDate(value)) return null;
  return isPlainObject(value) && hasOnlyData(value) ? 'o' : null;
}

const PLAIN = {
  a: (content) => content,
  o: (content) => ({ t: 'o', v: content }),
  m: (content) => ({ t: 'm', v: content }),
  s: (content) => ({ t: 's', v: content }),
};

function contentOf(kind, value, inner) {
  if (kind === 'a') return Array.from(value, inner);
  if (kind === 'o') return Object.keys(value).map((key) => [key, inner(value[key])]);
  if (kind === 'm') return Array.from(Map.prototype.entries.call(value), ([k, v]) => [inner(k), inner(v)]);
  return Array.from(Set.prototype.values.call(value), inner);
}

// side: { peerId(value) -> id|undefined, ownFunction(fn), ownObject(obj, encode),
//         promise(p), error(e), container?(value, kind, content) (shared.js) }
// The encoder's `content(kind, value)` encodes a container's content (for a sync).
function encoder(side) {
  const encode = (value, depth = 0, path = []) => {
    if (depth > MAX_DEPTH) throw new RangeError('a value nested too deeply cannot cross');
    switch (typeof value) {
      case 'undefined': return { t: 'u' };
      case 'boolean': case 'string': return value;
      case 'number': return encodeNumber(value);
      case 'bigint': return { t: 'b', v: value.toString() };
      case 'symbol': throw new TypeError('a symbol cannot cross to the other process');
      default: break;
    }
    if (value === null) return null;
    const peer = side.peerId(value);
    if (peer !== undefined) return { t: 'r', id: peer };
    if (typeof value === 'function') return side.ownFunction(value);
    if (path.includes(value)) return side.ownObject(value, null); // a cycle: the sender decides
    const nested = path.concat([value]);
    const inner = (item) => encode(item, depth + 1, nested);
    const kind = containerKind(value);
    if (kind !== null) {
      const content = () => contentOf(kind, value, inner);
      return side.container ? side.container(value, kind, content) : PLAIN[kind](content());
    }
    if (types.isPromise(value)) return side.promise(value);
    if (types.isNativeError(value)) return side.error(value);
    if (types.isDate(value)) return { t: 'd', v: encodeNumber(Date.prototype.getTime.call(value)) };
    return side.ownObject(value, inner);
  };
  encode.content = (kind, value) => contentOf(kind, value, (item) => encode(item, 1, [value]));
  return encode;
}

// Getters or methods make an object behave, not just hold data: such an object stays with
// its sender (a plain object carrying an `asymmetricMatch` or `then` function would otherwise
// reach jest as a matcher or a thenable).
function hasOnlyData(value) {
  return Object.keys(value).every((key) => {
    const descriptor = Object.getOwnPropertyDescriptor(value, key);
    return 'value' in descriptor && typeof descriptor.value !== 'function';
  });
}

function check(condition, what) {
  if (!condition) throw new ProtocolError(`malformed value from the other process: ${what}`);
}

function isId(id) {
  return Number.isSafeInteger(id) && id > 0;
}

// side: { peerRef(wire), ownRef(id), promise(id), error(wire), errorClass(wire),
//         copyOf?(wire, decodeContent), home?(wire, decodeContent) (shared.js) }
// The decoder's `content(kind, v)` decodes a container's content (for a sync).
function decoder(side) {
  const decode = (wire, depth = 0) => {
    check(depth <= MAX_DEPTH, 'nested too deeply');
    if (wire === null || typeof wire === 'boolean' || typeof wire === 'string') return wire;
    if (typeof wire === 'number') return wire;
    check(typeof wire === 'object', typeof wire);
    const inner = (item) => decode(item, depth + 1);
    if (Array.isArray(wire)) return wire.map(inner);
    switch (wire.t) {
      case 'u': return undefined;
      case 'n': check(Object.prototype.hasOwnProperty.call(SPECIAL_NUMBERS, wire.v), 'number'); return SPECIAL_NUMBERS[wire.v];
      case 'b': check(typeof wire.v === 'string' && /^-?\d{1,100000}$/.test(wire.v), 'bigint'); return BigInt(wire.v);
      case 'o': return decodeObject(wire.v, inner);
      case 'd': return new Date(inner(wire.v));
      case 'm': check(Array.isArray(wire.v), 'map'); return new Map(wire.v.map((pair) => { check(Array.isArray(pair) && pair.length === 2, 'map entry'); return [inner(pair[0]), inner(pair[1])]; }));
      case 's': check(Array.isArray(wire.v), 'set'); return new Set(wire.v.map(inner));
      case 'e': return side.error(checkError(wire));
      case 'ec': return side.errorClass(checkError(wire));
      case 'h': check(isId(wire.id) && (wire.kind === 'object' || wire.kind === 'function'), 'handle'); return side.peerRef(wire);
      case 'r': check(isId(wire.id), 'reference'); return side.ownRef(wire.id);
      case 'p': check(isId(wire.id), 'promise'); return side.promise(wire.id);
      case 'A': case 'R': {
        check(isId(wire.id) && Object.prototype.hasOwnProperty.call(PLAIN, wire.k) && side.copyOf, 'shared container');
        const content = (kind, v) => decodeContent(kind, v, inner);
        return wire.t === 'A' ? side.copyOf(wire, content) : side.home(wire, content);
      }
      default: throw new ProtocolError(`malformed value from the other process: tag ${String(wire.t).slice(0, 20)}`);
    }
  };
  decode.content = (kind, v) => decodeContent(kind, v, (item) => decode(item, 1));
  return decode;
}

// A container's content as sent (contentOf), decoded: items, or [key, value] pairs.
function decodeContent(kind, v, inner) {
  check(Array.isArray(v), 'container');
  if (kind === 'a' || kind === 's') return v.map(inner);
  return v.map((pair) => {
    check(Array.isArray(pair) && pair.length === 2 && (kind === 'm' || typeof pair[0] === 'string'), 'container entry');
    if (kind === 'm') return [inner(pair[0]), inner(pair[1])];
    // A plain object holds data only, as its sender's encoder decides (hasOnlyData): a callable
    // value under `asymmetricMatch` or `then` would make jest ask the sender about equality.
    const value = inner(pair[1]);
    check(typeof value !== 'function', 'a plain object holding a function');
    return [pair[0], value];
  });
}

function decodeObject(entries, inner) {
  const object = {};
  // defineProperty, not assignment: a key named __proto__ stays plain data
  for (const [key, value] of decodeContent('o', entries, inner)) Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true });
  return object;
}

function checkError(wire) {
  check(BUILTIN_ERRORS.includes(wire.base), 'error type');
  check(typeof wire.message === 'string', 'error message');
  const classes = wire.classes === undefined ? [] : wire.classes;
  check(Array.isArray(classes) && classes.length <= 32, 'error classes');
  for (const item of classes) check(item && isId(item.id) && typeof item.name === 'string', 'error class');
  return { base: wire.base, message: wire.message, classes };
}

// The nearest builtin error type of `error` (by prototype chain, then by name).
function builtinBase(error, globals) {
  for (let proto = Object.getPrototypeOf(error); proto; proto = Object.getPrototypeOf(proto)) {
    const name = BUILTIN_ERRORS.find((type) => globals[type] && globals[type].prototype === proto);
    if (name) return name;
  }
  return 'Error';
}

module.exports = { encoder, decoder, containerKind, builtinBase, ProtocolError, BUILTIN_ERRORS };
