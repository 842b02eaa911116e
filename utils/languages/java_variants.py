"""Java's variant candidates (utils/judging/variants.py), read with tree-sitter (utils/judging/syntax.py).

A test qualifies when ONE statement of its body makes an assertion (no other `assert*` call
anywhere in it) and that statement is one of:
- `assertThat(ACTUAL).isEqualTo(EXPECTED)` or `assertEquals(EXPECTED, ACTUAL)`: EXPECTED a
  literal (an int or long, a string or a `+` of strings, a char, true/false, an enum constant
  `Type.NAME`, a `List.of`/`Arrays.asList`/`Collections.singletonList`/`emptyList` or
  `new T[]{...}` of those) or a local bound to one and mentioned nowhere else;
- `assertThat(ACTUAL).containsExactly(E1, ...)`, each Ei such a scalar literal;
- `assertThat(ACTUAL).isTrue()` / `.isFalse()`: the method's name is the slot written back;
- an error test: `assertThatExceptionOfType(X.class).isThrownBy(() -> ...)` (any chain after
  it, e.g. `.withMessage(...)`), `assertThatThrownBy(() -> ...)`, `assertThrows(X.class, () -> ...)`:
  the input is changed in the statements before or in the lambda; the expectation stays.

An input is a decimal or hex integer literal (an int keeps in int range), a string literal, or
an array initializer / `List.of` / `Arrays.asList` of two or more elements (reordered); never
an array index, nothing inside any other lambda, never a string the source writes with an escape
we do not decode.

The probe replaces the assertion statement by `if (true) { ... throw new AssertionError(MARKER
+ rendering); }` (the `if` keeps javac's reachability check quiet): the rendering tags the
value's run-time type (`I5`, `J5`, `Ztrue`, `C0061`, `S00680069` UTF-16 units in hex, `EType.NAME`,
`L(...)` a List, `Aint(...)` an array; `V` before an expected list of varargs, `T` before the
boolean of `isTrue()`), so `read` writes
back the literal of the type the solution returned. Anything else renders `?` (not a literal).
"""

from __future__ import annotations

import random
import re
from typing import Iterator

import tree_sitter

from ..judging.syntax import Source
from ..judging.variants import OBSERVED, Candidate, VariantDeriver, first_candidates, mutate_int, mutate_str, reorder

_INT_MAX = 2 ** 31 - 1
_EQUAL = {"isEqualTo"}
_EXACTLY = {"containsExactly"}
_TRUTH = {"isTrue", "isFalse"}
# How the expected side is written, told to `read` by the probe's tag (_TAGS).
EQUAL, VARARGS, BOOLEAN = "equal", "varargs", "boolean"
_TAGS = {EQUAL: "", VARARGS: "V", BOOLEAN: "T"}
_RAISES_CHAIN = {"isThrownBy"}
_RAISES_CALL = {"assertThatThrownBy": 0, "assertThrows": 1}
_LIST_FACTORIES = {("List", "of"), ("Arrays", "asList"), ("Collections", "singletonList"),
                   ("Collections", "emptyList"), ("java.util.List", "of")}
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "s": " ", '"': '"', "'": "'", "\\": "\\"}


def enum(name: str) -> tuple:
    """An enum constant's qualified name (a tuple: `is_plain_literal` takes it, a str never equals it)."""
    return ("enum", name)


def derive(test_text: str, name: str, rng: random.Random) -> list[Candidate]:
    """Up to CANDIDATES_PER_TEST candidates for one test (its text as find_units spans it)."""
    source = Source("java", test_text)
    method = source.root.children[0] if source.root.children else None
    if source.has_errors or method is None or method.type != "method_declaration":
        return []
    body = method.child_by_field_name("body")
    shape = _shape(source, method, body) if body is not None else None
    if shape is None:
        return []
    numbers = _numbers(source, method)
    return first_candidates(_slots(source, shape.inputs), rng, lambda node: _mutation(source, node, rng, numbers),
                            lambda edit: _candidate(source, name, edit, shape))


class _Shape:
    def __init__(self, inputs: list[tree_sitter.Node], statement: tree_sitter.Node | None = None,
                 actual: tree_sitter.Node | None = None, expected: tree_sitter.Node | None = None,
                 original: object = None, form: str = EQUAL) -> None:
        self.inputs, self.statement, self.actual, self.expected = inputs, statement, actual, expected
        self.original, self.form = original, form


def _statements(body: tree_sitter.Node) -> list[tree_sitter.Node]:
    return [child for child in body.named_children if child.type not in ("line_comment", "block_comment")]


