"""Python's variant candidates (utils/judging/variants.py), read with Python's own parser.

A test qualifies when it makes ONE assertion, a statement of its own body:
- `self.assertEqual(actual, EXPECTED)` (or assertIs / assertCountEqual / assert*Equal of a
  container), one side a literal (`ast.literal_eval`) or a local bound to one before and
  mentioned nowhere else (`expected = [...]`), the other not: the input is changed in
  the statements before it or in `actual`, and the probe replaces the assertion by a raise
  that reports `repr(actual)`; the variant writes the observed value in EXPECTED's place;
- or one `with self.assertRaises(...)` block (and any assertion on its exception after it):
  the input is changed inside the block and the expectation stays; the probe is the variant.

An input is an int (not a bool) or a str constant, or a list/tuple display of two or more
elements (reordered); never an index or a key (a subscript's slice), nothing in a lambda
(a callback is the test's logic), never a docstring.
"""

from __future__ import annotations

import ast
import random
import re
from typing import Iterator

from ..judging.source_facts import parse_python
from ..judging.variants import OBSERVED, Candidate, VariantDeriver, first_candidates, mutate_int, mutate_str, reorder

_EQUAL = {"assertEqual", "assertEquals", "assertIs", "assertCountEqual", "assertListEqual", "assertDictEqual",
          "assertSetEqual", "assertTupleEqual", "assertSequenceEqual", "assertMultiLineEqual"}
_RAISES = {"assertRaises", "assertRaisesRegex"}
_PREFIX = "class _Wrapper:\n"


def derive(test_text: str, name: str, rng: random.Random) -> list[Candidate]:
    """Up to CANDIDATES_PER_TEST candidates for one test (its text as find_units spans it)."""
    source = _PREFIX + test_text
    try:
        tree = parse_python(source)
    except SyntaxError:
        return []
    function = tree.body[0].body[0] if tree.body and tree.body[0].body else None
    if not isinstance(function, ast.FunctionDef):
        return []
    offsets = _Offsets(source, len(_PREFIX))
    shape = _shape(function)
    if shape is None:
        return []
    numbers = _numbers(function)
    return first_candidates(_slots(shape.inputs), rng, lambda node: _mutation(node, offsets, test_text, rng, numbers),
                            lambda edit: _candidate(name, edit, shape, offsets, test_text))


class _Shape:
    def __init__(self, inputs: list[ast.AST], statement: ast.stmt | None = None, actual: ast.expr | None = None,
                 expected: ast.expr | None = None) -> None:
        self.inputs, self.statement, self.actual, self.expected = inputs, statement, actual, expected


def _shape(function: ast.FunctionDef) -> _Shape | None:
    body = [stmt for stmt in function.body if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant))]
    raises = [stmt for stmt in body if isinstance(stmt, ast.With) and any(_assert_call(item.context_expr, _RAISES)
                                                                         for item in stmt.items)]
    if raises:
        return _Shape(list(raises[0].body)) if len(raises) == 1 and len(_asserts(ast.Module(raises[0].body, []))) == 0 else None
    asserts = _asserts(function)
    if len(asserts) != 1:
        return None
    statement = next((stmt for stmt in body if isinstance(stmt, ast.Expr) and stmt.value is asserts[0]), None)
    call = asserts[0]
    if statement is None or call.func.attr not in _EQUAL or len(call.args) != 2 or call.keywords:
        return None
    before = body[:body.index(statement)]
    literal = [_is_literal(arg) for arg in call.args]
    if literal.count(True) == 1:
        expected, actual = (call.args[0], call.args[1]) if literal[0] else (call.args[1], call.args[0])
        return _Shape(before + [actual], statement, actual, expected)
    for side in (1, 0):  # `expected = [...]` before, used only in the assertion
        binding = _literal_binding(function, before, call.args[side])
        if binding is not None and not _is_literal(call.args[1 - side]):
            return _Shape([stmt for stmt in before if stmt is not binding] + [call.args[1 - side]], statement,
                          call.args[1 - side], binding.value)
    return None


def _literal_binding(function: ast.FunctionDef, before: list[ast.stmt], node: ast.expr) -> ast.Assign | None:
    """The statement `name = LITERAL` binding `node` (a name mentioned nowhere else)."""
    if not isinstance(node, ast.Name):
        return None
    mentions = [n for n in ast.walk(function) if isinstance(n, ast.Name) and n.id == node.id]
    bindings = [stmt for stmt in before if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name) and stmt.targets[0].id == node.id]
    if len(mentions) != 2 or len(bindings) != 1 or not _is_literal(bindings[0].value):
        return None
    return bindings[0]


