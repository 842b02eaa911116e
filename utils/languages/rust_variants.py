"""Rust's variant candidates (utils/judging/variants.py), read with tree-sitter
(utils/judging/syntax.py).

A test qualifies when it makes ONE assertion, `assert_eq!(LEFT, RIGHT)` (two arguments), a
statement of its own body (no other assert*! macro): one side a literal expression or a local
bound to one (`let expected = LITERAL;`, no type annotation, mentioned nowhere else), the
other not. A literal expression is an expression of this grammar, its SHAPE: a decimal integer
(a suffix kept), a "string", a char, a bool, `"..".to_string()`/`.to_owned()`/
`String::from("..")`, `vec![..]`, `[..]` or `&[..]` of elements of one shape, `Some(..)`,
`None`, `Ok(..)`, a tuple. An expected `Err(..)` makes an error test: the variant keeps it and
is kept only where the reference still passes it.

tree-sitter parses a macro's arguments as a token tree, not as expressions: the assertion's
arguments are cut at the token tree's own commas and each re-parsed as an expression (and so
is a `vec![..]`'s content). The probe keeps the comparison's types (so it compiles where the
test did) and panics with the marker, the expected side's shape and `{:?}` of the actual
side; `read` parses that Debug text against the shape and writes the literal back in the
expected side's own syntax (the same forms, so the same types), or refuses (an empty
container, an `Err`, a `Some` where the original was `None`, anything the shape does not say).

An input is a decimal integer (same sign and digit count, within the smallest integer type the
original fits in: an overflowing literal does not compile), a string literal without raw
syntax, or an array / `vec!` of two or more elements (reordered); never an index, an array
length or type, nothing in a closure (the test's logic) or in another macro (a format string).
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import Iterator

import tree_sitter

from ..judging.syntax import Source
from ..judging.variants import OBSERVED, Candidate, VariantDeriver, first_candidates, mutate_int, mutate_str, reorder

_PREFIX = "fn __w() {\nlet __v = "
_SUFFIX = ";\n}\n"
_INT = re.compile(r"(?P<digits>[0-9][0-9_]*|0x[0-9a-fA-F_]+)(?P<suffix>_?(?:[iu](?:8|16|32|64|128|size)))?")
_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", "\\": "\\", "0": "\0", '"': '"', "'": "'"}
_OWNED = ("to_string", "to_owned")
# Upper bounds of the integer types, smallest first: a new value stays within the original's.
_BOUNDS = (127, 255, 32767, 65535, 2**31 - 1, 2**32 - 1, 2**63 - 1, 2**64 - 1)
_NEGATIVE_BOUNDS = (128, 32768, 2**31, 2**63)


@dataclass(frozen=True)
class _Expr:
    """A node of a Source whose character 0 sits at `base` in the test's text."""
    source: Source
    node: tree_sitter.Node
    base: int

    def at(self, node: tree_sitter.Node) -> "_Expr":
        return _Expr(self.source, node, self.base)

    @property
    def span(self) -> tuple[int, int]:
        start, end = self.source.span(self.node)
        return start + self.base, end + self.base

    @property
    def text(self) -> str:
        return self.source.text_of(self.node)

    @property
    def kind(self) -> str:
        return self.node.type

    def named(self) -> list["_Expr"]:
        return [self.at(child) for child in self.node.named_children]


def _expression(text: str, start: int) -> _Expr | None:
    """`text` (at `start` in the test) re-parsed as one expression, or None."""
    source = Source("rust", _PREFIX + text + _SUFFIX)
    if source.has_errors:
        return None
    lets = [node for node in source.walk() if node.type == "let_declaration"]
    value = lets[0].child_by_field_name("value") if len(lets) >= 1 else None
    if value is None or source.text_of(value) != text:
        return None
    return _Expr(source, value, start - len(_PREFIX))


