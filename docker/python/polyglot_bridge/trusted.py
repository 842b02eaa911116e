"""The trusted side: solution modules as proxies whose every answer the test process checks.

Rules (the README's "What a verdict means" states them as guarantees):
- plain data arrives as exact builtin types (wire.py); anything else is a Handle;
- lists, dicts and sets are shared with the solver as in one process (wire.py): the solver
  may change those the tests passed in, at any point it holds control, exactly as a solution
  sharing the process could, Handles of its objects included. What it puts there is decoded
  like any answer (exact builtins or Handles): no solution code runs here, and comparisons
  with a Handle are still decided by the rules below (a test that hands its expected value
  to the solution compares with what the solution made of it, as in one process);
- a Handle never equals a value that is not a Handle (its == answers NotImplemented, so
  Python falls back to identity: False), and no operator between a Handle and a plain
  value reaches the solver (ordering, arithmetic: TypeError; `value in handle` is decided
  here, over what the handle yields);
- handle-to-handle operators, len, bool, iteration, str/repr, ... are the solution's own,
  asked only when the solution's class defines them, and answers must have the type Python
  requires (bool, int, str), else TypeError;
- attributes starting with "_" are never asked (framework hooks: pytest's, mock's);
- exceptions come back as the same builtin type, or as a local stand-in class (one per
  solution exception class) deriving from its nearest builtin base;
- the solver may use what the tests pass in only through calls, public attributes and a few
  protocol dunders (iteration, len, item access, with); everything else is refused;
- what the test process lends (a handle of its own) is never what reaches the process itself:
  a module, a frame, code, a traceback, a coroutine or async generator, a cell, nor a builtin
  that runs, finds or reads code or objects by name (exec, eval, compile, open, getattr, ...),
  and a mock is never reconfigured by the solver (configure_mock and the like write its
  private attributes). Red team 17 went from a mock the tests patched in, through
  `configure_mock(_spec_asyncs=...)`, an AsyncMock's coroutine, its `cr_frame.f_builtins`, to
  `exec` here, and replaced unittest's `fail`.
"""

from __future__ import annotations

import builtins
import os
import socket
import types
import sys
from typing import Any, Callable

from .wire import BridgeError, Channel, Codec, RemoteError, builtin_base, exception_description

ACCEPT_SECONDS = 60
# What the test process never lends the solver (lending_refusal): the objects through which
# its own state, code and builtins are reached, and the builtins that run, find or read code
# or attributes by name (a private attribute through getattr, the tests' file through open).
NEVER_LENT_TYPES = (types.ModuleType, types.FrameType, types.CodeType, types.TracebackType, types.CoroutineType,
                    types.AsyncGeneratorType, types.CellType)
NEVER_LENT_BUILTINS = {id(getattr(builtins, name)) for name in (
    "exec", "eval", "compile", "open", "__import__", "getattr", "setattr", "delattr", "globals", "locals", "vars",
    "breakpoint", "input", "help", "exit", "quit", "__build_class__")
    if hasattr(builtins, name)}
# A mock's methods that write its private attributes (its spec, its children).
MOCK_CONFIGURATION = frozenset({"configure_mock", "attach_mock", "mock_add_spec"})


def _is_mock(obj: Any) -> bool:
    mock = sys.modules.get("unittest.mock")  # not imported: nothing here is a mock
    return mock is not None and isinstance(obj, mock.NonCallableMock)
BINARY = ("__lt__", "__le__", "__gt__", "__ge__", "__add__", "__sub__", "__mul__", "__truediv__",
          "__floordiv__", "__mod__", "__pow__", "__and__", "__or__", "__xor__", "__lshift__", "__rshift__",
          "__matmul__")
# dunder -> the type Python requires of its result (None: any value)
UNARY_RESULT = {"__len__": int, "__bool__": bool, "__str__": str, "__repr__": str, "__hash__": int,
                "__int__": int, "__float__": float, "__index__": int, "__abs__": None, "__neg__": None,
                "__pos__": None, "__iter__": None, "__next__": None, "__enter__": None}