def _shape(source: Source, method: tree_sitter.Node, body: tree_sitter.Node) -> _Shape | None:
    statements = _statements(body)
    asserting = [stmt for stmt in statements if _assert_calls(source, stmt)]
    if len(asserting) != 1 or len(_assert_calls(source, body)) != len(_assert_calls(source, asserting[0])):
        return None
    statement = asserting[0]
    before = statements[:statements.index(statement)]
    if statement.type != "expression_statement" or statement.named_children[0].type != "method_invocation":
        return None
    call = statement.named_children[0]
    thrower = _thrower(source, call)
    if thrower is not None:
        return _Shape(before + [thrower])
    sides = _equality(source, call)
    if sides is None:
        return None
    actual, expected, form = sides
    if form == BOOLEAN:  # `isTrue()`: the method's name is the expected slot
        return _Shape(before + [actual], statement, actual, (expected[0], expected[0]),
                      source.text_of(expected[0]) == "isTrue", form)
    binding = None
    if len(expected) == 1 and expected[0].type == "identifier":
        binding = _literal_binding(source, method, before, expected[0])
        if binding is None:
            return None
        expected = [binding.child_by_field_name("declarator").child_by_field_name("value")]
    values = [_value(source, node) for node in expected]
    if any(value is _NOT for value in values):
        return None
    if form == VARARGS and any(isinstance(value, list) for value in values):
        return None
    original = values if form == VARARGS else values[0]
    inputs = [stmt for stmt in before if stmt is not binding] + [actual]
    span = (expected[0], expected[-1])
    return _Shape(inputs, statement, actual, span, original, form)


def _name(source: Source, call: tree_sitter.Node) -> str:
    name = call.child_by_field_name("name")
    return source.text_of(name) if name is not None else ""


def _arguments(call: tree_sitter.Node) -> list[tree_sitter.Node]:
    arguments = call.child_by_field_name("arguments")
    return [node for node in arguments.named_children if "comment" not in node.type] if arguments else []


def _assert_calls(source: Source, node: tree_sitter.Node) -> list[tree_sitter.Node]:
    return [n for n in source.walk(node) if n.type == "method_invocation"
            and (_name(source, n).startswith("assert") or _name(source, n) == "fail")]


def _thrower(source: Source, call: tree_sitter.Node) -> tree_sitter.Node | None:
    """The lambda of an error assertion anywhere in the statement's call chain."""
    node = call
    while node is not None and node.type == "method_invocation":
        name, arguments = _name(source, node), _arguments(node)
        if name in _RAISES_CHAIN and len(arguments) == 1 and arguments[0].type == "lambda_expression":
            return arguments[0]
        index = _RAISES_CALL.get(name)
        if index is not None and len(arguments) == index + 1 and arguments[index].type == "lambda_expression":
            return arguments[index]
        node = node.child_by_field_name("object")
    return None


def _equality(source: Source, call: tree_sitter.Node):
    """(actual, [expected nodes], form) of `assertThat(A).isEqualTo(E)`, `assertEquals(E, A)`,
    `assertThat(A).containsExactly(E...)` (VARARGS) or `assertThat(A).isTrue()` (BOOLEAN: the
    expected node is the method's name)."""
    name, arguments = _name(source, call), _arguments(call)
    receiver = call.child_by_field_name("object")
    if name == "assertEquals" and len(arguments) == 2 and _static(source, receiver):
        return arguments[1], [arguments[0]], EQUAL
    if name in _TRUTH and not arguments:
        arguments = [call.child_by_field_name("name")]
    elif name not in _EQUAL | _EXACTLY or not arguments:
        return None
    if receiver is None or receiver.type != "method_invocation":
        return None
    inner = _arguments(receiver)
    bare = _static(source, receiver.child_by_field_name("object"))
    if _name(source, receiver) != "assertThat" or len(inner) != 1 or not bare:
        return None
    if name in _EQUAL and len(arguments) != 1:
        return None
    return inner[0], arguments, VARARGS if name in _EXACTLY else BOOLEAN if name in _TRUTH else EQUAL


def _static(source: Source, receiver: tree_sitter.Node | None) -> bool:
    """A static assertion method, called bare or on its class."""
    return receiver is None or source.text_of(receiver) in ("Assertions", "org.assertj.core.api.Assertions",
                                                            "org.junit.jupiter.api.Assertions")


