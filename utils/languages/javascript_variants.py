"""JavaScript's variant candidates (utils/judging/variants.py), read with tree-sitter
(utils/judging/syntax.py).

A jest test (`test|it('title', [async] () => { ... })`, as find_units spans it) qualifies when
its body holds ONE `expect(...)` call, a statement of the body itself:
- `expect(ACTUAL).toEqual(EXPECTED)` (or toStrictEqual / toBe), EXPECTED a literal the Python
  side can read exactly (integers, strings without template syntax, booleans, null, arrays and
  plain objects of those) or a `const|let|var` local bound to one before and mentioned nowhere
  else, ACTUAL no literal: the input is changed in the statements before it or in ACTUAL, and
  the probe replaces the statement by a throw that reports ACTUAL as JSON (only when it is
  plain data in the test process: see `_RENDER`);
- or `expect(() => ...).toThrow(ARG)` (or toThrowError), one argument: the input is changed
  inside the function and the expectation stays; the probe is the variant.

An input is an integer (a decimal literal, its sign included) or a string literal, or an
array of two or more elements (reordered); never an index (a subscript's), an object key, a
template string, or anything inside a nested function (a callback is the test's logic).
"""

from __future__ import annotations

import json
import random
import re
from typing import Iterator

import tree_sitter

from ..judging.syntax import Source
from ..judging.variants import OBSERVED, Candidate, VariantDeriver, first_candidates, mutate_int, mutate_str, reorder

_EQUAL = {"toEqual", "toStrictEqual", "toBe"}
_THROW = {"toThrow", "toThrowError"}
_FUNCTIONS = {"arrow_function", "function_expression", "function", "function_declaration", "generator_function",
              "generator_function_declaration", "method_definition", "class_body"}
_NOT_PLAIN = "<not plain data>"  # no JSON text: `read` refuses it

# The value the test process sees (through the trusted bridge: plain data rebuilt in the test's
# realm, anything else a handle, a Proxy without prototype) as JSON, only where JSON states it
# exactly and jest's toEqual would compare it alike: null, strings, booleans, safe integers
# (not -0), dense arrays and objects of Object.prototype with enumerable data properties only.
_RENDER = ("((v) => { const p = (x) => x === null || typeof x === 'string' || typeof x === 'boolean'"
           " || (Number.isSafeInteger(x) && !Object.is(x, -0))"
           " || (Array.isArray(x) && Object.getPrototypeOf(x) === Array.prototype"
           " && Object.keys(x).length === x.length && x.every(p))"
           " || (typeof x === 'object' && !Array.isArray(x) && Object.getPrototypeOf(x) === Object.prototype"
           " && Object.getOwnPropertySymbols(x).length === 0 && Object.getOwnPropertyNames(x).every((k) => {"
           " const d = Object.getOwnPropertyDescriptor(x, k); return k !== '__proto__' && d.enumerable"
           " && 'value' in d && p(d.value); }));"
           " const date = Object.prototype.toString.call(v) === '[object Date]'"
           " && Object.getPrototypeOf(v) === Date.prototype && Number.isFinite(v.getTime());"
           " if (date) return 'new Date(' + [v.getFullYear(), v.getMonth(), v.getDate(), v.getHours(), v.getMinutes(),"
           " v.getSeconds(), v.getMilliseconds()].join(', ') + ')';"
           f" return p(v) ? JSON.stringify(v) : {_NOT_PLAIN!r}; }})")
# A calendar value (meetup's `new Date(2013, 4, 13)`): its local-time fields, written back as
# `new Date(y, m, d, h, min, s, ms)`; read as ("Date", y, m, d, h, min, s, ms).
_DATE_FIELDS = 7
_DATE = re.compile(r"new Date\((-?\d{1,6}(?:, -?\d{1,4}){%d})\)" % (_DATE_FIELDS - 1))


def derive(test_text: str, name: str, rng: random.Random) -> list[Candidate]:
    """Up to CANDIDATES_PER_TEST candidates for one test (its text as find_units spans it)."""
    source = Source("javascript", test_text)
    body = None if source.has_errors else _test_body(source.root)
    shape = None if body is None else _shape(source, body)
    if shape is None:
        return []
    numbers = _numbers(source, body)
    return first_candidates(_slots(source, shape.inputs), rng, lambda node: _mutation(source, node, rng, numbers),
                            lambda edit: _candidate(source, name, edit, shape))


class _Shape:
    def __init__(self, inputs: list[tree_sitter.Node], statement: tree_sitter.Node | None = None,
                 actual: tree_sitter.Node | None = None, expected: tree_sitter.Node | None = None) -> None:
        self.inputs, self.statement, self.actual, self.expected = inputs, statement, actual, expected


