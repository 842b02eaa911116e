'use strict';
// The jest transformer of trusted grading. A solution module (a .js file of the exercise that
// is not a test, a jest/babel config or in node_modules) is never compiled or run here: its
// code becomes one line that asks the solution process for the module's exports
// (trusted.js). Everything else goes through babel-jest as in ordinary grading; the bridge's own
// files run as they are.
const crypto = require('crypto');
const path = require('path');
const babelJest = require('babel-jest');

const BRIDGE_DIR = __dirname;
const TRUSTED = path.join(BRIDGE_DIR, 'trusted.js');
const NOT_SOLUTION = [/\.(spec|test)\.[cm]?jsx?$/, /(^|\/)__tests__\//, /(^|\/)node_modules\//,
  /\.config\.[cm]?js$/, /(^|\/)jest\.[^/]*$/, /(^|\/)setupTests\.js$/, /(^|\/)\.babelrc/];
const VERSION = 'polyglot-bridge-1';

const babel = (babelJest.default || babelJest).createTransformer();

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
      return crypto.createHash('sha256').update(`${VERSION}\0${filename}\0${relative}\0${source}`).digest('hex');
    }
    return babel.getCacheKey(source, filename, options);
  },
  process(source, filename, options) {
    if (filename.startsWith(BRIDGE_DIR + path.sep)) return { code: source };
    const relative = solutionPath(filename, options.config.rootDir);
    if (relative) {
      return { code: `module.exports = require(${JSON.stringify(TRUSTED)}).solutionModule(${JSON.stringify(relative)});\n` };
    }
    return babel.process(source, filename, options);
  },
};
