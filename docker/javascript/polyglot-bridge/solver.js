'use strict';
// The solution process (uid SOLUTION_UID, cwd = the solution directory): loads the solution's
// modules when the test process asks, keeps every object that is not plain data behind a
// handle (a number), and answers requests about handles: get, set, has, call, construct,
// instanceof, and jest-style equality between two of its own objects. It decides no test:
// it only computes values, which cross as data (wire.js). Functions the tests pass in become
// local functions that call back into the test process; that is all it can do with them.
//
// Usage: node solver.js SOCKET (run in the solution directory).
const fs = require('fs');
const Module = require('module');
const path = require('path');
const { Worker } = require('worker_threads');
const { Channel } = require('./channel');
const { encoder, decoder, builtinBase, ProtocolError } = require('./wire');
const { sharing } = require('./shared');
// Before any solution code runs: it keeps the builtins it uses as they are now.
const { hiddenState } = require('./private-state');

const SOLUTION_DIR = process.cwd();
const CALL_TIMEOUT_MS = 55000;
// The test process listens only once jest has started, which takes well over 30 s on a
// loaded machine; the grading timeout bounds the wait anyway.
const CONNECT_MS = 110000;

// --- loading the solution -------------------------------------------------------------------
// A module the tests import comes with its code as the test process's jest compiled it (the
// exercise's babel config); one the solution itself requires is compiled here with the
// exercise preset, from the image, as a module (babel's default, as jest compiles it): strict,
// so no function of a helper written as a plain script reaches the global object through
// `this` (red team 10: `(function () { return this; })().process` passed every reader).
let babel = null;
const compiledCode = new Map(); // filename -> code from the test process
function compileWithBabel() {
  const previous = Module._extensions['.js'];
  Module._extensions['.js'] = (module, filename) => {
    if (!isSolutionFile(filename)) return previous(module, filename);
    if (compiledCode.has(filename)) return module._compile(compiledCode.get(filename), filename);
    babel = babel || require('@babel/core');
    const source = fs.readFileSync(filename, 'utf8');
    const { code } = babel.transformSync(source, {
      filename, configFile: false, babelrc: false, sourceType: 'module',
      presets: [require.resolve('@exercism/babel-preset-javascript')],
    });
    module._compile(code, filename);
  };
}

function isSolutionFile(filename) {
  return filename.startsWith(SOLUTION_DIR + path.sep) && !filename.includes(`${path.sep}node_modules${path.sep}`);
}

function inSolutionDir(relative, what) {
  if (typeof relative !== 'string' || relative.startsWith('/') || relative.split(/[\\/]/).includes('..')) {
    throw new TypeError(`not a solution ${what} path`);
  }
  return path.join(SOLUTION_DIR, relative);
}

function load(relative, code) {
  const filename = inSolutionDir(relative, 'module');
  if (typeof code === 'string' && !compiledCode.has(filename)) compiledCode.set(filename, code);
  return require(filename);
}

// --- the solution as a program (exercises whose tests start it: javascript__grep) ----------
// `node FILE ARGS` run here, in a worker thread (program-worker.js), never as a process: this
// process cannot start programs (polyglot-noexec), so neither can the program (red team 6
// had grep.js run /usr/bin/grep while programs were spawned). The test process gets the exit
// status and the output as data (program.js stands in for child_process there). The program
// runs in the solution directory (this process's cwd; a worker cannot change it).
const PROGRAM_ROOM = 16 << 20;
const PROGRAM_WORKER = path.join(__dirname, 'program-worker.js');
function runProgram({ path: relative, args, cwd }) {
  const file = inSolutionDir(relative, 'program');
  if (cwd !== '') throw new TypeError('a program runs in the exercise\'s root directory');
  if (!Array.isArray(args) || !args.every((arg) => typeof arg === 'string')) throw new TypeError('program arguments are strings');
  const shared = new SharedArrayBuffer(16 + PROGRAM_ROOM);
  const header = new Int32Array(shared, 0, 4);
  const worker = new Worker(PROGRAM_WORKER, { workerData: { file, args, shared }, stdout: true, stderr: true, stdin: false });
  worker.on('error', () => {});
  const waited = Atomics.wait(header, 0, 0, CALL_TIMEOUT_MS - 5000);
  if (waited === 'timed-out') {
    worker.terminate();
    return { status: null, signal: 'SIGTERM', stdout: '', stderr: '', error: 'ETIMEDOUT' };
  }
  const room = Buffer.from(shared, 16);
  return {
    status: header[1], signal: null,
    stdout: room.subarray(0, header[2]).toString('base64'),
    stderr: room.subarray(header[2], header[2] + header[3]).toString('base64'),
    error: null,
  };
}

