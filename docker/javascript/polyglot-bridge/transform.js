'use strict';
// The jest transformer of trusted grading. A solution module (a .js file of the exercise that
// is not a test, a jest/babel config or in node_modules) is never run here: it becomes one
// line that asks the solution process for the module's exports (trusted.js), handing it the
// module's code as babel-jest compiles it (text, so the solution process needs no babel) and
// the property names the hidden specs use. Everything else goes through babel-jest as in ordinary grading; the bridge's own
// files run as they are.
const crypto = require('crypto');
const fs = require('fs');
const path = require('path');
const babelJest = require('babel-jest');

const BRIDGE_DIR = __dirname;
const TRUSTED = path.join(BRIDGE_DIR, 'trusted.js');
// What runs here besides the bridge and the image's modules (outside rootDir): the hidden
// specs (a patch cannot add one: grading drops files matching the hidden globs) and the
// exercise's own configuration at the root of the exercise (a patch cannot change those:
// never_keep_globs). Every pattern is anchored: `lib/.babelrc_x/evil.js` is a solution
// module like any other (red team 6 ran one here through a `__mocks__` folder).
const NOT_SOLUTION = [/^(?:[^/]+\/)*[^/]+\.(spec|test)\.[cm]?jsx?$/, /^(?:[^/]+\/)*__tests__\//, /^node_modules\//,
  /^[^/]+\.config\.[cm]?js$/, /^jest\.[^/]*$/, /^setupTests\.js$/, /^\.babelrc[^/]*$/];
const VERSION = 'polyglot-bridge-1';

const babel = (babelJest.default || babelJest).createTransformer();

// --- the names the hidden specs use (what a handle may answer, trusted.js) ---------------
function specFiles(dir, depth = 0) {
  const found = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory() && depth < 8) found.push(...specFiles(full, depth + 1));
    else if (entry.isFile() && (/\.(spec|test)\.[cm]?jsx?$/.test(entry.name) || full.includes(`${path.sep}__tests__${path.sep}`))) found.push(full);
  }
  return found.sort();
}

// `a.name`, `a['name']`, `a?.name`, `{ name } = a`, `{ name: x }`, `name() {}`, named imports;
// `Symbol.iterator` named anywhere becomes '@@iterator'.
function namesIn(source) {
  const { parse } = require('@babel/parser');
  const names = new Set();
  const visit = (node) => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (!node || typeof node.type !== 'string') return undefined;
    if (node.type === 'MemberExpression' || node.type === 'OptionalMemberExpression') {
      if (!node.computed && node.property.type === 'Identifier') names.add(node.property.name);
      if (node.computed && node.property.type === 'StringLiteral') names.add(node.property.value);
      if (node.object.type === 'Identifier' && node.object.name === 'Symbol' && node.property.name === 'iterator') names.add('@@iterator');
    }
    if (['ObjectProperty', 'ObjectMethod', 'ClassMethod'].includes(node.type) && !node.computed && node.key.type === 'Identifier') names.add(node.key.name);
    if (node.type === 'ImportSpecifier') names.add(node.imported.name || node.imported.value);
    for (const field of Object.keys(node)) {
      if (field !== 'loc' && typeof node[field] === 'object') visit(node[field]);
    }
    return undefined;
  };
  visit(parse(source, { sourceType: 'unambiguous', errorRecovery: true, plugins: ['jsx'] }).program);
  return names;
}

const specNames = new Map(); // rootDir -> {digest, names}
function specsOf(rootDir) {
  if (!specNames.has(rootDir)) {
    const sources = specFiles(rootDir).map((file) => fs.readFileSync(file, 'utf8'));
    const names = new Set();
    for (const source of sources) for (const name of namesIn(source)) names.add(name);
    const digest = crypto.createHash('sha256').update(sources.join('\0')).digest('hex');
    specNames.set(rootDir, { digest, names: [...names].sort() });
  }
  return specNames.get(rootDir);
}

function solutionPath(filename, rootDir) {
  const relative = path.relative(rootDir, filename).split(path.sep).join('/');
  if (relative.startsWith('..') || path.isAbsolute(relative)) return null;
  return NOT_SOLUTION.some((pattern) => pattern.test(relative)) ? null : relative;
}

module.exports = {
  canInstrument: false,
  getCacheKey(source, filename, options) {
    const relative = solutionPath(filename, options.config.rootDir);
    if (filename.startsWith(BRIDGE_DIR + path.sep) || relative) {
      const specs = relative ? specsOf(options.config.rootDir).digest : '';
      return crypto.createHash('sha256').update(`${VERSION}\0${filename}\0${relative}\0${specs}\0${source}`).digest('hex');
    }
    return babel.getCacheKey(source, filename, options);
  },
  process(source, filename, options) {
    if (filename.startsWith(BRIDGE_DIR + path.sep)) return { code: source };
    const relative = solutionPath(filename, options.config.rootDir);
    if (relative) {
      // Compiled here exactly as in-process grading compiles it (the exercise's babel config),
      // as text: the solution process runs it, this process never does.
      const compiled = babel.process(source, filename, options).code;
      const names = JSON.stringify(specsOf(options.config.rootDir).names);
      const call = `solutionModule(${JSON.stringify(relative)}, ${names}, ${JSON.stringify(compiled)})`;
      return { code: `module.exports = require(${JSON.stringify(TRUSTED)}).${call};\n` };
    }
    return babel.process(source, filename, options);
  },
};