def _literal_binding(source: Source, method: tree_sitter.Node, before: list[tree_sitter.Node],
                     node: tree_sitter.Node) -> tree_sitter.Node | None:
    """The declaration `T name = LITERAL;` binding `node`, a name mentioned nowhere else."""
    name = source.text_of(node)
    mentions = [n for n in source.walk(method) if n.type == "identifier" and source.text_of(n) == name]
    bindings = [stmt for stmt in before if stmt.type == "local_variable_declaration"
                and len(stmt.children_by_field_name("declarator")) == 1
                and source.text_of(stmt.child_by_field_name("declarator").child_by_field_name("name")) == name]
    if len(mentions) != 2 or len(bindings) != 1:
        return None
    value = bindings[0].child_by_field_name("declarator").child_by_field_name("value")
    return bindings[0] if value is not None and _value(source, value) is not _NOT else None


# --- literals of the source ----------------------------------------------------------------

_NOT = object()  # no literal we can state


def _value(source: Source, node: tree_sitter.Node) -> object:
    """The Python value of a literal expected side, or _NOT."""
    kind = node.type
    if kind in ("decimal_integer_literal", "hex_integer_literal"):
        return _integer(source.text_of(node))
    if kind == "unary_expression" and source.text_of(node.child_by_field_name("operator")) == "-":
        inner = _value(source, node.child_by_field_name("operand"))
        return -inner if type(inner) is int else _NOT
    if kind in ("true", "false"):
        return kind == "true"
    if kind in ("string_literal", "character_literal"):
        return _unquote(source.text_of(node))
    if kind == "binary_expression" and source.text_of(node.child_by_field_name("operator")) == "+":
        left, right = (_value(source, node.child_by_field_name(side)) for side in ("left", "right"))
        return left + right if isinstance(left, str) and isinstance(right, str) and _is_strings(node) else _NOT
    if kind == "field_access" and re.fullmatch(r"[A-Z]\w*(\.[A-Z]\w*)*\.[A-Z][A-Z0-9_]*", source.text_of(node)):
        return enum(source.text_of(node))
    if kind == "parenthesized_expression":
        return _value(source, node.named_children[0])
    elements = _elements(source, node)
    if elements is None:
        return _NOT
    values = [_value(source, element) for element in elements]
    return _NOT if any(value is _NOT or isinstance(value, list) for value in values) else values


def _is_strings(node: tree_sitter.Node) -> bool:
    """A `+` of string literals only (not `"a" + 1`)."""
    if node.type == "binary_expression":
        return all(_is_strings(node.child_by_field_name(side)) for side in ("left", "right"))
    return node.type == "string_literal"


def _elements(source: Source, node: tree_sitter.Node) -> list[tree_sitter.Node] | None:
    """The elements of a list factory call or an array creation with an initializer."""
    if node.type == "method_invocation":
        receiver = node.child_by_field_name("object")
        if receiver is not None and (source.text_of(receiver), _name(source, node)) in _LIST_FACTORIES:
            return _arguments(node)
        return None
    if node.type == "array_creation_expression":
        initializer = node.child_by_field_name("value")
        return list(initializer.named_children) if initializer is not None else None
    if node.type == "array_initializer":
        return list(node.named_children)
    return None


def _integer(text: str) -> object:
    digits = text.rstrip("lL").replace("_", "")
    if digits.lower().startswith("0x"):
        digits, base = digits[2:], 16
    elif digits.startswith("0") and digits != "0":  # octal: never an input we vary
        return _NOT
    else:
        base = 10
    try:
        return int(digits, base)
    except ValueError:
        return _NOT


def _unquote(text: str) -> object:
    """A string or char literal's value (escapes decoded), _NOT for a text block or an escape
    we do not decode (octal, unicode: javac reads those before lexing)."""
    if text.startswith('"""') or len(text) < 2:
        return _NOT
    out, index, inner = [], 0, text[1:-1]
    while index < len(inner):
        char = inner[index]
        if char != "\\":
            out.append(char)
            index += 1
            continue
        escaped = _ESCAPES.get(inner[index + 1:index + 2])
        if escaped is None:
            return _NOT
        out.append(escaped)
        index += 2
    return "".join(out)


def java_string(value: str, quote: str = '"') -> str:
    """A Java literal of `value` (a str of UTF-16 code units as chars, surrogates kept): control
    characters as escapes (octal where no letter escape: a `\\u000a` would end the line before
    lexing), non-ASCII as `\\uXXXX`."""
    named = {"\n": "\\n", "\t": "\\t", "\r": "\\r", "\b": "\\b", "\f": "\\f", "\\": "\\\\", quote: "\\" + quote}
    out = []
    for char in value:
        code = ord(char)
        if char in named:
            out.append(named[char])
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\{code:03o}")
        elif code > 0x7E:
            out.append(f"\\u{code:04x}")
        else:
            out.append(char)
    return quote + "".join(out) + quote


# --- inputs --------------------------------------------------------------------------------

