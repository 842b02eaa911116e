"""The wire between the trusted test process and the solver: framing, values, requests.

One UNIX socket, one message at a time: a 4-byte big-endian length, then UTF-8 JSON. The
conversation is synchronous and re-entrant: a side waiting for its reply serves the peer's
requests in the meantime (a callback the solver runs while the test waits for its call).

Plain data is rebuilt from tags into exact builtin types: None, bool, int, float and str are
JSON scalars; {"t": [...]} tuple, {"f": [...]} frozenset, {"y": base64} bytes, {"c": [re, im]}
complex. The encoder checks `type(x) is ...`, so a subclass of a builtin never passes for
plain data. Anything else crosses as a HANDLE: {"h": id, "i": description} names an object
the SENDER keeps; {"o": id} names an object the RECEIVER keeps (a handle going home,
unwrapped to the original object). What a handle may do is each side's policy (trusted.py,
solver.py), not the wire's.

Lists, dicts and sets are SHARED, as in one process (a test that mutates a returned roster,
a solution that mutates the list it was given: each side sees the other's change). The
sender registers its container under an id of its own and sends {"L": [id, items]},
{"D": [id, [[k, v], ...]]} or {"S": [id, items]}; the receiver builds a copy of exact type and
keeps it under that id. When the same container crosses again it goes as {"L": [id]} (its
owner) or {"r": id} (the copy going home): the receiver hands out the object it already has,
so `is` holds as in one process. Contents follow at every control transfer: each message
carries `sync`, the tracked containers (lent or copies) whose shallow content changed since
they last crossed ([["m"|"y", id, content], ...]: "m" an id of the sender's, "y" one of the
receiver's), applied in place before anything else of the message is read. Change is told
by identity (a snapshot of the items, or of keys and values, held strongly), so no comparison
hook of either side runs. `drop` (applied after `sync`) names containers the sender stopped
tracking: nothing but its tracker referred to them (lists and dicts take no weak references),
so the peer's copy is now simply the peer's own. A message that cannot be built (a value
nested too deeply) still sends its sync, alone, as {"k": "s"}. A sync or drop naming an id
the receiver never saw, or a container crossing twice under one id, breaks the channel. A
container within itself is never dropped (its own snapshot refers to it): a cycle stays.
"""

from __future__ import annotations

import base64
import itertools
import json
import operator
import socket
import struct
import sys
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
_SHARED_TAGS = {list: "L", dict: "D", set: "S"}
_SHARED_TYPES = {tag: kind for kind, tag in _SHARED_TAGS.items()}
_FROZEN_TAGS = {tuple: "t", frozenset: "f"}
_FROZEN_TYPES = {tag: kind for kind, tag in _FROZEN_TAGS.items()}


class Shared:
    """One tracked container: ours, lent under our id, or our copy of the peer's (its id)."""

    __slots__ = ("obj", "mine", "id", "snapshot")

    def __init__(self, obj: Any, mine: bool, ident: int):
        self.obj, self.mine, self.id, self.snapshot = obj, mine, ident, ()


def _snapshot(obj: Any) -> tuple:
    """The shallow content, held strongly so that identity tells change (no __eq__ runs)."""
    return tuple(itertools.chain.from_iterable(obj.items())) if type(obj) is dict else tuple(obj)


def _unchanged(shared: Shared) -> bool:
    now = _snapshot(shared.obj)
    return len(now) == len(shared.snapshot) and all(map(operator.is_, now, shared.snapshot))


def _references(shared: Shared) -> int:
    return sys.getrefcount(shared.obj)


# What _references counts when the tracker alone holds the container (measured, not assumed).
_TRACKER_ONLY = _references(Shared([], True, 0))