// --- handles: objects that stay here ------------------------------------------------------
const handles = new Map(); // id -> value
const handleIds = new Map(); // value -> id
const peerFunctions = new Map(); // the test process's function id -> local function or token
const peerFunctionIds = new WeakMap(); // local function or token -> the test process's id
const promises = new Map(); // the test process's promise id -> {resolve, reject}
let nextId = 1;

function keep(value) {
  if (!handleIds.has(value)) {
    handleIds.set(value, nextId);
    handles.set(nextId, value);
    nextId += 1;
  }
  return handleIds.get(value);
}

// The names of the methods an object inherits from its classes (or a class's static
// methods): the test process calls them in one round trip (`invoke`) instead of two.
function methodNames(value) {
  const names = new Set();
  for (let proto = typeof value === 'function' ? value : Object.getPrototypeOf(value);
    proto && proto !== Object.prototype && proto !== Function.prototype && names.size < 500;
    proto = Object.getPrototypeOf(proto)) {
    for (const name of Object.getOwnPropertyNames(proto)) {
      const descriptor = Object.getOwnPropertyDescriptor(proto, name);
      if (typeof descriptor.value === 'function' && name !== 'constructor' && name.length <= 200) names.add(name);
    }
  }
  return [...names].slice(0, 500);
}

function errorClassChain(fn) {
  const classes = [];
  for (let cls = fn; typeof cls === 'function' && cls.prototype instanceof Error; cls = Object.getPrototypeOf(cls)) {
    if (Object.values(BUILTINS).includes(cls)) break;
    classes.push({ id: keep(cls), name: String(cls.name).slice(0, 200) });
  }
  return classes;
}

const BUILTINS = { Error, TypeError, RangeError, SyntaxError, ReferenceError, EvalError, URIError, AggregateError };

function encodeError(error) {
  if (!(error instanceof Error)) return encode(error);
  const isClass = Object.values(BUILTINS).includes(error.constructor);
  return {
    t: 'e', base: builtinBase(error, BUILTINS), message: String(error.message),
    classes: isClass ? [] : errorClassChain(error.constructor),
  };
}

// Arrays, plain objects, Maps and Sets are shared with the test process (shared.js).
const shared = sharing();

const encode = encoder({
  ...shared.encoding,
  peerId: (value) => peerFunctionIds.get(value),
  ownFunction: (fn) => (fn.prototype instanceof Error && !Object.values(BUILTINS).includes(fn)
    ? { t: 'ec', base: builtinBase(fn.prototype, BUILTINS), message: '', classes: errorClassChain(fn) }
    : { t: 'h', id: keep(fn), kind: 'function', name: String(fn.name).slice(0, 200), methods: methodNames(fn) }),
  ownObject: (object) => ({ t: 'h', id: keep(object), kind: 'object', methods: methodNames(object) }),
  promise: (promise) => {
    const id = keep(promise);
    promise.then(
      (value) => settle(id, true, value),
      (error) => settle(id, false, error),
    );
    return { t: 'p', id };
  },
  error: (error) => encodeError(error),
});

function settle(id, ok, value) {
  let v;
  try {
    v = ok ? encode(value) : encodeError(value);
  } catch (error) {
    ok = false;
    v = encodeError(error);
  }
  channel.notify({ op: 'settle', id, ok, v });
}

const decode = decoder({
  ...shared.decoding,
  peerRef: (wire) => {
    if (!peerFunctions.has(wire.id)) {
      // A test function: calling it is all the solution can do. A test object: a token.
      const callback = wire.kind === 'function' ? function (...args) {
        return reply(channel.call({ op: 'apply', target: { t: 'r', id: wire.id }, args: args.map((arg) => encode(arg)) }));
      } : Object.freeze(Object.create(null));
      peerFunctions.set(wire.id, callback);
      peerFunctionIds.set(callback, wire.id);
    }
    return peerFunctions.get(wire.id);
  },
  ownRef: (id) => {
    if (!handles.has(id)) throw new ProtocolError(`no handle ${id}`);
    return handles.get(id);
  },
  promise: (id) => new Promise((resolve, reject) => promises.set(id, { resolve, reject })),
  error: ({ base, message }) => new BUILTINS[base](message),
  errorClass: () => { throw new ProtocolError('the test process sends no error classes'); },
});