def _named(node: tree_sitter.Node) -> list[tree_sitter.Node]:
    return [child for child in node.named_children if child.type != "comment"]


def _test_body(root: tree_sitter.Node) -> tree_sitter.Node | None:
    """The braced body of the one `test|it('title', () => { ... })` call the text holds."""
    statements = _named(root)
    if len(statements) != 1 or statements[0].type != "expression_statement":
        return None
    call = _named(statements[0])[0]
    if call.type != "call_expression" or call.child_by_field_name("function").type != "identifier":
        return None
    arguments = _named(call.child_by_field_name("arguments"))
    if len(arguments) != 2 or arguments[1].type not in ("arrow_function", "function_expression"):
        return None
    body = arguments[1].child_by_field_name("body")
    return body if body is not None and body.type == "statement_block" else None


def _expect_calls(source: Source, node: tree_sitter.Node) -> list[tree_sitter.Node]:
    return [n for n in source.walk(node) if n.type == "call_expression"
            and n.child_by_field_name("function").type == "identifier"
            and source.text_of(n.child_by_field_name("function")) == "expect"]


def _matcher(source: Source, statement: tree_sitter.Node) -> tuple[tree_sitter.Node, str, list] | None:
    """(expect's argument, the matcher's name, its arguments) of `expect(X).matcher(...);`."""
    if statement.type != "expression_statement":
        return None
    call = _named(statement)[0]
    member = call.child_by_field_name("function") if call.type == "call_expression" else None
    if member is None or member.type != "member_expression":
        return None
    expect = member.child_by_field_name("object")
    if expect.type != "call_expression" or source.text_of(expect.child_by_field_name("function")) != "expect":
        return None
    given = _named(expect.child_by_field_name("arguments"))
    if len(given) != 1:
        return None
    return given[0], source.text_of(member.child_by_field_name("property")), _named(call.child_by_field_name("arguments"))


def _shape(source: Source, body: tree_sitter.Node) -> _Shape | None:
    expects = _expect_calls(source, body)
    if len(expects) != 1:
        return None
    statements = _named(body)
    found = [(index, _matcher(source, stmt)) for index, stmt in enumerate(statements)]
    found = [(index, match) for index, match in found if match is not None]
    if len(found) != 1:
        return None
    index, (actual, matcher, arguments) = found[0]
    if matcher in _THROW:
        if len(arguments) != 1 or actual.type not in ("arrow_function", "function_expression"):
            return None
        return _Shape([actual.child_by_field_name("body")])
    if matcher not in _EQUAL or len(arguments) != 1 or _value(source, actual) is not _NO:
        return None
    before = statements[:index]
    expected = arguments[0]
    if _value(source, expected) is not _NO:
        return _Shape(before + [actual], statements[index], actual, expected)
    binding = _literal_binding(source, body, before, expected)
    if binding is None:
        return None
    declaration, value = binding
    return _Shape([stmt for stmt in before if stmt is not declaration] + [actual], statements[index], actual, value)


def _literal_binding(source: Source, body: tree_sitter.Node, before: list[tree_sitter.Node],
                     node: tree_sitter.Node) -> tuple[tree_sitter.Node, tree_sitter.Node] | None:
    """(the declaration, its literal value) of `const NAME = LITERAL;` binding `node`, a name
    mentioned nowhere else in the test."""
    if node.type != "identifier":
        return None
    name = source.text_of(node)
    mentions = [n for n in source.walk(body) if n.type in ("identifier", "shorthand_property_identifier")
                and source.text_of(n) == name]
    if len(mentions) != 2:
        return None
    for statement in before:
        if statement.type not in ("lexical_declaration", "variable_declaration"):
            continue
        declarators = [n for n in _named(statement) if n.type == "variable_declarator"]
        if len(declarators) == 1 and source.text_of(declarators[0].child_by_field_name("name")) == name:
            value = declarators[0].child_by_field_name("value")
            return (statement, value) if value is not None and _value(source, value) is not _NO else None
    return None


_NO = object()  # not a literal read exactly
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v", "0": "\0",
            "'": "'", '"': '"', "\\": "\\"}


def _value(source: Source, node: tree_sitter.Node) -> object:
    """The Python value of a JS literal (see the module's docstring), or _NO."""
    kind = node.type
    if kind in ("true", "false", "null"):
        return {"true": True, "false": False, "null": None}[kind]
    if kind == "string":
        return _string(source, node)
    if kind == "number" or (kind == "unary_expression" and source.text_of(node.child_by_field_name("operator")) == "-"
                            and node.child_by_field_name("argument").type == "number"):
        return _integer(source.text_of(node))
    if kind == "array":
        items = [_value(source, item) for item in _named(node)]
        return _NO if any(item is _NO for item in items) or _has_holes(node) else items
    if kind == "object":
        return _object(source, node)
    if kind == "parenthesized_expression" and len(_named(node)) == 1:
        return _value(source, _named(node)[0])
    if kind == "new_expression":
        return _date(source, node)
    return _NO