class Codec:
    """Plain data by value, containers shared, everything else by handle; `describe` and
    `proxy` are the policy."""

    def __init__(self, describe: Callable[[Any], dict], proxy: Callable[[int, dict], Any],
                 home_id: Callable[[Any], int | None]):
        self.table = HandleTable()
        self.describe = describe  # our object -> its description for the peer
        self.proxy = proxy        # (peer id, description) -> our stand-in for the peer's object
        self.home_id = home_id    # our stand-in -> the peer's id, or None if it is not one
        self.proxies: dict[int, Any] = {}
        self.tracked: dict[int, Shared] = {}  # id(container) -> its entry
        self.mine: dict[int, Shared] = {}     # our id -> a container we lent
        self.theirs: dict[int, Shared] = {}   # the peer's id -> our copy
        self.last_id = 0

    # --- values ----------------------------------------------------------------------------

    def encode(self, value: Any) -> Any:
        """`value` as JSON; on failure (too deep, or an object `describe` refuses to lend) no
        container stays registered that the peer never got."""
        mark = self.last_id
        try:
            return self._encode(value, 0)
        except BaseException:
            for shared in [shared for shared in self.mine.values() if shared.id > mark]:
                self._forget(shared)
            raise

    def _encode(self, value: Any, depth: int) -> Any:
        if depth > 200:
            raise BridgeError("value nested too deeply")
        kind = type(value)
        if kind in _SCALARS:
            return value
        if kind in _SHARED_TAGS:
            return self._encode_shared(value, depth)
        if kind in _FROZEN_TAGS:
            return {_FROZEN_TAGS[kind]: [self._encode(item, depth + 1) for item in value]}
        if kind is bytes:
            return {"y": base64.b64encode(value).decode("ascii")}
        if kind is complex:
            return {"c": [value.real, value.imag]}
        home = self.home_id(value)
        if home is not None:
            return {"o": home}
        return {"h": self.table.export(value), "i": self.describe(value)}

    def _encode_shared(self, obj: Any, depth: int) -> dict:
        tag = _SHARED_TAGS[type(obj)]
        shared = self.tracked.get(id(obj))
        if shared is not None:  # the peer holds it: its content is current (sync)
            return {tag: [shared.id]} if shared.mine else {"r": shared.id}
        self.last_id += 1
        shared = self._track(obj, True, self.last_id)
        return {tag: [shared.id, self._content(shared, depth)]}

    def _content(self, shared: Shared, depth: int) -> list:
        shared.snapshot = _snapshot(shared.obj)
        items = [self._encode(item, depth + 1) for item in shared.snapshot]
        return [list(pair) for pair in zip(items[::2], items[1::2])] if type(shared.obj) is dict else items

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
        if tag == "r":
            return self._lent(body).obj
        if tag == "y" and type(body) is str:
            return base64.b64decode(body.encode("ascii"), validate=True)
        if tag == "c" and type(body) is list and len(body) == 2 and all(type(x) in (int, float) for x in body):
            return complex(body[0], body[1])
        if type(body) is not list:
            raise BridgeError("malformed value")
        if tag in _SHARED_TYPES:
            return self._decode_shared(_SHARED_TYPES[tag], body, depth)
        if tag not in _FROZEN_TYPES:
            raise BridgeError(f"unknown tag {tag!r}")
        items = [self.decode(item, depth + 1) for item in body]
        try:
            return _FROZEN_TYPES[tag](items)
        except TypeError as error:
            raise BridgeError(f"malformed frozenset: {error}") from None

    def _decode_shared(self, kind: type, body: list, depth: int) -> Any:
        if len(body) not in (1, 2) or type(body[0]) is not int:
            raise BridgeError("malformed container")
        if len(body) == 1:
            shared = self._copy(body[0])
            if type(shared.obj) is not kind:
                raise BridgeError(f"container {body[0]} is not a {kind.__name__}")
            return shared.obj
        if body[0] in self.theirs:
            raise BridgeError(f"container {body[0]} sent twice")
        shared = self._track(kind(), False, body[0])  # before its items: it may contain itself
        self._fill(shared, body[1], depth)
        return shared.obj

    def _fill(self, shared: Shared, content: Any, depth: int) -> None:
        """Make our container hold `content`, in place (whoever holds it sees the change)."""
        if type(content) is not list:
            raise BridgeError("malformed container content")
        obj = shared.obj
        try:
            if type(obj) is dict:
                if not all(type(pair) is list and len(pair) == 2 for pair in content):
                    raise BridgeError("malformed dict")
                fresh = {self.decode(k, depth + 1): self.decode(v, depth + 1) for k, v in content}
                obj.clear()
                obj.update(fresh)
            elif type(obj) is set:
                fresh = {self.decode(item, depth + 1) for item in content}
                obj.clear()
                obj.update(fresh)
            else:
                obj[:] = [self.decode(item, depth + 1) for item in content]
        except TypeError as error:  # an unhashable key or member
            raise BridgeError(f"malformed container content: {error}") from None
        shared.snapshot = _snapshot(obj)

    # --- sharing ---------------------------------------------------------------------------

    def outgoing(self) -> tuple[list, list]:
        """(drop, sync) for the next message: containers only the tracker still holds, and
        the shallow content of every other tracked container that changed since it crossed."""
        drop, sync = [], []
        for shared in list(self.tracked.values()):
            name = "m" if shared.mine else "y"
            if not _unchanged(shared):  # even when dropped: the peer's copy must hold the change
                sync.append([name, shared.id, self._content(shared, 0)])
            if _references(shared) <= _TRACKER_ONLY:
                drop.append([name, shared.id])
                self._forget(shared)
        return drop, sync

    def incoming(self, drop: Any, sync: Any) -> None:
        """Apply the peer's drop and sync: only to containers it lent us or we lent it."""
        if type(drop) is not list or type(sync) is not list:
            raise BridgeError("malformed sync")
        for entry in sync:
            if type(entry) is not list or len(entry) != 3:
                raise BridgeError("malformed sync")
            self._fill(self._named(entry[0], entry[1]), entry[2], 0)
        for entry in drop:
            if type(entry) is not list or len(entry) != 2:
                raise BridgeError("malformed drop")
            self._forget(self._named(*entry))

    def _named(self, namespace: Any, ident: Any) -> Shared:
        """A container the peer names: "m" its id (our copy), "y" our id (lent to it)."""
        if namespace == "m":
            return self._copy(ident)
        if namespace == "y":
            return self._lent(ident)
        raise BridgeError(f"malformed container namespace {namespace!r}")

    def _copy(self, ident: Any) -> Shared:
        shared = self.theirs.get(ident) if type(ident) is int else None
        if shared is None:
            raise BridgeError(f"unknown container {ident!r} of the peer")
        return shared

    def _lent(self, ident: Any) -> Shared:
        shared = self.mine.get(ident) if type(ident) is int else None
        if shared is None:
            raise BridgeError(f"unknown container {ident!r}: never lent")
        return shared

    def _track(self, obj: Any, mine: bool, ident: int) -> Shared:
        shared = Shared(obj, mine, ident)
        self.tracked[id(obj)] = shared
        (self.mine if mine else self.theirs)[ident] = shared
        return shared

    def _forget(self, shared: Shared) -> None:
        del self.tracked[id(shared.obj)]
        del (self.mine if shared.mine else self.theirs)[shared.id]
        shared.obj = shared.snapshot = None  # what it held may now be dropped in the same pass


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

    def request(self, op: str, values: dict[str, Any], **fields: Any) -> Any:
        """Send a request (`values` encoded, `fields` as they are) and return the decoded
        result; a peer error raises RemoteError."""
        self._check()
        self.next_id += 1
        mine = self.next_id
        self._send(lambda: {"k": "q", "id": mine, "op": op, **fields,
                            **{key: self.codec.encode(value) for key, value in values.items()}})
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
        ident = message.get("id")
        try:
            result = self.serve(message)
            self._send(lambda: {"k": "r", "id": ident, "ok": self.codec.encode(result)})
        except BaseException as error:  # the peer gets every failure of its request
            if self.broken:
                raise
            self._send(lambda failure=error: {"k": "r", "id": ident, "err": self.describe_error(failure)})

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

    def _send(self, build: Callable[[], dict]) -> None:
        """Send what `build` makes, with the sync computed first (the peer applies it first).
        If `build` fails, the sync still goes (alone, as "s") and the failure is raised."""
        try:
            drop, sync = self.codec.outgoing()
        except BridgeError as error:  # half a sync computed: the two sides could not agree again
            self._break(f"cannot send what changed: {error}")
        try:
            message = build()
        except BaseException:
            self._write({"k": "s", "drop": drop, "sync": sync})
            raise
        if drop or sync:
            message.update(drop=drop, sync=sync)
        self._write(message)

    def _write(self, message: dict) -> None:
        body = json.dumps(message, separators=(",", ":")).encode("utf-8", "surrogatepass")
        if len(body) > MAX_MESSAGE:
            self._break(f"a message of {len(body)} bytes exceeds the {MAX_MESSAGE}-byte cap")
        try:
            self.sock.sendall(_LENGTH.pack(len(body)) + body)
        except OSError as error:
            self._break(f"send failed: {error}")

    def _receive(self) -> dict:
        """The next request or reply, after applying every sync that came with or before it."""
        while True:
            message = self._read_message()
            try:
                self.codec.incoming(message.get("drop", []), message.get("sync", []))
            except BridgeError as error:
                self._break(str(error))
            if message.get("k") != "s":
                return message

    def _read_message(self) -> dict:
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
