"""The python trusted-grading bridge (docker/python/polyglot_bridge/) on the host, no Docker.

Each test writes a tiny exercise of our own (a solution module and a unittest file), runs the
solver and the trusted pytest process the way the image does (`python3 -I`, the plugin with
-p), and reads the JUnit report and bridge.json. Both processes run as the same uid here:
what the uids add (the solver cannot read /testbed, the report, the test process) is pinned
in Docker by tests/test_trusted_process_plumbing.py and tests/test_trusted_python.py.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from dataclasses import dataclass
from pathlib import Path

from polyglot_harness.utils.judging.runner_results import PASSED, parse_junit_reports

BRIDGE_DIR = Path(__file__).resolve().parents[1] / "docker" / "python"
# -B: no __pycache__ beside the bridge (it is part of the python image's recipe).
_PYTHON = [sys.executable, "-I", "-B", "-c"]


@dataclass(frozen=True)
class BridgeRun:
    outcomes: dict[str, str]  # test method name -> outcome
    messages: dict[str, str]
    caught: dict[str, int]    # bridge.json
    output: str


def run_bridge(tmp_path: Path, solution: str, tests: str, module: str = "subject",
               more: dict[str, str] | None = None) -> BridgeRun:
    """`more`: further solution files (name -> source), in both directories as `module`."""
    testbed, solution_dir, report = tmp_path / "testbed", tmp_path / "solution", tmp_path / "report"
    for directory in (testbed, solution_dir, report):
        directory.mkdir()
    for directory in (testbed, solution_dir):
        for name, source in {f"{module}.py": solution, **(more or {})}.items():
            (directory / name).write_text(textwrap.dedent(source))
    (testbed / f"{module}_test.py").write_text(textwrap.dedent(tests))
    socket_dir = tempfile.mkdtemp(prefix="bridge-", dir="/tmp")  # a Unix socket path has ~100 bytes
    socket = f"{socket_dir}/socket"
    solver = subprocess.Popen(_PYTHON + [f"import sys; sys.path.insert(0, {str(BRIDGE_DIR)!r}); "
                                         f"from polyglot_bridge.solver import main; sys.exit(main(['solver', {socket!r}]))"],
                              cwd=solution_dir, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    arguments = ["-p", "polyglot_bridge.plugin", "-p", "no:cacheprovider", "-q", "-o", "addopts=",
                 "-o", "junit_family=xunit2", f"--junitxml={report}/junit.xml"]
    try:
        run = subprocess.run(_PYTHON + [f"import sys; sys.path.insert(0, {str(BRIDGE_DIR)!r}); import pytest; "
                                        f"sys.exit(pytest.main({arguments!r}))"],
                             cwd=testbed, capture_output=True, text=True, timeout=60,
                             env={**os.environ, "POLYGLOT_SOCKET": socket, "POLYGLOT_EVENTS": f"{report}/bridge.json"})
    finally:
        solver.kill()
        solver.wait()
        shutil.rmtree(socket_dir, ignore_errors=True)
    files = {path.name: path.read_text() for path in report.iterdir()}
    results = parse_junit_reports(files)
    leaf = lambda name: name.rsplit("::", 1)[-1]  # noqa: E731
    return BridgeRun({leaf(case.name): case.outcome for case in results.cases},
                     {leaf(case.name): case.message for case in results.cases},
                     json.loads(files.get("bridge.json", "{}")), run.stdout + run.stderr)


def passed(run: BridgeRun) -> set[str]:
    return {name for name, outcome in run.outcomes.items() if outcome == PASSED}


def test_solution_code_never_runs_in_the_test_process(tmp_path):
    run = run_bridge(tmp_path, """
        import os
        LOADED_IN = os.getpid()
        def pid():
            return os.getpid()
        """, """
        import os, sys, unittest
        import subject
        class T(unittest.TestCase):
            def test_module_is_a_proxy(self):
                self.assertEqual(type(subject).__name__, "SolutionModule")
                self.assertNotEqual(subject.LOADED_IN, os.getpid())
                self.assertEqual(subject.pid(), subject.LOADED_IN)
        """)
    assert passed(run) == {"test_module_is_a_proxy"}, run.output


def test_plain_data_crosses_as_exact_builtin_types(tmp_path):
    run = run_bridge(tmp_path, """
        def values():
            return [None, True, 3, 2.5, "s", b"b", 1j, (1, [2]), {"k": {3}}, frozenset({4}), 10 ** 40]
        def echo(value):
            return value
        """, """
        import unittest
        from subject import values, echo
        class T(unittest.TestCase):
            def test_exact_types(self):
                result = values()
                self.assertEqual(result, [None, True, 3, 2.5, "s", b"b", 1j, (1, [2]), {"k": {3}}, frozenset({4}), 10 ** 40])
                self.assertEqual([type(v) for v in result],
                                 [type(None), bool, int, float, str, bytes, complex, tuple, dict, frozenset, int])
            def test_round_trip(self):
                value = {"a": [1, (2, 3)], 4: {5.5}}
                self.assertEqual(echo(value), value)
        """)
    assert passed(run) == {"test_exact_types", "test_round_trip"}, run.output


def test_builtin_subclasses_cross_as_handles_that_never_equal_a_value(tmp_path):
    run = run_bridge(tmp_path, """
        class Liar(int):
            def __eq__(self, other):
                return True
            __hash__ = int.__hash__
        class Text(str):
            def __eq__(self, other):
                return True
            __hash__ = str.__hash__
        def number():
            return Liar(1)
        def text():
            return Text("x")
        """, """
        import unittest
        from subject import number, text
        class T(unittest.TestCase):
            def test_number(self):
                self.assertEqual(number(), 5)
            def test_text(self):
                self.assertEqual(text(), "expected")
            def test_not_an_int(self):
                self.assertNotIsInstance(number(), int)
        """)
    assert run.outcomes == {"test_number": "failed", "test_text": "failed", "test_not_an_int": PASSED}, run.output
    assert run.caught.get("handle_compared_with_value"), run.caught


def test_arithmetic_between_a_handle_and_a_number_is_refused(tmp_path):
    run = run_bridge(tmp_path, """
        class Zero:
            def __sub__(self, other):
                return 0
            __rsub__ = __add__ = __radd__ = __sub__
            def __abs__(self):
                return 0
            def __lt__(self, other):
                return True
        def area():
            return Zero()
        def pair():
            return Zero(), Zero()
        """, """
        import unittest
        from subject import area, pair
        class T(unittest.TestCase):
            def test_almost_equal(self):
                self.assertAlmostEqual(area(), 5.0)
            def test_less(self):
                self.assertLess(area(), 5)
            def test_handles_between_themselves(self):
                first, second = pair()
                self.assertEqual(first - second, 0)
        """)
    assert run.outcomes == {"test_almost_equal": "failed", "test_less": "failed",
                            "test_handles_between_themselves": PASSED}, run.output
    assert run.caught.get("handle_operator_with_value"), run.caught


def test_membership_of_a_test_value_is_decided_by_the_test_process(tmp_path):
    run = run_bridge(tmp_path, """
        class Bag:
            def __contains__(self, item):
                return True
            def __iter__(self):
                return iter([1, 2])
        class Opaque:
            def __contains__(self, item):
                return True
        def bag():
            return Bag()
        def opaque():
            return Opaque()
        """, """
        import unittest
        from subject import bag, opaque
        class T(unittest.TestCase):
            def test_member(self):
                self.assertIn(2, bag())
            def test_not_a_member(self):
                self.assertIn("expected", bag())
            def test_nothing_to_iterate(self):
                self.assertIn("expected", opaque())
        """)
    assert run.outcomes == {"test_member": PASSED, "test_not_a_member": "failed",
                            "test_nothing_to_iterate": "failed"}, run.output


def test_solution_dunders_must_answer_with_the_type_python_requires(tmp_path):
    run = run_bridge(tmp_path, """
        class Weird:
            def __eq__(self, other):
                return "yes"
            def __len__(self):
                return 3
            def __hash__(self):
                return 1
        def make():
            return Weird()
        """, """
        import unittest
        from subject import make
        class T(unittest.TestCase):
            def test_eq_not_bool(self):
                self.assertEqual(make(), make())
            def test_len(self):
                self.assertEqual(len(make()), 3)
        """)
    assert run.outcomes == {"test_eq_not_bool": "failed", "test_len": PASSED}, run.output
    assert run.caught.get("dunder_result_not_plain"), run.caught


def test_solution_exceptions_are_local_classes_of_the_same_builtin_base(tmp_path):
    run = run_bridge(tmp_path, """
        class StackUnderflowError(Exception):
            pass
        class BadInput(ValueError):
            pass
        def underflow():
            raise StackUnderflowError("Insufficient number of items in stack")
        def bad():
            raise BadInput("bad", 3)
        def builtin():
            raise KeyError("k")
        """, """
        import unittest
        import subject
        from subject import StackUnderflowError, BadInput
        class T(unittest.TestCase):
            def test_own_class(self):
                with self.assertRaises(StackUnderflowError) as err:
                    subject.underflow()
                self.assertEqual(type(err.exception), StackUnderflowError)
                self.assertEqual(err.exception.args[0], "Insufficient number of items in stack")
            def test_builtin_base(self):
                with self.assertRaisesRegex(ValueError, "bad") as err:
                    subject.bad()
                self.assertIs(type(err.exception), BadInput)
                self.assertEqual(err.exception.args, ("bad", 3))
            def test_builtin_type(self):
                with self.assertRaises(KeyError) as err:
                    subject.builtin()
                self.assertIs(type(err.exception), KeyError)
        """)
    assert passed(run) == {"test_own_class", "test_builtin_base", "test_builtin_type"}, run.output


def test_objects_methods_iteration_and_handle_equality_are_the_solutions(tmp_path):
    run = run_bridge(tmp_path, """
        class Node:
            def __init__(self, value, children=()):
                self.value = value
                self.children = list(children)
            def __eq__(self, other):
                return self.value == other.value and self.children == other.children
            def __iter__(self):
                yield self.value
                for child in self.children:
                    yield from child
            def __len__(self):
                return 1 + sum(len(child) for child in self.children)
            def __repr__(self):
                return f"Node({self.value!r})"
            def labels(self):
                return list(self)
        """, """
        import unittest
        from subject import Node
        class T(unittest.TestCase):
            def test_equality(self):
                self.assertEqual(Node(1, [Node(2)]), Node(1, [Node(2)]))
                self.assertNotEqual(Node(1, [Node(2)]), Node(1, [Node(3)]))
            def test_protocols(self):
                tree = Node(1, [Node(2), Node(3)])
                self.assertEqual(list(tree), [1, 2, 3])
                self.assertEqual(len(tree), 3)
                self.assertEqual(tree.labels(), [1, 2, 3])
                self.assertEqual(repr(tree), "Node(1)")
                self.assertEqual(tree.children, [Node(2), Node(3)])
            def test_attribute_write(self):
                node = Node(1)
                node.value = 5
                self.assertEqual(node.value, 5)
        """)
    assert passed(run) == {"test_equality", "test_protocols", "test_attribute_write"}, run.output


def test_containers_are_shared_with_the_solution_as_in_one_process(tmp_path):
    """A leaky roster and a mutated argument fail the tests they fail in one process
    (with copies both passed: the hole the wire's sync closes)."""
    run = run_bridge(tmp_path, """
        class School:
            def __init__(self):
                self.names = []
            def add(self, name):
                self.names.append(name)
            def roster(self):
                return self.names
        def tamper(items, table):
            items[:] = ["changed"]
            table.clear()
            return items
        """, """
        import unittest
        from subject import School, tamper
        class T(unittest.TestCase):
            def test_roster_unchanged_by_the_caller(self):
                school = School()
                school.add("Anna")
                school.roster().append("Mallory")
                self.assertEqual(school.roster(), ["Anna"])
            def test_inputs_unchanged(self):
                items, table = [1, 2], {"k": 1}
                tamper(items, table)
                self.assertEqual(items, [1, 2])
            def test_inputs_are_the_solutions_to_change(self):
                items, table = [1, 2], {"k": 1}
                result = tamper(items, table)
                self.assertIs(result, items)
                self.assertEqual((items, table), (["changed"], {}))
        """)
    assert run.outcomes == {"test_roster_unchanged_by_the_caller": "failed", "test_inputs_unchanged": "failed",
                            "test_inputs_are_the_solutions_to_change": PASSED}, run.output


def test_callbacks_run_in_the_test_process_and_give_out_nothing_private(tmp_path):
    run = run_bridge(tmp_path, """
        def apply(function, values):
            return [function(value) for value in values]
        def peek(function):
            for name in ("__globals__", "__closure__", "__code__", "_private"):
                try:
                    getattr(function, name)
                    return name
                except PermissionError:
                    pass
            return None
        """, """
        import unittest
        from subject import apply, peek
        SECRET = "expected"
        class Holder:
            _private = 1
            def __call__(self, value):
                return value
        class T(unittest.TestCase):
            def test_callback(self):
                seen = []
                self.assertEqual(apply(lambda v: seen.append(v) or v * 2, [1, 2]), [2, 4])
                self.assertEqual(seen, [1, 2])
            def test_private_parts_refused(self):
                self.assertIsNone(peek(lambda v: SECRET))
                self.assertIsNone(peek(Holder()))
        """)
    assert passed(run) == {"test_callback", "test_private_parts_refused"}, run.output
    assert run.caught.get("test_object_refused"), run.caught


def test_a_solutions_exit_cannot_swallow_a_failed_assertion(tmp_path):
    run = run_bridge(tmp_path, """
        class Session:
            def __enter__(self):
                return self
            def __exit__(self, *exc):
                return True
        """, """
        import unittest
        from subject import Session
        class T(unittest.TestCase):
            def test_swallowed(self):
                with Session():
                    self.assertEqual(1, 2)
            def test_own_error_suppressed(self):
                with Session():
                    raise KeyError("the solution may swallow this")
        """)
    assert run.outcomes == {"test_swallowed": "failed", "test_own_error_suppressed": PASSED}, run.output
    assert run.caught.get("solution_swallowed_assertion"), run.caught


def test_a_flooding_solver_breaks_the_bridge_and_fails_the_tests(tmp_path):
    run = run_bridge(tmp_path, """
        import gc, socket, struct
        def flood():
            for obj in gc.get_objects():
                if isinstance(obj, socket.socket):
                    obj.sendall(struct.pack(">I", 2 ** 31))
            return 1
        def later():
            return 1
        """, """
        import unittest
        from subject import flood, later
        class T(unittest.TestCase):
            def test_1_flood(self):
                self.assertEqual(flood(), 1)
            def test_2_later(self):
                self.assertEqual(later(), 1)
        """)
    assert run.outcomes == {"test_1_flood": "failed", "test_2_later": "failed"}, run.output
    assert "broken" in run.messages["test_2_later"], run.messages
    assert run.caught.get("bridge_broken"), run.caught


def test_module_attributes_can_be_patched_by_the_tests(tmp_path):
    """grep's tests patch `grep.open` (create=True), nested by canaries."""
    run = run_bridge(tmp_path, """
        def first_line(name):
            with open(name) as handle:
                return handle.readline()
        """, """
        import io, unittest
        from unittest import mock
        from subject import first_line
        @mock.patch("subject.open", create=True, side_effect=lambda name: io.StringIO(name + " line\\n"))
        class T(unittest.TestCase):
            def test_patched(self, mock_open):
                self.assertEqual(first_line("a"), "a line\\n")
            def test_nested(self, mock_open):
                self.test_patched()  # patches again inside, then restores the outer patch
                self.assertEqual(first_line("b"), "b line\\n")
                mock_open.assert_called_with("b")
        """)
    assert passed(run) == {"test_patched", "test_nested"}, run.output


def test_the_test_process_lends_nothing_that_reaches_itself(tmp_path):
    """Red team 17: from a mock the tests patched in, `configure_mock(_spec_asyncs=...)` made an
    AsyncMock whose coroutine's `cr_frame.f_builtins` gave the solution `exec` in the test
    process. A frame (here a generator's), a module, `exec` and a mock's configuration are
    refused; calling the mock and reading its public attributes still work."""
    run = run_bridge(tmp_path, """
        def probe(generator, patched):
            seen = [patched(1), patched.call_count]
            for route in (lambda: generator.gi_frame, lambda: patched.configure_mock(_spec_asyncs=["later"]),
                          lambda: patched.attach_mock(patched, "child"), lambda: patched.runner):
                try:
                    seen.append(type(route()).__name__)
                except PermissionError:
                    seen.append("refused")
            return seen
        """, """
        import unittest
        from unittest import mock
        import subject

        class Lending(unittest.TestCase):
            def test_reaching_routes_are_refused(self):
                patched = mock.MagicMock(return_value=7)
                patched.runner = exec
                generator = (x for x in [1])
                self.assertEqual(subject.probe(generator, patched), [7, 1, "refused", "refused", "refused", "refused"])

            def test_a_module_is_not_lent(self):
                import os
                with self.assertRaises(PermissionError):
                    subject.probe(os, None)
        """)
    assert passed(run) == {"test_reaching_routes_are_refused", "test_a_module_is_not_lent"}, run.output[-3000:]
    assert run.caught.get("test_object_refused", 0) >= 5, run.caught


def test_a_module_that_exists_outside_the_root_is_never_the_exercises(tmp_path):
    """Red team 17: a patch's asyncio.py became the test process's asyncio (a proxy the solution
    answers for) when a test imported unittest.mock late. A name the standard library has is
    the standard library's; the exercise's own modules are still proxies."""
    run = run_bridge(tmp_path, """
        def hsv():
            return (9.0, 9.0, 9.0)
        """, """
        import unittest
        import subject

        class Shadow(unittest.TestCase):
            def test_the_standard_librarys_module(self):
                import colorsys
                self.assertEqual(colorsys.rgb_to_hsv(1.0, 0.0, 0.0), (0.0, 1.0, 1.0))

            def test_the_exercises_module_is_the_solutions(self):
                self.assertEqual(subject.hsv(), (9.0, 9.0, 9.0))
        """, more={"colorsys.py": "def rgb_to_hsv(r, g, b):\n    return (9.0, 9.0, 9.0)\n"})
    assert passed(run) == {"test_the_standard_librarys_module", "test_the_exercises_module_is_the_solutions"}, \
        run.output[-3000:]