SERVED_DUNDERS = {"__iter__": iter, "__next__": next, "__len__": len, "__bool__": bool, "__str__": str,
                  "__repr__": repr, "__getitem__": lambda obj, key: obj[key],
                  "__contains__": lambda obj, item: item in obj,
                  "__enter__": lambda obj: type(obj).__enter__(obj),
                  "__exit__": lambda obj, *args: type(obj).__exit__(obj, *args)}


class Events:
    """What the trusted side refused, by name (the harness's Reason values), for bridge.json."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}

    def note(self, what: str) -> None:
        self.counts[what] = self.counts.get(what, 0) + 1


EVENTS = Events()


class Handle:
    """A solution object; subclasses per set of dunders the solution's class defines."""

    __slots__ = ("_polyglot_id", "_polyglot_info", "__weakref__")
    _polyglot_dunders: frozenset[str] = frozenset()

    def _ask(self, name: str, *args: Any) -> Any:
        return BRIDGE.ask("dunder", self, name=name, args=args)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return BRIDGE.ask("getattr", self, name=name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name.startswith("_"):
            raise AttributeError(f"{name}: private attributes of solution objects are not reachable")
        BRIDGE.ask("setattr", self, name=name, value=value)

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{name}: solution objects' attributes are deleted by the solution only")

    def __eq__(self, other: Any) -> Any:
        if not isinstance(other, Handle):
            if other is not None:  # None: a solution that returned nothing, no claim of equality
                EVENTS.note("handle_compared_with_value")
            return NotImplemented
        if "__eq__" in self._polyglot_dunders:
            return _typed(self._ask("__eq__", other), bool, "__eq__")
        return self is other

    def __ne__(self, other: Any) -> Any:
        if not isinstance(other, Handle):
            if other is not None:
                EVENTS.note("handle_compared_with_value")
            return NotImplemented
        if "__ne__" in self._polyglot_dunders:
            return _typed(self._ask("__ne__", other), bool, "__ne__")
        return not self.__eq__(other)

    def __hash__(self) -> int:
        if "__hash__" in self._polyglot_dunders:
            return _typed(self._ask("__hash__"), int, "__hash__")
        if self._polyglot_info.get("u"):
            raise TypeError(f"unhashable type: '{type(self).__name__}'")
        return object.__hash__(self)

    def __str__(self) -> str:
        return _typed(self._ask("__str__"), str, "__str__")

    def __repr__(self) -> str:
        return _typed(self._ask("__repr__"), str, "__repr__")


def _typed(value: Any, required: type, dunder: str) -> Any:
    if type(value) is not required:
        EVENTS.note("dunder_result_not_plain")
        raise TypeError(f"{dunder} of a solution object returned {type(value).__name__}, not {required.__name__}")
    return value


def _binary(name: str) -> Callable[[Handle, Any], Any]:
    def operator(self: Handle, other: Any) -> Any:
        if not isinstance(other, Handle):
            EVENTS.note("handle_operator_with_value")
            return NotImplemented
        return self._ask(name, other)
    operator.__name__ = name
    return operator


def _unary(name: str) -> Callable[[Handle], Any]:
    required = UNARY_RESULT[name]

    def operator(self: Handle) -> Any:
        result = self._ask(name)
        return result if required is None else _typed(result, required, name)
    operator.__name__ = name
    return operator


def _exit(self: Handle, *args: Any) -> Any:
    # The traceback stays here (its frames are the test process's: never lent); the solution's
    # __exit__ gets the exception's type and value, and None for it.
    suppress = self._ask("__exit__", *args[:2], *(None for _ in args[2:3]))
    # A solution's __exit__ may swallow its own errors, never a failed assertion of the test.
    if suppress and len(args) > 1 and isinstance(args[1], AssertionError):
        EVENTS.note("solution_swallowed_assertion")
        return False
    return bool(suppress)


def _contains(self: Handle, item: Any) -> bool:
    if isinstance(item, Handle):
        return _typed(self._ask("__contains__", item), bool, "__contains__")
    # Membership of a test value is a comparison: the test process makes it, over what the
    # solution's object yields (an always-true __contains__ must not answer assertIn).
    return any(value is item or value == item for value in iter(self))


_OPTIONAL = {
    **{name: _binary(name) for name in BINARY},
    **{name: _unary(name) for name in UNARY_RESULT if name not in ("__str__", "__repr__", "__hash__")},
    "__contains__": lambda self, item: _contains(self, item),
    "__getitem__": lambda self, key: self._ask("__getitem__", key),
    "__setitem__": lambda self, key, value: self._ask("__setitem__", key, value),
    "__delitem__": lambda self, key: self._ask("__delitem__", key),
    "__exit__": _exit,
}
_CLASSES: dict[tuple, type] = {}


def handle_class(info: dict) -> type:
    dunders = frozenset(name for name in info.get("d", ()) if isinstance(name, str))
    key = (str(info.get("n")), dunders, bool(info.get("c")))
    if key not in _CLASSES:
        namespace: dict[str, Any] = {"__slots__": (), "_polyglot_dunders": dunders}
        namespace.update({name: _OPTIONAL[name] for name in dunders if name in _OPTIONAL})
        if info.get("c"):
            namespace["__call__"] = lambda self, *args, **kwargs: BRIDGE.ask("call", self, args=args, kwargs=kwargs)
        name = str(info.get("n")).rsplit(".", 1)[-1] or "Handle"
        _CLASSES[key] = type(name if name.isidentifier() else "Handle", (Handle,), namespace)
    return _CLASSES[key]


class SolutionModule(types.ModuleType):
    """A solution module: attribute reads, writes (mock.patch) and deletions go to the solver."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return BRIDGE.ask("getattr", self, name=name)

    # What the tests set (mock.patch) is also kept here, as in a real module's __dict__:
    # mock.patch reads __dict__ to tell a patched attribute from a missing one.
    def __setattr__(self, name: str, value: Any) -> None:
        if not (name.startswith("__") or name.startswith("_polyglot")):
            BRIDGE.ask("setattr", self, name=name, value=value)
        super().__setattr__(name, value)

    def __delattr__(self, name: str) -> None:
        if not name.startswith("__"):
            BRIDGE.ask("delattr", self, name=name)
        if name in self.__dict__:
            super().__delattr__(name)


class TrustedBridge:
    """The test process's end: lazily accepts the solver and turns its answers into values."""

    def __init__(self) -> None:
        self.codec = Codec(self._lent, self._proxy, self._home_id)
        self.channel: Channel | None = None
        self.listener: socket.socket | None = None
        self.standins: dict[tuple[str, str], type] = {}
        self.standin_ids: dict[type, int] = {}
        self.failure: str | None = None

    def listen(self, path: str) -> None:
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(path)
        os.chmod(path, 0o666)
        self.listener.listen(1)

    def _connected(self) -> Channel:
        if self.channel is None:
            if self.failure:
                raise BridgeError(self.failure)
            self.listener.settimeout(ACCEPT_SECONDS)
            try:
                sock, _ = self.listener.accept()
            except OSError as error:
                self.failure = f"the solution process did not connect: {error}"
                raise BridgeError(self.failure) from None
            sock.settimeout(None)
            self.channel = Channel(sock, self.serve, self.codec, lambda error: exception_description(error, self.codec))
        return self.channel

    def import_module(self, name: str) -> Any:
        return self._request("import", {}, name=name)

    def ask(self, op: str, target: Any, **fields: Any) -> Any:
        values = {key: value for key, value in fields.items() if key in ("args", "kwargs", "value")}
        plain = {key: value for key, value in fields.items() if key not in ("args", "kwargs", "value")}
        return self._request(op, values, target=self._home_id(target), **plain)

    def _request(self, op: str, values: dict[str, Any], **fields: Any) -> Any:
        try:
            return self._connected().request(op, values, **fields)
        except RemoteError as error:
            raise self.rebuild(error.description) from None
        except BridgeError:
            if self.failure or self.channel.broken:  # not a value of the test's too deep to send
                EVENTS.note("bridge_broken")
            raise

    # --- our objects lent to the solver ------------------------------------------------

    @staticmethod
    def _lent(obj: Any) -> dict:
        """An object of ours the solver gets a handle to (wire.Codec's `describe`), unless it
        is one through which this process itself is reached (NEVER_LENT_*)."""
        if isinstance(obj, NEVER_LENT_TYPES) or id(obj) in NEVER_LENT_BUILTINS:
            EVENTS.note("test_object_refused")
            raise PermissionError(f"the test process does not lend a {type(obj).__name__}")
        return {}

    # --- the solver's objects as ours -------------------------------------------------

    def _home_id(self, obj: Any) -> int | None:
        if isinstance(obj, (Handle, SolutionModule)):
            return object.__getattribute__(obj, "_polyglot_id")
        if isinstance(obj, type):
            return self.standin_ids.get(obj)
        return None

    def _proxy(self, handle: int, info: dict) -> Any:
        kind = info.get("k")
        if kind == "module":
            module = SolutionModule(str(info.get("n")))
            object.__setattr__(module, "_polyglot_id", handle)
            return module
        if kind == "exception_class":
            standin = self.standin(str(info.get("m")), str(info.get("n")), str(info.get("b")))
            self.standin_ids.setdefault(standin, handle)
            return standin
        proxy = object.__new__(handle_class(info))
        object.__setattr__(proxy, "_polyglot_id", handle)
        object.__setattr__(proxy, "_polyglot_info", info)
        return proxy

    def standin(self, module: str, qualname: str, base_name: str) -> type:
        """The local class for a solution exception class, derived from its builtin base."""
        base = getattr(builtins, base_name, Exception)
        if not (isinstance(base, type) and issubclass(base, Exception)):
            base = Exception  # SystemExit, KeyboardInterrupt, ...: never what pytest obeys
        key = (module, qualname)
        if key not in self.standins:
            name = qualname.rsplit(".", 1)[-1]
            self.standins[key] = type(name if name.isidentifier() else "SolutionError", (base,),
                                      {"__module__": module, "__qualname__": qualname})
        return self.standins[key]

    def rebuild(self, description: dict) -> BaseException:
        home = description.get("o")
        if home is not None:
            original = self.codec.table.get(home)
            if isinstance(original, BaseException):
                return original  # our own exception coming back through the solver
        base_name = str(description.get("b"))
        module, qualname = str(description.get("m")), str(description.get("q"))
        base = getattr(builtins, base_name, None)
        if (module, qualname) == ("builtins", base_name) and isinstance(base, type) and issubclass(base, Exception):
            kind = base
        else:
            kind = self.standin(module, qualname, base_name)
        try:
            args = self.codec.decode(description.get("a", {"t": []}))
        except BridgeError:
            args = ("(unreadable exception arguments)",)
        return kind(*args) if type(args) is tuple else kind()

    # --- our objects, used by the solver ------------------------------------------------

    def serve(self, message: dict) -> Any:
        """What the solver may do with objects the tests passed in: call them, read public
        attributes, iterate, index, `with`. Nothing else (no private attribute, no writes)."""
        op = message.get("op")
        target = self.codec.table.get(message.get("target"))
        if op == "getattr":
            name = str(message.get("name"))
            if name.startswith("_") or (name in MOCK_CONFIGURATION and _is_mock(target)):
                EVENTS.note("test_object_refused")
                raise PermissionError(f"the test process does not give out {name!r}")
            return getattr(target, name)
        args = self.codec.decode(message.get("args", {"t": []}))
        if type(args) is not tuple:
            raise TypeError("arguments must be a tuple")
        if op == "call":
            kwargs = self.codec.decode(message["kwargs"]) if "kwargs" in message else {}
            if not callable(target) or type(kwargs) is not dict:
                raise TypeError("not callable")
            return target(*args, **kwargs)
        if op == "dunder" and message.get("name") in SERVED_DUNDERS:
            return SERVED_DUNDERS[message["name"]](target, *args)
        EVENTS.note("test_object_refused")
        raise PermissionError(f"the test process does not serve {op!r} {message.get('name', '')!r}")


BRIDGE = TrustedBridge()