def _date(source: Source, node: tree_sitter.Node) -> object:
    """`new Date(y, m, d[, h, min, s, ms])` of integer literals: a local date and time."""
    constructor, arguments = node.child_by_field_name("constructor"), node.child_by_field_name("arguments")
    if source.text_of(constructor) != "Date" or arguments is None:
        return _NO
    fields = [_integer(source.text_of(argument)) for argument in _named(arguments)]
    if not 3 <= len(fields) <= _DATE_FIELDS or any(not isinstance(field, int) for field in fields):
        return _NO
    return ("Date", *fields, *[0] * (_DATE_FIELDS - len(fields)))


def _integer(text: str) -> object:
    """A decimal or hexadecimal integer literal, `-` allowed (no 1_000, no 1.0, no 1e3, no 5n)."""
    digits = text.lstrip("-").strip()
    if text.count("-") > 1 or not re.fullmatch(r"0|[1-9][0-9]*|0[xX][0-9a-fA-F]+", digits):
        return _NO
    value = int(digits, 0) * (-1 if text.startswith("-") else 1)
    return _NO if abs(value) > 2 ** 53 - 1 or (value == 0 and text.startswith("-")) else value


def _has_holes(node: tree_sitter.Node) -> bool:
    """`[1, , 2]`: an element missing between commas (one trailing comma is none)."""
    previous = None
    for child in node.children:
        if child.type == "," and previous in ("[", ","):
            return True
        previous = child.type if child.type != "comment" else previous
    return False


def _string(source: Source, node: tree_sitter.Node) -> object:
    parts = []
    for child in node.named_children:
        if child.type == "string_fragment":
            parts.append(source.text_of(child))
        elif child.type == "escape_sequence" and source.text_of(child)[1:] in _ESCAPES:
            parts.append(_ESCAPES[source.text_of(child)[1:]])
        elif child.type == "escape_sequence" and re.fullmatch(r"\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4})", source.text_of(child)):
            parts.append(chr(int(source.text_of(child)[2:], 16)))
        else:
            return _NO
    return "".join(parts)


def _object(source: Source, node: tree_sitter.Node) -> object:
    result = {}
    for pair in _named(node):
        if pair.type != "pair":
            return _NO
        key, value = pair.child_by_field_name("key"), _value(source, pair.child_by_field_name("value"))
        name = (source.text_of(key) if key.type == "property_identifier"
                else _string(source, key) if key.type == "string" else _NO)
        if value is _NO or not isinstance(name, str) or name == "__proto__" or name in result:
            return _NO
        result[name] = value
    return result


def _slots(source: Source, roots: list[tree_sitter.Node]) -> Iterator[tree_sitter.Node]:
    """Input integers, strings and arrays; never an index, a key, nor in a nested function."""
    for root in roots:
        yield from _slots_under(source, root)


def _slots_under(source: Source, node: tree_sitter.Node) -> Iterator[tree_sitter.Node]:
    if node.type in _FUNCTIONS or node.type in ("template_string", "regex"):
        return
    if node.type == "string":
        value = _string(source, node)
        if isinstance(value, str) and value and "\\" not in source.text_of(node):
            yield node
        return
    if node.type == "number" or node.type == "unary_expression" and _value(source, node) is not _NO:
        if isinstance(_value(source, node), int):
            yield node
        return
    if node.type == "array" and len(_named(node)) >= 2 and not _has_holes(node) and all(
            item.type != "spread_element" for item in _named(node)):
        yield node
    for child in node.named_children:
        if node.type == "subscript_expression" and child == node.child_by_field_name("index"):
            continue
        if node.type == "pair" and child == node.child_by_field_name("key"):
            continue
        yield from _slots_under(source, child)


def _numbers(source: Source, body: tree_sitter.Node) -> list[int]:
    """Every integer the test writes, as a literal or inside a string (`'What is 33 divided by -3?'`)."""
    found = []
    for node in source.walk(body):
        if node.type == "number" and isinstance(_integer(source.text_of(node)), int):
            found.append(_integer(source.text_of(node)))
        elif node.type == "string_fragment":
            found += [int(number) for number in re.findall(r"\d+", source.text_of(node))]
    return found


