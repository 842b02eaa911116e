'use strict';
// IMAGE BUILD time only: @babel/preset-env's list of the plugins it can use
// (lib/available-plugins.js) requires every one of them (~70 packages) when it is loaded,
// though each entry is a function that returns its plugin and preset-env calls only those the
// targets need (for the exercises' `node: 'current'`: a few). This rewrites each such entry
// to require its plugin when it is called, so a plugin the transform never uses is never
// loaded; the plugins used, their order and options are untouched (the same module objects:
// require's cache). Any line of another shape fails the build rather than pass unrewritten.
const fs = require('fs');

const file = require.resolve('@babel/preset-env/lib/available-plugins.js', { paths: [process.argv[2]] });
const text = fs.readFileSync(file, 'utf8');
const requires = new Map();
const kept = text.split('\n').filter((line) => {
  const match = /^var (_\w+) = require\(("[^"]+")\);$/.exec(line);
  if (match) requires.set(match[1], match[2]);
  return !match;
}).join('\n');
let rewritten = kept;
for (const [name, module] of requires) {
  const uses = kept.match(new RegExp(`\\b${name}\\b`, 'g')) || [];
  const getters = kept.match(new RegExp(`\\(\\) => ${name}(\\.default)?(,|\\n)`, 'g')) || [];
  if (uses.length === 0 || uses.length !== getters.length) {
    throw new Error(`${file}: ${name} is used other than as an entry's getter (${uses.length} uses, ${getters.length} getters)`);
  }
  rewritten = rewritten.replace(new RegExp(`\\(\\) => ${name}\\b`, 'g'), `() => require(${module})`);
}
if (requires.size < 50) throw new Error(`${file}: ${requires.size} requires, expected the full list`);
fs.writeFileSync(file, rewritten);
console.log(`lazy-plugins: ${requires.size} plugins of ${file} required when used`);
