'use strict';
// `child_process` as the hidden tests see it in trusted grading (setup.js mocks the module
// with this one): the only program a test may start is the solution itself, `node FILE ARGS`
// with FILE a file of the exercise, and it runs in the SOLUTION process (solver.js
// runProgram: its uid, its copy of the solution files), never here. This process gets the
// status and the output as data, so a solution program can no more reach the test process,
// its report or the hidden specs than a solution module can. Anything else a test asks of
// child_process is refused with an error that says so.
const path = require('path');
const { solutionProgram } = require('./trusted');

const ROOT = process.cwd(); // jest's rootDir: polyglot-js-trusted-test runs in /testbed

function refuse(what) {
  throw new Error(`trusted grading starts no program but the solution's own (node FILE ...): ${what}`);
}

function isNode(command) {
  return command === 'node' || command === process.execPath || path.basename(String(command)) === 'node';
}

function exerciseRelative(absolute, what) {
  const relative = path.relative(ROOT, absolute);
  if (relative.startsWith('..') || path.isAbsolute(relative)) refuse(`${what} outside the exercise: ${absolute}`);
  return relative.split(path.sep).join('/');
}

function decoded(base64, encoding) {
  const bytes = Buffer.from(base64, 'base64');
  return encoding && encoding !== 'buffer' ? bytes.toString(encoding) : bytes;
}

function spawnSync(command, args, options) {
  if (!Array.isArray(args)) [args, options] = [[], args];
  const settings = options || {};
  if (!isNode(command) || typeof args[0] !== 'string') refuse(`${command} ${args.join(' ')}`.trim());
  if (settings.shell || settings.input !== undefined) refuse('a shell or an input');
  const cwd = path.resolve(ROOT, settings.cwd === undefined ? '.' : String(settings.cwd));
  const file = exerciseRelative(path.resolve(cwd, args[0]), 'a program');
  const result = solutionProgram(file, args.slice(1).map(String), exerciseRelative(cwd, 'a directory'));
  const stdout = decoded(result.stdout, settings.encoding);
  const stderr = decoded(result.stderr, settings.encoding);
  const spawned = { pid: 0, output: [null, stdout, stderr], stdout, stderr, status: result.status, signal: result.signal };
  if (result.error) spawned.error = Object.assign(new Error(`spawnSync node ${result.error}`), { code: result.error });
  return spawned;
}

function execFileSync(command, args, options) {
  if (!Array.isArray(args)) [args, options] = [[], args];
  const result = spawnSync(command, args, options);
  if (result.error) throw result.error;
  if (result.status !== 0) {
    throw Object.assign(new Error(`Command failed: ${command} ${args.join(' ')}\n${result.stderr}`),
      { status: result.status, signal: result.signal, stdout: result.stdout, stderr: result.stderr, output: result.output });
  }
  return result.stdout;
}

const refused = (name) => () => refuse(`child_process.${name}`);
module.exports = {
  spawnSync, execFileSync,
  spawn: refused('spawn'), exec: refused('exec'), execSync: refused('execSync'),
  execFile: refused('execFile'), fork: refused('fork'),
};