def _mutation(source: Source, node: tree_sitter.Node, rng: random.Random,
              numbers: list[int]) -> tuple[int, int, str] | None:
    start, end = source.span(node)
    if node.type == "string":
        new = mutate_str(_string(source, node), rng, numbers)
        quote = source.text_of(node)[0]
        return None if new is None or quote in new or "\\" in new else (start, end, f"{quote}{new}{quote}")
    if node.type != "array":
        hexadecimal = re.search(r"0[xX]([0-9a-fA-F]+)", source.text_of(node))
        if hexadecimal:
            return _mutate_hex(hexadecimal[1], _value(source, node), rng, (start, end), source.text_of(node))
        new = _mutate_int(_value(source, node), rng, numbers, _sibling_integers(source, node))
        return None if new is None else (start, end, str(new))
    elements = [source.text_of(item) for item in _named(node)]
    pair = reorder(elements, rng)
    if pair is None:
        return None
    (a0, a1), (b0, b1) = [source.span(_named(node)[index]) for index in pair]
    text = source.text
    return start, end, text[start:a0] + text[b0:b1] + text[a1:b0] + text[a0:a1] + text[b1:end]


def _sibling_integers(source: Source, node: tree_sitter.Node) -> list[int]:
    """The other integer arguments of the call `node` is an argument of."""
    parent = node.parent
    if parent is None or parent.type != "arguments":
        return []
    values = [_value(source, other) for other in _named(parent) if other != node]
    return [value for value in values if isinstance(value, int) and not isinstance(value, bool)]


def _mutate_int(value: int, rng: random.Random, numbers: list[int], siblings: list[int]) -> int | None:
    """`mutate_int`, keeping what bounds an input's domain: zero stays zero and non-zero stays
    non-zero (twelve-days `recite(1)` became `recite(0)`, `On the null day`), and the order of a
    call's integer arguments (beer-song `recite(1, 1)` became `recite(1, 3)`: three verses from
    one bottle, an answer the instructions leave open)."""
    def keeps(new: int) -> bool:
        return (new == 0) == (value == 0) and all((new > other) - (new < other) == (value > other) - (value < other)
                                                  for other in siblings)
    for _ in range(16):
        new = mutate_int(value, rng, numbers)
        if new is not None and keeps(new):
            return new
    return None


def _mutate_hex(digits: str, value: int, rng: random.Random, span: tuple[int, int],
                text: str) -> tuple[int, int, str] | None:
    """`0x40` -> another integer of as many hexadecimal digits, written alike (case, sign)."""
    low, high = (0 if len(digits) == 1 else 16 ** (len(digits) - 1)), 16 ** len(digits) - 1
    options = [n for n in (rng.randint(low, high) for _ in range(64)) if n != abs(value) and (n or value >= 0)]
    if not options:
        return None
    new = format(options[0], "X" if digits.isupper() else "x")
    return span[0], span[1], text[:text.index(digits)] + new


def _candidate(source: Source, name: str, edit: tuple[int, int, str], shape: _Shape) -> Candidate:
    if shape.statement is None:
        return Candidate(name, edit, None, None)
    start, end = source.span(shape.statement)
    a_start, a_end = source.span(shape.actual)
    actual = source.text[a_start:a_end]
    if a_start <= edit[0] and edit[1] <= a_end:  # the input sits in ACTUAL: the probe reports it changed
        actual = actual[:edit[0] - a_start] + edit[2] + actual[edit[1] - a_start:]
    half = len(OBSERVED) // 2  # the marker never whole in the source a stack trace may quote
    probe = f"throw new Error({OBSERVED[:half]!r} + {OBSERVED[half:]!r} + {_RENDER}({actual}));"
    return Candidate(name, edit, source.span(shape.expected), (start, end, probe), _value(source, shape.expected))


def read(observed: str) -> tuple[object, str] | None:
    """A probe reports JSON.stringify of plain data: JSON is a JS literal, written back as is."""
    text = observed.strip()
    date = _DATE.fullmatch(text)
    if date:
        return ("Date", *map(int, date[1].split(", "))), text
    try:
        value = json.loads(text, parse_float=_refuse, parse_constant=_refuse)
    except (ValueError, RecursionError):
        return None
    if "__proto__" in _keys(value) or any(word in string for string in _strings(value) for word in _NON_VALUES):
        return None
    return value, text


# A JS non-value printed into a string: the reference answered an input outside what it handles
# (twelve-days `recite(52)`: `On the undefined day of Christmas`), an answer no instruction gives.
_NON_VALUES = ("undefined", "null", "NaN", "Infinity", "[object ")


def _strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, (list, dict)):
        for item in (value if isinstance(value, list) else [*value, *value.values()]):
            yield from _strings(item)


def _keys(value: object) -> set[str]:
    """Every object key of a JSON value (`{"__proto__": ..}` written in JS sets a prototype)."""
    if isinstance(value, list):
        return set().union(*map(_keys, value))
    if isinstance(value, dict):
        return set(value).union(*map(_keys, value.values()))
    return set()


def _refuse(text: str) -> object:
    raise ValueError(f"not an exact literal: {text}")


DERIVER = VariantDeriver(derive=derive, read=read)
