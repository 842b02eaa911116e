"""Lists, dicts and sets shared across the python bridge's wire, as in one process.

Two Channel ends over a socketpair, no Docker, no pytest child: `test` plays the test
process, `solution` the solver (serving in a thread). Each test pins one way a change must
reach the other side (docker/python/polyglot_bridge/wire.py): the test mutates what the
solution returned, the solution mutates what the test passed in, either side changes a
container after it crossed, plus identity, nesting, pruning and a lying peer.
"""

from __future__ import annotations

import json
import socket
import struct
import sys
import threading
from typing import Any, Callable

import pytest

from .test_python_bridge import BRIDGE_DIR

sys.path.insert(0, str(BRIDGE_DIR))
from polyglot_bridge.wire import BridgeError, Channel, Codec, RemoteError, exception_description  # noqa: E402


class End:
    """One side of the wire: `functions` are what the peer may call, by name, with data."""

    def __init__(self, sock: socket.socket, functions: dict[str, Callable[..., Any]]):
        self.functions = functions
        self.codec = Codec(lambda obj: {}, lambda handle, info: object(), lambda obj: None)
        self.channel = Channel(sock, self._serve, self.codec, lambda error: exception_description(error, self.codec))

    def _serve(self, message: dict) -> Any:
        return self.functions[message["op"]](*self.codec.decode(message["args"]))

    def call(self, name: str, *args: Any) -> Any:
        return self.channel.request(name, {"args": args})


@pytest.fixture
def ends():
    """(test, solution) with the solution serving in a thread until the test hangs up."""
    def start(functions: dict[str, Callable[..., Any]], test_functions: dict | None = None) -> tuple[End, End]:
        left, right = socket.socketpair()
        test, solution = End(left, test_functions or {}), End(right, functions)
        thread = threading.Thread(target=solution.channel.serve_forever, daemon=True)
        thread.start()
        started.append((left, thread))
        return test, solution
    started: list = []
    yield start
    for sock, thread in started:
        sock.close()
        thread.join(5)


class School:
    """A leaky solution: hands out its own roster and keeps the lists it is given."""

    def __init__(self):
        self.roster: list[str] = []
        self.kept: list | None = None

    def functions(self) -> dict[str, Callable[..., Any]]:
        return {"add": self.add, "roster": lambda: self.roster, "count": lambda: len(self.roster),
                "keep": self.keep, "kept": lambda: self.kept, "kept_sum": lambda: sum(self.kept), "sort_in_place": self.sort_in_place,
                "echo": lambda value: value}

    def add(self, name: str) -> list[str]:
        self.roster.append(name)
        return self.roster

    def keep(self, items: list) -> None:
        self.kept = items

    @staticmethod
    def sort_in_place(items: list) -> list:
        items.sort()
        return sorted(items)


def test_a_test_mutating_a_returned_list_changes_the_solutions(ends):
    school = School()
    test, _ = ends(school.functions())
    test.call("add", "Anna")
    roster = test.call("roster")
    roster.append("Mallory")
    assert test.call("count") == 2
    assert school.roster == ["Anna", "Mallory"]


def test_a_solution_mutating_an_argument_changes_the_tests(ends):
    test, _ = ends(School().functions())
    items = [3, 1, 2]
    assert test.call("sort_in_place", items) == [1, 2, 3]
    assert items == [1, 2, 3]


def test_a_solution_changing_its_container_after_returning_it_is_seen_by_the_test(ends):
    school = School()
    test, _ = ends(school.functions())
    first = test.call("add", "Anna")
    test.call("add", "Bob")
    assert first == ["Anna", "Bob"]
    assert test.call("roster") is first


def test_a_test_changing_its_container_after_passing_it_is_seen_by_the_solution(ends):
    school = School()
    test, _ = ends(school.functions())
    items = [1, 2]
    test.call("keep", items)
    items.append(10)
    assert test.call("kept_sum") == 13
    assert school.kept == [1, 2, 10]


def test_identity_holds_both_ways(ends):
    test, _ = ends(School().functions())
    items, table, members = [1], {"k": [2]}, {3}
    assert test.call("echo", items) is items
    assert test.call("echo", (items, table, members)) == (items, table, members)
    assert all(a is b for a, b in zip(test.call("echo", (items, table, members)), (items, table, members)))
    returned = test.call("roster")
    assert test.call("roster") is returned
    assert test.call("echo", returned) is returned


def test_nested_containers_are_tracked_one_by_one(ends):
    grid = [[0, 0], [0, 0]]
    test, _ = ends({"grid": lambda: grid, "mark": lambda row, column: grid[row].__setitem__(column, 1),
                    "swap_row": lambda: grid.__setitem__(0, ["new"]), "table": lambda: {"rows": grid}})
    seen = test.call("grid")
    inner = seen[1]
    test.call("mark", 1, 0)
    assert seen == [[0, 0], [1, 0]] and seen[1] is inner
    test.call("swap_row")
    assert seen == [["new"], [1, 0]]
    assert test.call("table")["rows"] is seen
    seen[0].append("mine")
    test.call("grid")
    assert grid[0] == ["new", "mine"]