def _assert_call(node: ast.AST, names: set[str]) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in names
            and isinstance(node.func.value, ast.Name) and node.func.value.id == "self")


def _asserts(tree: ast.AST) -> list[ast.Call]:
    return [node for node in ast.walk(tree) if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr.startswith("assert") and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "self"]


def _is_literal(node: ast.expr) -> bool:
    try:
        ast.literal_eval(node)
        return True
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False


def _slots(nodes: list[ast.AST]) -> Iterator[ast.AST]:
    """Input constants and list displays, never inside a subscript's slice (an index, a key)."""
    skipped: set[int] = set()
    for root in nodes:
        for node in ast.walk(root):
            if isinstance(node, ast.Subscript):
                skipped.update(id(inner) for inner in ast.walk(node.slice))
            if isinstance(node, ast.Lambda):  # a callback's constants are the test's logic, not its input
                skipped.update(id(inner) for inner in ast.walk(node.body))
            if id(node) in skipped:
                continue
            if isinstance(node, ast.Constant) and type(node.value) in (int, str) and node.value != "":
                yield node
            elif isinstance(node, (ast.List, ast.Tuple)) and len(node.elts) >= 2:
                yield node


def _numbers(function: ast.FunctionDef) -> list[int]:
    """Every integer the test writes, as a literal or inside a string (`"33 divided by -3"`)."""
    found = []
    for node in ast.walk(function):
        if isinstance(node, ast.Constant) and type(node.value) is int:
            found.append(node.value)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            found += [int(number) for number in re.findall(r"\d+", node.value)]
    return found


def _mutation(node: ast.AST, offsets: "_Offsets", text: str, rng: random.Random,
              numbers: list[int]) -> tuple[int, int, str] | None:
    start, end = offsets.span(node)
    if isinstance(node, ast.Constant):
        new = (mutate_int(node.value, rng, numbers) if isinstance(node.value, int)
               else mutate_str(node.value, rng, numbers))
        return None if new is None else (start, end, repr(new))
    elements = [text[slice(*offsets.span(element))] for element in node.elts]
    pair = reorder(elements, rng)
    if pair is None:
        return None
    spans = [offsets.span(node.elts[index]) for index in pair]
    inner = text[start:end]
    (a0, a1), (b0, b1) = [(s - start, e - start) for s, e in spans]
    swapped = inner[:a0] + inner[b0:b1] + inner[a1:b0] + inner[a0:a1] + inner[b1:]
    return start, end, swapped


def _candidate(name: str, edit: tuple[int, int, str], shape: _Shape, offsets: "_Offsets", text: str) -> Candidate:
    if shape.statement is None:
        return Candidate(name, edit, None, None)
    start, end = offsets.span(shape.statement)
    actual = text[slice(*offsets.span(shape.actual))]
    a_start, a_end = offsets.span(shape.actual)
    if a_start <= edit[0] and edit[1] <= a_end:  # the input sits in `actual`: the probe reports it changed
        actual = actual[:edit[0] - a_start] + edit[2] + actual[edit[1] - a_start:]
    half = len(OBSERVED) // 2  # the marker never whole in the source a traceback quotes
    probe = f"raise AssertionError({OBSERVED[:half]!r} + {OBSERVED[half:]!r} + repr({actual}))"
    return Candidate(name, edit, offsets.span(shape.expected), (start, end, probe), ast.literal_eval(shape.expected))


class _Offsets:
    """Character offsets in the test's own text of a node of the wrapped source."""

    def __init__(self, source: str, prefix: int) -> None:
        self.lines = source.splitlines(keepends=True)
        self.starts = [0]
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line))
        self.prefix = prefix

    def at(self, line: int, column: int) -> int:
        text = self.lines[line - 1].encode("utf-8")[:column].decode("utf-8", errors="ignore")
        return self.starts[line - 1] + len(text) - self.prefix

    def span(self, node: ast.AST) -> tuple[int, int]:
        return self.at(node.lineno, node.col_offset), self.at(node.end_lineno, node.end_col_offset)


def read(observed: str) -> tuple[object, str] | None:
    """A probe reports `repr(actual)`: a Python literal is its own text."""
    try:
        return ast.literal_eval(observed), observed
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None


DERIVER = VariantDeriver(derive=derive, read=read)