def _token_items(tree: _Expr) -> list[_Expr] | None:
    """A token tree's top-level comma-separated items, each re-parsed as an expression."""
    children = tree.node.children[1:-1]  # inside the delimiters
    items, current = [], []
    for child in children + [None]:
        if child is None or child.type == ",":
            if current:
                start = tree.source.char(current[0].start_byte) + tree.base
                end = tree.source.char(current[-1].end_byte) + tree.base
                items.append((start, end))
            elif child is not None:
                return None  # `,,`
            current = []
        else:
            current.append(child)
    parsed = [_expression(tree.source.text[s - tree.base:e - tree.base], s) for s, e in items]
    return None if any(item is None for item in parsed) else parsed


def _macro(expr: _Expr) -> tuple[str, _Expr] | None:
    if expr.kind != "macro_invocation":
        return None
    name = expr.node.child_by_field_name("macro")
    tree = next((child for child in expr.node.children if child.type == "token_tree"), None)
    return (expr.source.text_of(name), expr.at(tree)) if name is not None and tree is not None else None


# --- the expected side's shape and value ---------------------------------------------------

def _shape(expr: _Expr) -> tuple[str, object] | None:
    """(the shape, the value) of a literal expression, or None."""
    kind, named = expr.kind, expr.named()
    if kind == "integer_literal" or (kind == "unary_expression" and expr.text.startswith("-") and len(named) == 1
                                     and named[0].kind == "integer_literal"):
        literal = _int_literal(expr.text.lstrip("-").strip())
        if literal is None:
            return None
        return f"int{literal[1]}", literal[0] * (-1 if kind == "unary_expression" else 1)
    if kind == "string_literal":
        value = _unquote(expr.text)
        return None if value is None else ("str", value)
    if kind == "boolean_literal":
        return "bool", expr.text == "true"
    if kind == "identifier" and expr.text == "None":
        return "none", None
    if kind == "call_expression":
        return _call_shape(expr)
    if kind in ("array_expression", "reference_expression", "macro_invocation"):
        return _sequence_shape(expr)
    if kind == "tuple_expression" and len(named) >= 2:
        parts = [_shape(item) for item in named]
        if any(part is None for part in parts):
            return None
        return f"tuple({','.join(part[0] for part in parts)})", tuple(part[1] for part in parts)
    return None


def _call_shape(expr: _Expr) -> tuple[str, object] | None:
    function = expr.node.child_by_field_name("function")
    arguments = expr.at(expr.node.child_by_field_name("arguments")).named()
    name = expr.source.text_of(function)
    if function.type == "field_expression":  # "..".to_string()
        value = expr.at(function.child_by_field_name("value"))
        field = expr.source.text_of(function.child_by_field_name("field"))
        if field in _OWNED and not arguments and value.kind == "string_literal" and _unquote(value.text) is not None:
            return f"string.{field}", _unquote(value.text)
        return None
    if name == "Err":  # an error test, whatever the error
        return "err", None
    if len(arguments) != 1:
        return None
    if name == "String::from" and arguments[0].kind == "string_literal" and _unquote(arguments[0].text) is not None:
        return "string.from", _unquote(arguments[0].text)
    if name in ("Some", "Ok"):
        inner = _shape(arguments[0])
        return None if inner is None else (f"{name.lower()}({inner[0]})", (name, inner[1]))
    return None


def _sequence_shape(expr: _Expr) -> tuple[str, object] | None:
    kind = "array"
    if expr.kind == "reference_expression":
        named = expr.named()
        if len(named) != 1 or named[0].kind != "array_expression" or expr.text.startswith("&mut"):
            return None
        kind, expr = "slice", named[0]
    elements = _elements(expr)
    if elements is None:
        return None
    if expr.kind == "macro_invocation":
        kind = "vec"
    parts = [_shape(element) for element in elements]
    if any(part is None for part in parts) or len({part[0] for part in parts}) > 1:
        return None
    return f"{kind}({parts[0][0] if parts else '?'})", [part[1] for part in parts]