def test_dicts_and_sets_sync_in_place(ends):
    state = {"table": {"a": 1}, "members": {1, 2}}
    test, _ = ends({"state": lambda: state, "change": lambda: (state["table"].update(b=2), state["members"].discard(1))})
    seen = test.call("state")
    table, members = seen["table"], seen["members"]
    test.call("change")
    assert table == {"a": 1, "b": 2} and members == {2}
    assert type(table) is dict and type(members) is set
    members.add(True)  # 1 == True: a change of type must cross as one
    test.call("state")
    assert state["members"] == {True, 2} and any(type(m) is bool for m in state["members"])


def test_a_callback_sees_the_change_the_solution_made_before_calling_it(ends):
    items = [1]
    seen_by_callback: list = []

    def mutate_then_call_back(shared: list) -> None:
        shared.append(2)
        test_side = solution.call("peek")  # the solution calls into the test while it waits
        shared.append(test_side)

    test, solution = ends({"run": mutate_then_call_back},
                          {"peek": lambda: (seen_by_callback.append(list(items)), len(items))[1]})
    test.call("run", items)
    assert seen_by_callback == [[1, 2]]
    assert items == [1, 2, 2]


def test_exception_arguments_are_shared_too(ends):
    log: list[str] = []

    def fail() -> None:
        log.append("first")
        raise ValueError(log)

    test, _ = ends({"fail": fail, "more": lambda: log.append("second")})
    with pytest.raises(RemoteError) as raised:
        test.call("fail")
    (seen,) = test.codec.decode(raised.value.description["a"])
    test.call("more")
    assert seen == ["first", "second"]


def test_containers_nobody_holds_are_pruned_on_both_sides(ends):
    held = [0]
    test, solution = ends({"fresh": lambda n: [n, n + 1], "held": lambda: held})
    kept = test.call("held")
    for n in range(10_000):
        assert test.call("fresh", n) == [n, n + 1]
    assert len(test.codec.tracked) <= 3 and len(solution.codec.tracked) <= 3
    held.append(1)
    assert test.call("held") is kept and kept == [0, 1]


def test_a_container_one_side_let_go_of_is_the_other_sides_own(ends):
    """The test keeps no reference to the list it passed: its next message drops it, and the
    solution's copy crosses back as the solution's own container."""
    school = School()
    test, solution = ends(school.functions())
    test.call("keep", [1, 2])
    test.call("count")
    assert not test.codec.mine and not solution.codec.theirs
    school.kept.append(3)
    returned = test.call("kept")
    assert returned == [1, 2, 3] and test.call("kept") is returned
    returned.append(4)
    assert test.call("kept_sum") == 10


def test_a_container_within_itself_crosses(ends):
    loop: list = [1]
    loop.append(loop)
    test, _ = ends({"echo": lambda value: value})
    seen = test.call("echo", loop)
    assert seen is loop


def test_a_value_too_deep_leaves_no_container_the_peer_never_got(ends):
    test, _ = ends({"echo": lambda value: value})
    deep: list = []
    for _ in range(300):
        deep = [deep]
    with pytest.raises(BridgeError):
        test.call("echo", ([1], deep))
    assert not test.codec.tracked
    assert test.call("echo", [5]) == [5]


# --- a lying peer ----------------------------------------------------------------------------

def _raw_reply(sock: socket.socket, **fields: Any) -> None:
    """Read one request from the channel at the other end of `sock`, answer with `fields`."""
    (length,) = struct.unpack(">I", sock.recv(4))
    request = json.loads(sock.recv(length))
    body = json.dumps({"k": "r", "id": request["id"], **fields}).encode()
    sock.sendall(struct.pack(">I", len(body)) + body)


@pytest.mark.parametrize("reply", [
    {"ok": None, "sync": [["y", 1, ["forged"]]]},    # names a container of ours: none was lent
    {"ok": None, "sync": [["m", 7, []]]},            # names a copy we never got
    {"ok": None, "drop": [["y", 1]]},
    {"ok": {"r": 1}},                                # "your container" we never lent
    {"ok": None, "sync": [["m", 1, []]], "drop": "x"},
], ids=["sync-ours", "sync-theirs", "drop-ours", "home-ours", "malformed"])
def test_a_peer_naming_a_container_it_was_never_given_breaks_the_channel(reply):
    left, right = socket.socketpair()
    test = End(left, {})
    peer = threading.Thread(target=_raw_reply, args=(right,), kwargs=reply)
    peer.start()
    with pytest.raises(BridgeError):
        test.call("anything", 0)  # lends no container
    peer.join(5)
    left.close()
    right.close()


def test_a_peer_syncing_a_container_it_was_given_is_applied():
    """The control of the test above: the same sync, naming what was lent, is obeyed."""
    left, right = socket.socketpair()
    test = End(left, {})
    peer = threading.Thread(target=_raw_reply, args=(right,), kwargs={"ok": {"r": 1}, "sync": [["y", 1, [9]]]})
    peer.start()
    items = [0]
    assert test.call("anything", items) is items
    assert items == [9]
    peer.join(5)
    left.close()
    right.close()