def _slots(source: Source, roots: list[tree_sitter.Node]) -> Iterator[tree_sitter.Node]:
    """Input literals and lists, never an array index, nothing in a lambda other than a root."""
    for root in roots:
        yield from _slots_under(source, root, root)


def _slots_under(source: Source, node: tree_sitter.Node, root: tree_sitter.Node) -> Iterator[tree_sitter.Node]:
    if node.type == "array_access":
        yield from _slots_under(source, node.child_by_field_name("array"), root)
        return
    if (node.type == "lambda_expression" and node is not root) or node.type in ("class_literal", "annotation"):
        return
    if node.type in ("decimal_integer_literal", "hex_integer_literal") and _value(source, node) is not _NOT:
        yield node
    elif node.type == "string_literal" and isinstance(_value(source, node), str) and _value(source, node):
        yield node
    elif node.type in ("array_initializer", "method_invocation") and len(_elements(source, node) or []) >= 2:
        yield node
    for child in node.named_children:
        yield from _slots_under(source, child, root)


def _numbers(source: Source, method: tree_sitter.Node) -> list[int]:
    """Every integer the test writes, as a literal or inside a string."""
    found = []
    for node in source.walk(method):
        value = _value(source, node) if node.type in ("decimal_integer_literal", "hex_integer_literal",
                                                      "string_literal") else _NOT
        if type(value) is int:
            found.append(value)
        elif isinstance(value, str):
            found += [int(number) for number in re.findall(r"\d+", value)]
    return found


def _mutation(source: Source, node: tree_sitter.Node, rng: random.Random,
              numbers: list[int]) -> tuple[int, int, str] | None:
    start, end = source.span(node)
    text = source.text_of(node)
    if node.type == "decimal_integer_literal":
        new = mutate_int(_value(source, node), rng, numbers)
        suffix = text[len(text.rstrip("lL")):]
        if new is None or (not suffix and new > _INT_MAX) or "_" in text:
            return None
        return start, end, f"{new}{suffix}"
    if node.type == "hex_integer_literal":
        return _hex_mutation(text, rng, start, end)
    if node.type == "string_literal":
        new = mutate_str(_value(source, node), rng, numbers)
        return None if new is None else (start, end, java_string(new))
    elements = _elements(source, node)
    pair = reorder([source.text_of(element) for element in elements], rng)
    if pair is None:
        return None
    (a0, a1), (b0, b1) = (source.span(elements[index]) for index in pair)
    inner = source.text[start:end]
    a0, a1, b0, b1 = a0 - start, a1 - start, b0 - start, b1 - start
    return start, end, inner[:a0] + inner[b0:b1] + inner[a1:b0] + inner[a0:a1] + inner[b1:]


def _hex_mutation(text: str, rng: random.Random, start: int, end: int) -> tuple[int, int, str] | None:
    """Another hex literal of the same digit count and case (an int keeps in int range)."""
    match = re.fullmatch(r"(0[xX])([0-9a-fA-F]+)([lL]?)", text)
    if match is None:
        return None
    prefix, digits, suffix = match.groups()
    value = int(digits, 16)
    low, high = (16 ** (len(digits) - 1) if len(digits) > 1 and digits[0] != "0" else 0), 16 ** len(digits) - 1
    high = high if suffix else min(high, _INT_MAX)
    options = [n for n in (rng.randint(low, high) for _ in range(64)) if n != value]
    if not options:
        return None
    new = format(options[0], "x" if digits.lower() == digits else "X").rjust(len(digits), "0")
    return start, end, f"{prefix}{new}{suffix}"


# --- the probe -----------------------------------------------------------------------------

_SCALAR = (
    'x$ instanceof String ? ((String) x$).chars().mapToObj(c$ -> String.format("%04x", c$))'
    '.collect(java.util.stream.Collectors.joining("", "S", "")) : x$ instanceof Integer ? "I" + x$ '
    ': x$ instanceof Long ? "J" + x$ : x$ instanceof Boolean ? "Z" + x$ '
    ': x$ instanceof Character ? String.format("C%04x", (int) (Character) x$) '
    ': x$ instanceof Enum ? "E" + ((Enum<?>) x$).getDeclaringClass().getName() + "." + ((Enum<?>) x$).name() : "?"')
