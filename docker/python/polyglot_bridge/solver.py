"""The solver: the only process that loads solution code (uid 10002, cwd /solution).

    python3 -I -m polyglot_bridge.solver SOCKET

It connects to the trusted test process, imports solution modules when asked, keeps the
objects it lends out as handles, and answers requests until the connection closes. Nothing
here is trusted: the test process checks every answer (see trusted.py). Objects the tests
pass in arrive as ReverseProxy handles; the test process decides what they answer.
"""

from __future__ import annotations

import builtins
import importlib
import operator
import os
import socket
import sys
import time
from typing import Any

from .wire import Channel, Codec, RemoteError, builtin_base, exception_description

# Dunders the test process may ask of a solution object (it chooses which to use).
UNARY = {"__len__": len, "__bool__": bool, "__iter__": iter, "__next__": next, "__str__": str,
         "__repr__": repr, "__hash__": hash, "__int__": int, "__float__": float,
         "__index__": operator.index, "__abs__": abs, "__neg__": operator.neg, "__pos__": operator.pos,
         "__enter__": lambda obj: type(obj).__enter__(obj)}
BINARY = {"__eq__": operator.eq, "__ne__": operator.ne, "__lt__": operator.lt, "__le__": operator.le,
          "__gt__": operator.gt, "__ge__": operator.ge, "__add__": operator.add, "__sub__": operator.sub,
          "__mul__": operator.mul, "__truediv__": operator.truediv, "__floordiv__": operator.floordiv,
          "__mod__": operator.mod, "__pow__": operator.pow, "__and__": operator.and_, "__or__": operator.or_,
          "__xor__": operator.xor, "__lshift__": operator.lshift, "__rshift__": operator.rshift,
          "__matmul__": operator.matmul, "__getitem__": operator.getitem,
          "__contains__": lambda obj, item: item in obj, "__delitem__": operator.delitem}
OTHER = {"__setitem__": operator.setitem, "__exit__": lambda obj, *args: type(obj).__exit__(obj, *args)}
DUNDERS = tuple(UNARY) + tuple(BINARY) + tuple(OTHER)
CONNECT_SECONDS = 30


def describe(obj: Any) -> dict:
    """What the test process needs to build its stand-in: kind, names, the dunders it has."""
    kind = type(obj)
    if isinstance(obj, type(sys)):
        return {"k": "module", "n": obj.__name__, "m": obj.__name__}
    if isinstance(obj, type) and issubclass(obj, BaseException):
        return {"k": "exception_class", "n": obj.__qualname__, "m": obj.__module__, "b": builtin_base(obj).__name__}
    name = getattr(obj, "__qualname__", None) if isinstance(obj, type) or callable(obj) else None
    return {"k": "class" if isinstance(obj, type) else "object",
            "n": name if isinstance(name, str) else kind.__qualname__,
            "m": str(getattr(kind, "__module__", "")),
            "d": [dunder for dunder in DUNDERS if _defines(kind, dunder)],
            "c": callable(obj),
            "u": kind.__hash__ is None}


def _defines(kind: type, dunder: str) -> bool:
    found = getattr(kind, dunder, None)
    if found is None:
        return False
    if dunder == "__hash__":
        return found is not object.__hash__
    return found is not getattr(object, dunder, None)