def _elements(expr: _Expr) -> list[_Expr] | None:
    """An array display's or a `vec![..]`'s elements (not the `[x; n]` form), or None."""
    if expr.kind == "array_expression":
        if any(child.type == ";" for child in expr.node.children):
            return None
        return expr.named()
    macro = _macro(expr)
    if macro is None or macro[0] != "vec" or not macro[1].text.startswith("["):
        return None
    items = _token_items(macro[1])
    if items is None or any(child.type == ";" for child in macro[1].node.children):
        return None
    return items


def _unquote(literal: str) -> str | None:
    """A Rust "string" literal's (or Debug's) value; None for forms not handled."""
    if len(literal) < 2 or literal[0] != '"' or literal[-1] != '"':
        return None
    out, body, index = [], literal[1:-1], 0
    while index < len(body):
        char = body[index]
        if char == '"':
            return None
        if char != "\\":
            out.append(char)
            index += 1
            continue
        if body[index + 1:index + 2] in _ESCAPES:
            out.append(_ESCAPES[body[index + 1]])
            index += 2
            continue
        unicode = re.match(r"u\{([0-9a-fA-F]{1,6})\}", body[index + 1:])
        if unicode is None:
            return None  # \x.., a line continuation: not handled
        out.append(chr(int(unicode[1], 16)))
        index += 1 + unicode.end()
    return "".join(out)


def _quote(value: str) -> str:
    escaped = []
    for char in value:
        if char in '"\\':
            escaped.append("\\" + char)
        elif char in "\n\r\t\0":
            escaped.append({"\n": "\\n", "\r": "\\r", "\t": "\\t", "\0": "\\0"}[char])
        elif ord(char) < 32 or ord(char) == 127:
            escaped.append(f"\\u{{{ord(char):x}}}")
        else:
            escaped.append(char)
    return '"' + "".join(escaped) + '"'


# --- the test's shape: one assertion, its sides ---------------------------------------------

@dataclass(kw_only=True, frozen=True)
class _Assertion:
    statement: tuple[int, int]
    sides: tuple[_Expr, _Expr]
    actual: int                 # which side is the solution's value
    expected: _Expr             # the literal (in the assertion or a binding)
    shape: str
    original: object
    binding: tuple[int, int] | None  # the `let expected = ..;` statement's span


def _function(test: Source) -> tree_sitter.Node | None:
    functions = [node for node in test.root.named_children if node.type == "function_item"]
    return functions[0].child_by_field_name("body") if len(functions) == 1 else None


def _assertion(test: _Expr, body: tree_sitter.Node) -> _Assertion | None:
    macros = [test.at(node) for node in test.source.walk(body) if node.type == "macro_invocation"]
    asserts = [m for m in macros if (_macro(m) or ("",))[0].startswith(("assert", "debug_assert"))]
    if len(asserts) != 1 or _macro(asserts[0])[0] != "assert_eq":
        return None
    statement = asserts[0]
    parent = statement.node.parent
    if not (parent.id == body.id or (parent.type == "expression_statement" and parent.parent.id == body.id)):
        return None  # inside a loop, a closure, a block
    sides = _token_items(_macro(statement)[1])
    if sides is None or len(sides) != 2:
        return None
    shapes = [_shape(side) for side in sides]
    if shapes.count(None) == 1:
        expected = 1 - shapes.index(None)
        shape, original = shapes[expected]
        return _Assertion(statement=statement.span, sides=tuple(sides), actual=1 - expected, expected=sides[expected],
                          shape=shape, original=original, binding=None)
    if shapes.count(None) == 2:
        for expected in (1, 0):
            bound = _binding(test, body, sides[expected], statement.span[0])
            if bound is not None and _binding(test, body, sides[1 - expected], statement.span[0]) is None:
                value, binding = bound
                shape, original = _shape(value)
                return _Assertion(statement=statement.span, sides=tuple(sides), actual=1 - expected, expected=value,
                                  shape=shape, original=original, binding=binding.span)
    return None