_JOIN = "java.util.stream.Collectors.joining(\",\", {open}, \")\")"
_LIST = (
    "x$ instanceof java.util.List ? ((java.util.List<?>) x$).stream().map(s$).collect(" + _JOIN.format(open='"L("') + ")"
    " : x$ instanceof Object[] ? java.util.Arrays.stream((Object[]) x$).map(s$).collect("
    + _JOIN.format(open='"A" + x$.getClass().getComponentType().getName() + "("') + ")"
    " : x$ instanceof int[] ? java.util.Arrays.stream((int[]) x$).boxed().map(s$).collect(" + _JOIN.format(open='"Aint("') + ")"
    " : x$ instanceof long[] ? java.util.Arrays.stream((long[]) x$).boxed().map(s$).collect(" + _JOIN.format(open='"Along("') + ")"
    " : x$ instanceof char[] ? new String((char[]) x$).chars().mapToObj(c$ -> (Object) (char) c$).map(s$).collect("
    + _JOIN.format(open='"Achar("') + ")"
    " : s$.apply(x$)")


def _candidate(source: Source, name: str, edit: tuple[int, int, str], shape: _Shape) -> Candidate:
    if shape.statement is None:
        return Candidate(name, edit, None, None)
    start, end = source.span(shape.statement)
    a_start, a_end = source.span(shape.actual)
    actual = source.text[a_start:a_end]
    if a_start <= edit[0] and edit[1] <= a_end:  # the input sits in `actual`: the probe reports it changed
        actual = actual[:edit[0] - a_start] + edit[2] + actual[edit[1] - a_start:]
    half = len(OBSERVED) // 2  # the marker never whole in the probe's source
    tag = f'"{_TAGS[shape.form]}" + ' if _TAGS[shape.form] else ""
    probe = (f"if (true) {{ java.util.function.Function<Object, String> s$ = x$ -> {_SCALAR}; "
             f"java.util.function.Function<Object, String> l$ = x$ -> {_LIST}; "
             f"throw new AssertionError({java_string(OBSERVED[:half])} + {java_string(OBSERVED[half:])} + {tag}"
             f"l$.apply({actual})); }}")
    expected = (source.span(shape.expected[0])[0], source.span(shape.expected[1])[1])
    return Candidate(name, edit, expected, (start, end, probe), shape.original)


# --- reading a probe's rendering back --------------------------------------------------------

_ARRAYS = {"int": "int", "long": "long", "char": "char", "java.lang.String": "String"}


def read(observed: str) -> tuple[object, str] | None:
    """(value, Java literal) of a probe's rendering; None for anything we cannot write back."""
    if observed in ("TZtrue", "TZfalse"):  # `isTrue()` / `isFalse()`
        return observed == "TZtrue", "isTrue" if observed == "TZtrue" else "isFalse"
    varargs = observed.startswith("V")
    parsed = _parse(observed[1:] if varargs else observed, 0)
    if parsed is None or parsed[2] != len(observed) - varargs:
        return None
    value, literal, _ = parsed
    if varargs:
        if not isinstance(value, list) or not value:
            return None
        return value, literal[literal.index("{") + 1 if literal.startswith("new ") else literal.index("(") + 1:-1]
    return value, literal


def _parse(text: str, at: int) -> tuple[object, str, int] | None:
    """One rendered value from `at`: (value, literal, where it ends)."""
    match = re.compile(r"I(-?\d+)|J(-?\d+)|Z(true|false)|C([0-9a-f]{4})|S((?:[0-9a-f]{4})*)"
                       r"|E([A-Za-z_$][\w$.]*)|L\(|A([\w.]+)\(").match(text, at)
    if match is None:
        return None
    number, long_number, boolean, char, string, enum_name, array = match.groups()
    end = match.end()
    if number is not None:
        return int(number), number, end
    if long_number is not None:
        return int(long_number), f"{long_number}L", end
    if boolean is not None:
        return boolean == "true", boolean, end
    if char is not None:
        value = chr(int(char, 16))
        return value, java_string(value, "'"), end
    if string is not None:
        value = "".join(chr(int(string[i:i + 4], 16)) for i in range(0, len(string), 4))
        return value, java_string(value), end
    if enum_name is not None:
        return (None if "$" in enum_name else (enum(enum_name), enum_name, end))
    return _parse_list(text, end, array)


def _parse_list(text: str, at: int, array: str | None) -> tuple[object, str, int] | None:
    if array is not None and array not in _ARRAYS:
        return None
    values, literals = [], []
    while not text.startswith(")", at):
        if values:
            if not text.startswith(",", at):
                return None
            at += 1
        parsed = _parse(text, at)
        if parsed is None or isinstance(parsed[0], list):
            return None
        values.append(parsed[0])
        literals.append(parsed[1])
        at = parsed[2]
    inside = ", ".join(literals)
    literal = f"new {_ARRAYS[array]}[]{{{inside}}}" if array else f"java.util.List.of({inside})"
    return values, literal, at + 1


DERIVER = VariantDeriver(derive=derive, read=read)
