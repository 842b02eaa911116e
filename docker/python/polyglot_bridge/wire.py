"""The wire between the trusted test process and the solver: framing, values, requests.

One UNIX socket, one message at a time: a 4-byte big-endian length, then UTF-8 JSON. The
conversation is synchronous and re-entrant: a side waiting for its reply serves the peer's
requests in the meantime (a callback the solver runs while the test waits for its call).

Values cross BY VALUE only as plain data, rebuilt from tags into exact builtin types:
None, bool, int, float and str are JSON scalars; {"l": [...]} list, {"t": [...]} tuple,
{"d": [[k, v], ...]} dict, {"s": [...]} set, {"f": [...]} frozenset, {"y": base64} bytes,
{"c": [re, im]} complex. The encoder checks `type(x) is ...`, so a subclass of a builtin
never passes for plain data. Anything else crosses as a HANDLE: {"h": id, "i": description}
names an object the SENDER keeps; {"o": id} names an object the RECEIVER keeps (a handle
going home, unwrapped to the original object). What a handle may do is each side's policy
(trusted.py, solver.py), not the wire's.
"""

from __future__ import annotations

import base64
import json
import socket
import struct
from typing import Any, Callable

MAX_MESSAGE = 16 * 1024 * 1024  # bytes of one message; more is a protocol violation
_LENGTH = struct.Struct(">I")


class BridgeError(Exception):
    """The channel broke: the peer died, sent too much, or broke the protocol."""


class RemoteError(Exception):
    """An exception the peer raised, carried as its description until the policy rebuilds it."""

    def __init__(self, description: dict):
        super().__init__(description.get("q", "?"))
        self.description = description


class HandleTable:
    """Objects this side lends to the peer, by id; the same object keeps its id."""

    def __init__(self) -> None:
        self.objects: dict[int, Any] = {}
        self.ids: dict[int, int] = {}  # id(obj) -> handle id

    def export(self, obj: Any) -> int:
        handle = self.ids.get(id(obj))
        if handle is None:
            handle = len(self.objects) + 1
            self.objects[handle] = obj  # kept alive: the id of a dead object could be reused
            self.ids[id(obj)] = handle
        return handle

    def get(self, handle: int) -> Any:
        try:
            return self.objects[handle]
        except (KeyError, TypeError):
            raise BridgeError(f"unknown handle {handle!r}") from None


_SCALARS = (type(None), bool, int, float, str)


class Codec:
    """Plain data by value, everything else by handle; `describe` and `proxy` are the policy."""

    def __init__(self, describe: Callable[[Any], dict], proxy: Callable[[int, dict], Any],
                 home_id: Callable[[Any], int | None]):
        self.table = HandleTable()
        self.describe = describe  # our object -> its description for the peer
        self.proxy = proxy        # (peer id, description) -> our stand-in for the peer's object
        self.home_id = home_id    # our stand-in -> the peer's id, or None if it is not one
        self.proxies: dict[int, Any] = {}

    def encode(self, value: Any, depth: int = 0) -> Any:
        if depth > 200:
            raise BridgeError("value nested too deeply")
        kind = type(value)
        if kind in _SCALARS:
            return value
        if kind is list or kind is tuple or kind is set or kind is frozenset:
            tag = {list: "l", tuple: "t", set: "s", frozenset: "f"}[kind]
            return {tag: [self.encode(item, depth + 1) for item in value]}
        if kind is dict:
            return {"d": [[self.encode(k, depth + 1), self.encode(v, depth + 1)] for k, v in value.items()]}
        if kind is bytes:
            return {"y": base64.b64encode(value).decode("ascii")}
        if kind is complex:
            return {"c": [value.real, value.imag]}
        home = self.home_id(value)
        if home is not None:
            return {"o": home}
        return {"h": self.table.export(value), "i": self.describe(value)}

    def decode(self, data: Any, depth: int = 0) -> Any:
        if depth > 200:
            raise BridgeError("value nested too deeply")
        if data is None or type(data) in (bool, int, float, str):
            return data
        if type(data) is not dict or len(data) not in (1, 2):
            raise BridgeError("malformed value")
        if "h" in data:
            handle = data["h"]
            if type(handle) is not int or type(data.get("i")) is not dict:
                raise BridgeError("malformed handle")
            if handle not in self.proxies:
                self.proxies[handle] = self.proxy(handle, data["i"])
            return self.proxies[handle]
        (tag, body), = data.items()
        if tag == "o":
            return self.table.get(body)
        if tag == "y" and type(body) is str:
            return base64.b64decode(body.encode("ascii"), validate=True)
        if tag == "c" and type(body) is list and len(body) == 2 and all(type(x) in (int, float) for x in body):
            return complex(body[0], body[1])
        if type(body) is not list:
            raise BridgeError("malformed value")
        if tag == "d":
            if not all(type(pair) is list and len(pair) == 2 for pair in body):
                raise BridgeError("malformed dict")
            return {self.decode(k, depth + 1): self.decode(v, depth + 1) for k, v in body}
        items = [self.decode(item, depth + 1) for item in body]
        builders = {"l": list, "t": tuple, "s": set, "f": frozenset}
        if tag not in builders:
            raise BridgeError(f"unknown tag {tag!r}")
        return builders[tag](items)