function reply(message) {
  if (message.ok) return decode(message.v);
  throw decode(message.e);
}

// --- requests -------------------------------------------------------------------------------
function key(wire) {
  if (typeof wire === 'string') return wire;
  if (wire && wire.sym === 'iterator') return Symbol.iterator;
  throw new ProtocolError('not a property key');
}

// A namespace (a module's exports, an object's own properties or hidden state in a snapshot)
// crosses as [name, value] pairs, functions included (as handles), from which the test process
// makes its own object: a plain object crossing as data never holds a function (wire.js).
function encodeNamespace(object) {
  return Object.keys(object).map((name) => [name, encode(object[name])]);
}

// A module's exports: its namespace, however the module object itself looks, or the one value
// it exports (a function, a class, data).
function encodeModule(exports) {
  if (exports === null || typeof exports !== 'object') return ['value', encode(exports)];
  return ['namespace', encodeNamespace(exports)];
}

const OPERATIONS = {
  load: (request) => load(request.path, request.code),
  get: (request) => decode(request.target)[key(request.key)],
  set: (request) => { decode(request.target)[key(request.key)] = decode(request.value); return true; },
  has: (request) => key(request.key) in decode(request.target),
  invoke: (request) => {
    const method = decode(request.target)[key(request.key)];
    return Reflect.apply(method, decode(request.self), request.args.map((arg) => decode(arg)));
  },
  apply: (request) => Reflect.apply(decode(request.target), decode(request.self), request.args.map((arg) => decode(arg))),
  construct: (request) => Reflect.construct(decode(request.target), request.args.map((arg) => decode(arg))),
  instanceOf: (request) => decode(request.value) instanceof decode(request.target),
  snapshot: (request) => snapshot(decode(request.target)),
  program: (request) => runProgram(request),
};

// A snapshot crosses as [field, value] pairs, its properties and hidden state as namespaces.
function encodeSnapshot({ tag, ctor, props, items, hidden }) {
  return [['tag', tag], ['ctor', encode(ctor)], ['props', encodeNamespace(props)], ['items', items === null ? null : encode(items)],
    ['private', encodeNamespace(hidden.private)], ['kept', encode(hidden.kept)], ['captured', encodeNamespace(hidden.captured)]];
}

// What jest's equality reads of an object, as data for the test process to compare: its
// builtin tag, its class, its own enumerable properties and, when iterable, its items; and
// what the runtime sees of the state it hides (private-state.js). The test process compares
// two snapshots itself; nothing here decides a comparison.
function snapshot(object) {
  const proto = Object.getPrototypeOf(object);
  const iterable = typeof object[Symbol.iterator] === 'function';
  return {
    tag: Object.prototype.toString.call(object),
    ctor: proto && typeof proto.constructor === 'function' ? proto.constructor : null,
    props: Object.fromEntries(Object.keys(object).map((name) => [name, object[name]])),
    items: iterable ? Array.from(object) : null,
    hidden: hiddenState(object),
  };
}

function serve(request) {
  const operation = Object.prototype.hasOwnProperty.call(OPERATIONS, request.op) ? OPERATIONS[request.op] : null;
  if (!operation) throw new ProtocolError(`no operation ${String(request.op).slice(0, 20)}`);
  const result = operation(request);
  if (request.op === 'load') return encodeModule(result);
  return request.op === 'snapshot' ? encodeSnapshot(result) : encode(result);
}

function onNote(note) {
  if (note.op !== 'settle' || !promises.has(note.id)) throw new ProtocolError('unexpected note');
  const { resolve, reject } = promises.get(note.id);
  promises.delete(note.id);
  if (note.ok) resolve(decode(note.v));
  else reject(decode(note.v));
}

// What the solution throws outside any request (a timer, a rejected promise nobody awaits)
// stays here: the tests see only what their own calls return or throw.
process.on('uncaughtException', () => {});
process.on('unhandledRejection', () => {});

compileWithBabel();
const channel = new Channel({
  mode: 'connect', socketPath: process.argv[2], serve, onNote, encodeError,
  callTimeoutMs: CALL_TIMEOUT_MS, connectMs: CONNECT_MS, keepAlive: true, sync: shared.sync(encode, decode),
});
channel.onClose = () => process.exit(0);
