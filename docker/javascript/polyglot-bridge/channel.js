'use strict';
// A synchronous, re-entrant message channel between the trusted test process and the solution
// process over one Unix socket. `call` blocks the calling (main) thread until the peer answers,
// serving the peer's own requests meanwhile (a test's callback called by the solution while the
// test waits on the solution, and so on, to any depth); `notify` sends without waiting. The
// socket is read in a worker thread (channel-worker.js): Node has no blocking socket read, but
// a main thread may block in Atomics.wait and pull the worker's messages with
// receiveMessageOnPort; it writes to the socket itself (fs.writeSync on its descriptor). Requests that arrive while the main thread is idle (a promise settled
// later, a timer in the solution calling a callback) are served from the event loop.
const fs = require('fs');
const path = require('path');
const { MessageChannel, Worker, receiveMessageOnPort } = require('worker_threads');

const MAX_FRAME = 16 * 1024 * 1024;

class ChannelClosed extends Error {}

class Channel {
  // mode: 'listen' (the test process) or 'connect' (the solution process); serve(message)
  // answers a request synchronously (returns the reply value or throws); onNote(message)
  // takes a one-way message; keepAlive: whether the channel alone keeps the process running;
  // sync: {changes() -> entries, apply(entries)}, the shared containers (shared.js): every
  // message sent carries the changes, every message received has them written in first.
  constructor({ mode, socketPath, serve, onNote, encodeError, callTimeoutMs, connectMs = 30000, keepAlive = false, sync = null }) {
    this.serve = serve;
    this.sync = sync;
    this.encodeError = encodeError;
    this.onNote = onNote;
    this.callTimeoutMs = callTimeoutMs;
    this.nextId = 1;
    this.closedReason = null;
    this.onClose = () => {};
    this.connectMs = connectMs;
    this.fd = null;
    this.signal = new Int32Array(new SharedArrayBuffer(8)); // [0]: messages from the worker; [1]: sleeping
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    this.worker = new Worker(path.join(__dirname, 'channel-worker.js'), {
      workerData: { mode, path: socketPath, port: port2, signal: this.signal, maxFrame: MAX_FRAME, connectMs },
      transferList: [port2],
    });
    this.port.on('message', (message) => this.guard(() => this.dispatch(message, null)));
    if (!keepAlive) {
      this.worker.unref();
      this.port.unref();
    }
  }

  get closed() {
    return this.closedReason !== null;
  }

  send(message) {
    const changes = this.sync ? this.sync.changes() : [];
    const body = Buffer.from(JSON.stringify(changes.length ? { ...message, sync: changes } : message), 'utf8');
    if (body.length > MAX_FRAME) throw new RangeError(`a message over ${MAX_FRAME} bytes cannot cross`);
    const frame = Buffer.alloc(4 + body.length);
    frame.writeUInt32BE(body.length, 0);
    body.copy(frame, 4);
    this.writeAll(this.connected(), frame);
  }

  // The socket's file descriptor, once the worker has a peer (blocks until then).
  connected() {
    const deadline = Date.now() + this.connectMs;
    while (this.fd === null) {
      this.throwIfClosed();
      const seen = Atomics.load(this.signal, 0);
      const received = receiveMessageOnPort(this.port);
      if (received) this.dispatch(received.message, null);
      else if (Date.now() > deadline) this.close('no peer connected');
      else Atomics.wait(this.signal, 0, seen, 100);
    }
    return this.fd;
  }

  // A non-blocking socket: a full buffer (EAGAIN) is waited out, up to the call timeout.
  writeAll(fd, frame) {
    const deadline = Date.now() + this.callTimeoutMs;
    let offset = 0;
    while (offset < frame.length) {
      this.throwIfClosed();
      try {
        offset += fs.writeSync(fd, frame, offset);
      } catch (error) {
        if (error.code !== 'EAGAIN') this.close(`the connection failed (${error.code})`);
        else if (Date.now() > deadline) this.close('the peer stopped reading');
        else Atomics.wait(this.signal, 1, 0, 1);
      }
    }
  }

  throwIfClosed() {
    if (this.closed) throw new ChannelClosed(`the solution process is gone (${this.closedReason})`);
  }

  notify(message) {
    if (!this.closed) this.send({ k: 'note', ...message });
  }

  // Sends a request and blocks until its reply; returns {ok, v} or {ok: false, e} as sent.
  call(message) {
    this.throwIfClosed();
    const id = this.nextId++;
    this.send({ k: 'req', id, ...message });
    const deadline = Date.now() + this.callTimeoutMs;
    for (;;) {
      const seen = Atomics.load(this.signal, 0);
      const received = receiveMessageOnPort(this.port);
      if (received) {
        const reply = this.dispatch(received.message, id);
        if (reply) return reply;
        continue;
      }
      this.throwIfClosed();
      const left = deadline - Date.now();
      if (left <= 0) {
        this.close(`no answer within ${this.callTimeoutMs} ms`);
        throw new ChannelClosed(`the solution process did not answer within ${this.callTimeoutMs} ms`);
      }
      Atomics.wait(this.signal, 0, seen, Math.min(left, 1000));
    }
  }

  // One incoming message; returns it when it is the reply awaited by `call` (id `awaited`).
  dispatch(raw, awaited) {
    if (this.closed) return null;
    if (typeof raw !== 'string') {
      if (raw && Number.isInteger(raw.fd) && this.fd === null) {
        this.fd = raw.fd;
        return null;
      }
      return this.close(raw && raw.closed ? String(raw.closed) : 'channel closed');
    }
    let message;
    try {
      message = JSON.parse(raw);
    } catch (error) {
      return this.close('the peer sent a message that is not JSON');
    }
    if (message === null || typeof message !== 'object') return this.close('the peer sent a malformed message');
    if (message.sync !== undefined) {
      if (!this.sync) return this.close('the peer sent containers nobody shares');
      try {
        this.sync.apply(message.sync);
      } catch (error) {
        return this.close(`the peer sent a malformed sync: ${error && error.message}`);
      }
    }
    if (message.k === 'res') {
      // Calls nest, so the only reply that may come is the innermost awaited one.
      return message.id === awaited ? message : this.close('the peer answered a call nobody waits for');
    }
    if (message.k === 'note') {
      this.guard(() => this.onNote(message));
      return null;
    }
    if (message.k === 'req') {
      let reply;
      try {
        reply = { k: 'res', id: message.id, ok: true, v: this.serve(message) };
      } catch (error) {
        if (error instanceof ChannelClosed) throw error;
        reply = { k: 'res', id: message.id, ok: false, e: this.encodeError(error) };
      }
      if (!this.closed) this.send(reply);
      return null;
    }
    return this.close('the peer sent a message of no known kind');
  }

  guard(action) {
    try {
      action();
    } catch (error) {
      if (!(error instanceof ChannelClosed)) this.close(`a message could not be handled: ${error && error.message}`);
    }
  }

  close(reason) {
    if (this.closed) return null;
    this.closedReason = reason;
    this.port.close();
    this.worker.terminate();
    this.onClose(reason);
    return null;
  }
}

module.exports = { Channel, ChannelClosed, MAX_FRAME };