class Channel:
    """Synchronous request/reply over one socket, serving the peer while it waits."""

    def __init__(self, sock: socket.socket, serve: Callable[[dict], Any], codec: Codec,
                 describe_error: Callable[[BaseException], dict]):
        self.sock = sock
        self.serve = serve                  # request -> result (raises to reply with an error)
        self.codec = codec
        self.describe_error = describe_error
        self.next_id = 0
        self.broken: str | None = None

    def request(self, op: str, **fields: Any) -> Any:
        """Send a request and return the decoded result; a peer error raises RemoteError."""
        self._check()
        self.next_id += 1
        mine = self.next_id
        self._send({"k": "q", "id": mine, "op": op, **fields})
        while True:
            message = self._receive()
            if message.get("k") == "q":
                self._answer(message)
                continue
            if message.get("k") != "r" or message.get("id") != mine:
                self._break("reply out of order")
            if "err" in message:
                if type(message["err"]) is not dict:
                    self._break("malformed error")
                raise RemoteError(message["err"])
            return self.codec.decode(message.get("ok"))

    def serve_forever(self) -> None:
        """The solver's main loop: answer requests until the peer hangs up."""
        while True:
            try:
                message = self._receive()
            except BridgeError:
                return
            if message.get("k") != "q":
                return
            self._answer(message)

    def _answer(self, message: dict) -> None:
        try:
            reply = {"k": "r", "id": message.get("id"), "ok": self.codec.encode(self.serve(message))}
        except BaseException as error:  # the peer gets every failure of its request
            if self.broken:
                raise
            reply = {"k": "r", "id": message.get("id"), "err": self.describe_error(error)}
        self._send(reply)

    def _check(self) -> None:
        if self.broken:
            raise BridgeError(f"the bridge to the solution process is broken: {self.broken}")

    def _break(self, why: str) -> None:
        self.broken = why
        try:
            self.sock.close()
        except OSError:
            pass
        raise BridgeError(f"the bridge to the solution process is broken: {why}")

    def _send(self, message: dict) -> None:
        body = json.dumps(message, separators=(",", ":")).encode("utf-8", "surrogatepass")
        if len(body) > MAX_MESSAGE:
            self._break(f"a message of {len(body)} bytes exceeds the {MAX_MESSAGE}-byte cap")
        try:
            self.sock.sendall(_LENGTH.pack(len(body)) + body)
        except OSError as error:
            self._break(f"send failed: {error}")

    def _receive(self) -> dict:
        self._check()
        (length,) = _LENGTH.unpack(self._read_exactly(_LENGTH.size))
        if length > MAX_MESSAGE:
            self._break(f"the peer announced a {length}-byte message (cap {MAX_MESSAGE})")
        try:
            message = json.loads(self._read_exactly(length).decode("utf-8", "surrogatepass"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            self._break("a message is not JSON")
        if type(message) is not dict:
            self._break("a message is not an object")
        return message

    def _read_exactly(self, size: int) -> bytes:
        chunks, remaining = [], size
        while remaining:
            try:
                chunk = self.sock.recv(min(remaining, 1 << 20))
            except OSError as error:
                self._break(f"receive failed: {error}")
            if not chunk:
                self._break("the solution process closed the connection (it exited or died)")
            chunks.append(chunk)
            remaining -= len(chunk)
        return b"".join(chunks)


def exception_description(error: BaseException, codec: Codec) -> dict:
    """An exception as {q: qualname, m: module, b: builtin base, a: args, o: home id}."""
    kind = type(error)
    home = codec.home_id(error)
    description = {"q": kind.__qualname__, "m": kind.__module__, "b": builtin_base(kind).__name__}
    if home is not None:
        description["o"] = home
    try:
        description["a"] = codec.encode(tuple(error.args))
    except BridgeError:
        description["a"] = codec.encode((str(error),))
    return description


def builtin_base(kind: type) -> type:
    """The first builtin exception class in `kind`'s MRO (Exception when none fits)."""
    import builtins
    for base in kind.__mro__:
        if getattr(builtins, base.__name__, None) is base and issubclass(base, Exception):
            return base
    return Exception
