'use strict';
// The solution's program, run in a worker thread of the solution process (solver.js
// runProgram): `node FILE ARGS` as the tests start it, without starting any process. Its
// process.argv is [node, FILE, ...ARGS]; what it writes to process.stdout/stderr (console
// included) is kept here and handed to the solver through shared memory when it ends (its
// event loop empties, process.exit, or an uncaught error: exit 1 with the stack on stderr,
// as node prints it). The solution process cannot start programs (polyglot-noexec), so
// neither can the program.
const { workerData } = require('worker_threads');

const { file, args, shared } = workerData;
const header = new Int32Array(shared, 0, 4); // [done, exit code, stdout bytes, stderr bytes]
const room = new Uint8Array(shared, 16);
const kept = { out: [], err: [] };

function keep(which) {
  return (chunk, encoding, callback) => {
    kept[which].push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk), typeof encoding === 'string' ? encoding : 'utf8'));
    const done = typeof encoding === 'function' ? encoding : callback;
    if (typeof done === 'function') done();
    return true;
  };
}
process.stdout.write = keep('out');
process.stderr.write = keep('err');

let finished = false;
function finish(code) {
  if (finished) return;
  finished = true;
  const out = Buffer.concat(kept.out);
  const err = Buffer.concat(kept.err);
  const outBytes = Math.min(out.length, room.length);
  const errBytes = Math.min(err.length, room.length - outBytes);
  room.set(out.subarray(0, outBytes), 0);
  room.set(err.subarray(0, errBytes), outBytes);
  header[1] = code;
  header[2] = outBytes;
  header[3] = errBytes;
  Atomics.store(header, 0, 1);
  Atomics.notify(header, 0);
}

process.on('exit', (code) => finish(code));
process.on('uncaughtException', (error) => {
  process.stderr.write(`${error && error.stack ? error.stack : String(error)}\n`);
  finish(1);
  process.exit(1);
});
process.argv = [process.execPath, file, ...args];
require(file);