def _binding(test: _Expr, body: tree_sitter.Node, name: _Expr, before: int) -> tuple[_Expr, _Expr] | None:
    """(the literal, the `let`) of a local bound to a literal before the assertion and mentioned
    nowhere else (every identifier token counts, those in macros too)."""
    if name.kind != "identifier":
        return None
    mentions = [node for node in test.source.walk(body) if node.type == "identifier"
                and test.source.text_of(node) == name.text]
    lets = [test.at(node) for node in body.named_children if node.type == "let_declaration"
            and test.at(node).span[1] <= before]
    lets = [let for let in lets if test.source.text_of(let.node.child_by_field_name("pattern")) == name.text]
    annotation = lets[0].node.child_by_field_name("type") if len(lets) == 1 else None
    if len(mentions) != 2 or len(lets) != 1 or (annotation is not None and ";" in test.source.text_of(annotation)):
        return None  # an array type's length would not fit a value of another length
    value = lets[0].at(lets[0].node.child_by_field_name("value"))
    if _shape(value) is None:
        return None
    return value, lets[0]


# --- the inputs ------------------------------------------------------------------------------

_SKIPPED = {"closure_expression", "attribute_item", "type_arguments", "array_type", "line_comment",
            "block_comment"}


def _slots(expr: _Expr, siblings: tuple[int, ...] = ()) -> Iterator[tuple[_Expr, tuple[int, ...]]]:
    """Input literals and displays under `expr` (with, for an integer element of a display, the
    display's integers): never an index, a type, a closure's body, an array's length, nor
    inside a macro other than vec!."""
    kind = expr.kind
    if kind in _SKIPPED or kind.endswith("_type"):
        return
    elements = _elements(expr) if kind in ("macro_invocation", "array_expression") else None
    if elements is not None:
        if len(elements) >= 2:
            yield expr, ()
        values = tuple(_int_value(element) for element in elements)
        for element in elements:
            yield from _slots(element, values if all(value is not None for value in values) else ())
        return
    if kind == "macro_invocation":
        return
    if kind == "index_expression":
        yield from _slots(expr.named()[0])
        return
    if kind == "array_expression":  # `[x; n]`: n is a length
        yield from _slots(expr.named()[0])
        return
    if kind == "integer_literal" and _int_literal(expr.text) is not None:
        yield expr, siblings
    elif kind == "string_literal" and _unquote(expr.text) not in (None, ""):
        yield expr, ()
    for child in expr.named():
        yield from _slots(child, siblings if kind == "unary_expression" else ())


def _int_value(expr: _Expr) -> int | None:
    shape = _shape(expr)
    return shape[1] if shape is not None and shape[0].startswith("int") else None


def _numbers(test: Source) -> list[int]:
    found = []
    for node in test.walk():
        text = test.text_of(node)
        if node.type == "integer_literal" and _int_literal(text):
            found.append(_int_literal(text)[0])
        elif node.type == "string_literal":
            found += [int(number) for number in re.findall(r"\d+", text)]
    return found


def _mutation(slot: _Expr, siblings: tuple[int, ...], text: str, rng: random.Random,
              numbers: list[int]) -> tuple[int, int, str] | None:
    start, end = slot.span
    if slot.kind == "integer_literal":
        magnitude, suffix = _int_literal(slot.text)
        if siblings:  # an element of a display: another value the display uses (book-store's books 1-5)
            sign = -1 if _is_negated(slot) else 1
            others = sorted({abs(value) for value in siblings if value * sign > 0 or value == 0} - {magnitude})
            return (start, end, f"{rng.choice(others)}{suffix}") if others else None
        if slot.text.startswith("0x"):  # same count of hex digits: its byte width
            new = _mutate_hex(magnitude, slot.text[2:], rng)
            return None if new is None else (start, end, f"{new:#x}{suffix}")
        new = _mutate_int(magnitude, rng, numbers, _is_negated(slot))
        return None if new is None else (start, end, f"{new}{suffix}")
    if slot.kind == "string_literal":
        new = mutate_str(_unquote(slot.text), rng, numbers)
        return None if new is None else (start, end, _quote(new))
    elements = _elements(slot)
    pair = reorder([element.text for element in elements], rng)
    if pair is None:
        return None
    (a0, a1), (b0, b1) = elements[pair[0]].span, elements[pair[1]].span
    return a0, b1, text[b0:b1] + text[a1:b0] + text[a0:a1]