class ReverseProxy:
    """An object the tests passed in; every use is a request the test process may refuse."""

    __slots__ = ("_polyglot_id",)

    def __init__(self, handle: int):
        object.__setattr__(self, "_polyglot_id", handle)

    def __getattr__(self, name: str) -> Any:
        return BRIDGE.ask("getattr", self, name=name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return BRIDGE.ask("call", self, args=args, kwargs=kwargs)

    def _dunder(self, name: str, *args: Any) -> Any:
        return BRIDGE.ask("dunder", self, name=name, args=args)

    def __iter__(self): return self._dunder("__iter__")
    def __next__(self): return self._dunder("__next__")
    def __len__(self): return self._dunder("__len__")
    def __bool__(self): return self._dunder("__bool__")
    def __getitem__(self, key): return self._dunder("__getitem__", key)
    def __contains__(self, item): return self._dunder("__contains__", item)
    def __enter__(self): return self._dunder("__enter__")
    def __exit__(self, *args): return self._dunder("__exit__", *args)
    def __str__(self): return self._dunder("__str__")
    def __repr__(self): return self._dunder("__repr__")


class SolverBridge:
    def __init__(self) -> None:
        self.codec = Codec(describe, lambda handle, info: ReverseProxy(handle), self._home_id)
        self.channel: Channel | None = None
        self.standins: dict[tuple[str, str], type] = {}

    def _home_id(self, obj: Any) -> int | None:
        if type(obj) is ReverseProxy:
            return object.__getattribute__(obj, "_polyglot_id")
        home = getattr(obj, "__polyglot_home__", None) if isinstance(obj, BaseException) else None
        return home if type(home) is int else None

    def ask(self, op: str, target: ReverseProxy, **fields: Any) -> Any:
        values = {key: value for key, value in fields.items() if key in ("args", "kwargs")}
        plain = {key: value for key, value in fields.items() if key not in ("args", "kwargs")}
        try:
            return self.channel.request(op, values, target=self._home_id(target), **plain)
        except RemoteError as error:
            raise self.rebuild(error.description) from None

    def rebuild(self, description: dict) -> BaseException:
        """A test-side exception as a local one of the same builtin base, that goes home intact."""
        base = getattr(builtins, str(description.get("b")), Exception)
        if not (isinstance(base, type) and issubclass(base, BaseException)):
            base = Exception
        key = (str(description.get("m")), str(description.get("q")))
        kind = base if key == ("builtins", base.__name__) else self.standins.setdefault(
            key, type(key[1].rsplit(".", 1)[-1], (base,), {"__module__": key[0], "__qualname__": key[1]}))
        try:
            args = self.codec.decode(description.get("a", {"t": []}))
        except Exception:
            args = ()
        error = kind(*args) if type(args) is tuple else kind()
        error.__polyglot_home__ = description.get("o")
        return error

    def serve(self, message: dict) -> Any:
        op = message.get("op")
        if op == "import":
            return importlib.import_module(str(message.get("name")))
        target = self.codec.table.get(message.get("target"))
        if op == "getattr":
            return getattr(target, str(message.get("name")))
        if op == "setattr":
            return setattr(target, str(message.get("name")), self.codec.decode(message.get("value")))
        if op == "delattr":
            return delattr(target, str(message.get("name")))
        args = self.codec.decode(message.get("args", {"t": []}))
        if op == "call":
            return target(*args, **(self.codec.decode(message["kwargs"]) if "kwargs" in message else {}))
        if op == "dunder":
            return self._dunder(target, str(message.get("name")), args)
        raise ValueError(f"unknown request {op!r}")

    @staticmethod
    def _dunder(target: Any, name: str, args: tuple) -> Any:
        table = {**{key: (0, fn) for key, fn in UNARY.items()}, **{key: (1, fn) for key, fn in BINARY.items()},
                 "__setitem__": (2, OTHER["__setitem__"]), "__exit__": (3, OTHER["__exit__"])}
        arity, function = table[name]
        if name != "__exit__" and len(args) != arity:
            raise TypeError(f"{name} takes {arity} argument(s)")
        return function(target, *args)


BRIDGE = SolverBridge()


def connect(path: str) -> socket.socket:
    deadline = time.monotonic() + CONNECT_SECONDS
    while True:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.connect(path)
            return sock
        except OSError:
            sock.close()
            if time.monotonic() > deadline:
                raise
            time.sleep(0.02)


def main(argv: list[str]) -> int:
    sys.path.insert(0, os.getcwd())  # -I left the working directory (the solution) off the path
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10000))
    BRIDGE.channel = Channel(connect(argv[1]), BRIDGE.serve, BRIDGE.codec,
                             lambda error: exception_description(error, BRIDGE.codec))
    BRIDGE.channel.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
