'use strict';
// The reading side of a Channel (channel.js), in a worker thread so that the main thread can
// block in Atomics.wait while this thread keeps reading: frames (4-byte big-endian length +
// UTF-8 JSON) go to the main thread as strings on `port`, each followed by a bump of
// `signal[0]` (which wakes a blocked main thread). Once connected, the main thread gets {fd}
// and writes to the socket itself (one thread hop less per message). A frame over `maxFrame`
// bytes, a closed connection or a peer that never connects ends the channel: the main thread
// gets {closed}. The socket is left open (half-open when the peer ends) until the main thread
// ends this worker, so that the main thread never writes to a descriptor reused since.
const fs = require('fs');
const net = require('net');
const { workerData } = require('worker_threads');

const { mode, path, port, signal, maxFrame, connectMs } = workerData;
let socket = null;
let server = null;
let ended = false;

function wake() {
  Atomics.add(signal, 0, 1);
  Atomics.notify(signal, 0);
}

function end(reason) {
  if (ended) return;
  ended = true;
  port.postMessage({ closed: String(reason) });
  wake();
  if (socket) socket.pause();
  if (server) server.close();
}

function attach(connected) {
  socket = connected;
  let buffered = Buffer.alloc(0);
  socket.on('data', (chunk) => {
    buffered = buffered.length ? Buffer.concat([buffered, chunk]) : chunk;
    while (buffered.length >= 4 && !ended) {
      const size = buffered.readUInt32BE(0);
      if (size > maxFrame) return end(`the peer sent a ${size}-byte message (cap ${maxFrame})`);
      if (buffered.length < 4 + size) break;
      port.postMessage(buffered.toString('utf8', 4, 4 + size));
      buffered = buffered.subarray(4 + size);
      wake();
    }
    return undefined;
  });
  socket.on('end', () => end('the connection closed'));
  socket.on('close', () => end('the connection closed'));
  socket.on('error', (error) => end(error.message));
  port.postMessage({ fd: socket._handle.fd });
  wake();
}

const deadline = setTimeout(() => end(`no peer connected within ${connectMs} ms`), connectMs);

if (mode === 'listen') {
  try { fs.unlinkSync(path); } catch (error) { /* nothing to replace */ }
  server = net.createServer({ allowHalfOpen: true }, (connected) => {
    clearTimeout(deadline);
    server.close(); // exactly one peer: the solution process
    server = null;
    attach(connected);
  });
  server.on('error', (error) => end(error.message));
  server.listen(path, () => fs.chmodSync(path, 0o666));
} else {
  const tryConnect = () => {
    const attempt = net.connect({ path, allowHalfOpen: true });
    attempt.once('connect', () => {
      clearTimeout(deadline);
      attempt.removeAllListeners('error');
      attach(attempt);
    });
    attempt.once('error', () => { if (!ended) setTimeout(tryConnect, 10); });
  };
  tryConnect();
}