def _int_literal(text: str) -> tuple[int, str] | None:
    """(the value, the type suffix) of a decimal or hexadecimal integer literal, or None."""
    match = _INT.fullmatch(text)
    if match is None:
        return None
    digits = match["digits"].replace("_", "")
    value = int(digits[2:], 16) if digits.startswith("0x") else int(digits)
    return value, (match["suffix"] or "").lstrip("_")


def _mutate_hex(value: int, text: str, rng: random.Random) -> int | None:
    """Another value of as many hex digits, within the smallest integer type `value` fits in."""
    digits = len(re.match(r"[0-9a-fA-F]*", text)[0])
    if "_" in text or digits == 0:
        return None
    bound = next((b for b in _BOUNDS if value <= b), 0)
    options = [n for n in (rng.randrange(16 ** digits) for _ in range(16))
               if n != value and len(f"{n:x}") == len(f"{value:x}") and n <= bound]
    return options[0] if options else None


def _is_negated(slot: _Expr) -> bool:
    parent = slot.node.parent
    return parent is not None and parent.type == "unary_expression" and slot.source.text_of(parent).startswith("-")


def _mutate_int(magnitude: int, rng: random.Random, numbers: list[int], negative: bool) -> int | None:
    """mutate_int within the smallest integer type the original fits in."""
    bounds = _NEGATIVE_BOUNDS if negative else _BOUNDS
    bound = next((b for b in bounds if magnitude <= b), None)
    for _ in range(8):
        new = mutate_int(magnitude, rng, numbers)
        if new is None or bound is None:
            return None
        if new <= bound:
            return new
    return None


# --- candidates ------------------------------------------------------------------------------

def derive(test_text: str, name: str, rng: random.Random) -> list[Candidate]:
    """Up to CANDIDATES_PER_TEST candidates for one test (its text as find_units spans it)."""
    source = Source("rust", test_text)
    body = _function(source) if not source.has_errors else None
    if body is None:
        return []
    test = _Expr(source, body, 0)
    assertion = _assertion(test, body)
    if assertion is None:
        return []
    actual = assertion.sides[assertion.actual]
    inputs = [test.at(node) for node in body.named_children
              if test.at(node).span[1] <= assertion.statement[0] and test.at(node).span != assertion.binding]
    slots = [slot for root in inputs + [actual] for slot in _slots(root)]
    numbers = _numbers(source)
    return first_candidates(slots, rng, lambda slot: _mutation(slot[0], slot[1], test_text, rng, numbers),
                            lambda edit: _candidate(name, edit, assertion, test_text))


def _candidate(name: str, edit: tuple[int, int, str], assertion: _Assertion, text: str) -> Candidate:
    if assertion.shape == "err":  # an error test: the probe is the variant itself
        return Candidate(name, edit, None, None)
    sides = []
    for side in assertion.sides:
        start, end = side.span
        if start <= edit[0] and edit[1] <= end:
            sides.append(text[start:edit[0]] + edit[2] + text[edit[1]:end])
        else:
            sides.append(text[start:end])
    half = len(OBSERVED) // 2  # the marker never whole in the source the report may quote
    shown = ("__polyglot_left", "__polyglot_right")[assertion.actual]
    # The comparison stays (never run): the expected side's type is inferred as in the test.
    probe = (f"match (&({sides[0]}), &({sides[1]})) {{ (__polyglot_left, __polyglot_right) => {{ "
             f"if false {{ let _ = *__polyglot_left == *__polyglot_right; }} "
             f"panic!(\"{{}}{{}}{{}} {{:?}}\", \"{OBSERVED[:half]}\", \"{OBSERVED[half:]}\", \"{assertion.shape}\", "
             f"{shown}) }} }}")
    start, end = assertion.statement
    return Candidate(name, edit, assertion.expected.span, (start, end, probe), assertion.original)


