'use strict';
// V8 code cache for the image's OWN modules (docs/ci-time.md, issue 34). Preloaded (`node -r`)
// by both grading processes: a CommonJS module that node loads from /opt/polyglot-js/
// node_modules or the bridge is compiled from the code cache built at IMAGE BUILD time
// (build.js, by trusted code on the image's own sample exercise), when one exists for exactly
// that file and content; every other module (the exercise's, the solution's, a module with
// `import()` or a hashbang) is compiled by node as it always is. This file never writes: the
// cache directory is root's and read-only in the image, and nothing of the grading adds to it.
// The cache holds only what V8 compiled (bytecode), keyed by the file's path and a hash of its
// whole content; V8 itself refuses data made by another V8 or with other flags (the module
// is then compiled from source as usual).
const Module = require('module');
const crypto = require('crypto');
const fs = require('fs');
const path = require('path');
const vm = require('vm');

const { Script } = vm; // node's own, whatever installForScripts puts in its place

const CACHE_DIR = path.join(__dirname, 'v8');
const ROOTS = ['/opt/polyglot-js/node_modules/', '/opt/polyglot-js/polyglot-bridge/'];

function cacheable(content, filename) {
  return typeof filename === 'string' && typeof content === 'string' && ROOTS.some((root) => filename.startsWith(root))
    && !content.startsWith('#!') && !content.includes('import(');
}

function keyOf(content, filename) {
  return crypto.createHash('sha256').update(filename).update('\0').update(content).digest('hex');
}

// node's own require function for a module (lib/internal/modules/cjs/helpers.js:
// makeRequireFunction), without policy redirects (no policy is used).
function makeRequire(mod) {
  const require = function require(id) { return mod.require(id); };
  function resolve(request, options) { return Module._resolveFilename(request, mod, false, options); }
  function paths(request) { return Module._resolveLookupPaths(request, mod); }
  resolve.paths = paths;
  require.resolve = resolve;
  require.main = process.mainModule;
  require.extensions = Module._extensions;
  require.cache = Module._cache;
  return require;
}

// `record(script, key)` is given by build.js only; grading never records.
function install(record) {
  const compile = Module.prototype._compile;
  // Columns on a module's first line as node reports them (its wrapper is not in the text).
  const wrapperPrefix = Module.wrap('\0').split('\0')[0];
  Module.prototype._compile = function _compile(content, filename) {
    if (!cacheable(content, filename)) return compile.call(this, content, filename);
    const key = keyOf(content, filename);
    let cachedData;
    if (!record) {
      try {
        cachedData = fs.readFileSync(path.join(CACHE_DIR, key));
      } catch {
        return compile.call(this, content, filename);
      }
    }
    const script = new Script(Module.wrap(content), {
      filename, cachedData, columnOffset: -wrapperPrefix.length,
    });
    if (record) record(script, key);
    const wrapper = script.runInThisContext({ displayErrors: true });
    return Reflect.apply(wrapper, this.exports, [this.exports, makeRequire(this), this, filename, path.dirname(filename)]);
  };
}

// jest compiles the modules of a test's own registry (its framework, expect, the polyfills
// babel adds, the bridge) with vm.Script in its runtime: the same cache for those of the image,
// keyed by their wrapped code. Every other script (the exercise's files) is compiled as before.
function installForScripts(record) {
  class CachedScript extends Script {
    constructor(code, options) {
      const filename = options && typeof options === 'object' ? options.filename : undefined;
      if (options && options.cachedData === undefined && !options.produceCachedData && cacheable(code, filename)) {
        const key = keyOf(code, filename);
        let cachedData;
        if (!record) {
          try {
            cachedData = fs.readFileSync(path.join(CACHE_DIR, key));
          } catch {
            cachedData = undefined;
          }
        }
        super(code, cachedData ? { ...options, cachedData } : options);
        if (record) record(this, key);
      } else {
        super(code, options);
      }
    }
  }
  vm.Script = CachedScript;
}

module.exports = { install, installForScripts, CACHE_DIR };
if (require.main !== module && !process.env.POLYGLOT_JS_CODE_CACHE_RECORD) {
  installForScripts(null);
  install(null);
}