# --- reading an observed value back ------------------------------------------------------------

_TOKEN = re.compile(r'\s*("(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|-?\d+|[A-Za-z_]\w*|[\[\](),])')


def read(observed: str) -> tuple[object, str] | None:
    """`SHAPE DEBUG` (the probe's report) into (the value, the literal in the expected side's
    syntax), or None where the Debug text is not a value of that shape we can write back."""
    shape, _, debug = observed.partition(" ")
    tokens, position = [], 0
    while position < len(debug.rstrip()):
        match = _TOKEN.match(debug, position)
        if match is None:
            return None
        tokens.append(match[1])
        position = match.end()
    parser = _Reader(tokens)
    try:
        result = parser.value(shape)
    except (ValueError, IndexError):
        return None
    return result if parser.done else None


class _Reader:
    def __init__(self, tokens: list[str]) -> None:
        self.tokens, self.at = tokens, 0

    @property
    def done(self) -> bool:
        return self.at == len(self.tokens)

    def take(self, expected: str | None = None) -> str:
        token = self.tokens[self.at]
        if expected is not None and token != expected:
            raise ValueError(token)
        self.at += 1
        return token

    def value(self, shape: str) -> tuple[object, str]:
        head, _, inner = shape.partition("(")
        inner = inner[:-1] if inner else ""
        if head.startswith("int"):
            token = self.take()
            if not re.fullmatch(r"-?\d+", token):
                raise ValueError(token)
            return int(token), token + head[3:]
        if head in ("str", "string.to_string", "string.to_owned", "string.from"):
            token = self.take()
            value = _unquote(token)
            if value is None:
                raise ValueError(token)
            if head == "str":
                return value, token
            return value, (f"String::from({token})" if head == "string.from" else f"{token}.{head[7:]}()")
        if head == "bool":
            token = self.take()
            if token not in ("true", "false"):
                raise ValueError(token)
            return token == "true", token
        if head in ("none", "some"):
            if self.tokens[self.at] == "None":
                self.take()
                return None, "None"
            if head == "none":
                raise ValueError("Some where None was expected: its type is unknown")
            return self.wrapped("Some", inner)
        if head == "ok":
            return self.wrapped("Ok", inner)
        if head in ("vec", "array", "slice"):
            return self.sequence(head, inner)
        if head == "tuple":
            return self.tuple(_split_shapes(inner))
        raise ValueError(shape)

    def wrapped(self, word: str, inner: str) -> tuple[object, str]:
        self.take(word)
        self.take("(")
        value, literal = self.value(inner)
        self.take(")")
        return (word, value), f"{word}({literal})"

    def sequence(self, head: str, inner: str) -> tuple[object, str]:
        values, literals = self.items("[", "]", lambda index: inner)
        if not values:  # an empty container's element type may not be inferred
            raise ValueError("empty")
        body = ", ".join(literals)
        return values, {"vec": f"vec![{body}]", "array": f"[{body}]", "slice": f"&[{body}]"}[head]

    def tuple(self, shapes: list[str]) -> tuple[object, str]:
        values, literals = self.items("(", ")", lambda index: shapes[index])
        if len(values) != len(shapes):
            raise ValueError("arity")
        return tuple(values), f"({', '.join(literals)})"

    def items(self, opening: str, closing: str, shape_at) -> tuple[list, list[str]]:
        """The comma-separated values between `opening` and `closing`, the i-th of shape_at(i)."""
        self.take(opening)
        values, literals = [], []
        while self.tokens[self.at] != closing:
            if values:
                self.take(",")
            value, literal = self.value(shape_at(len(values)))
            values.append(value)
            literals.append(literal)
        self.take(closing)
        return values, literals


def _split_shapes(inner: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for char in inner:
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
            continue
        depth += {"(": 1, ")": -1}.get(char, 0)
        current += char
    return parts + [current]


DERIVER = VariantDeriver(derive=derive, read=read)
