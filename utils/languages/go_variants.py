"""Go's variant candidates (utils/judging/variants.py, docs/variants-go.md), on the table
machinery of Go's mutated canaries (utils/languages/go_tables.py, docs/go-table-canaries.md).

Go keeps a test's inputs and expected values in a package-level table the test ranges over
(`for _, tc := range testCases { ... }`). A variant of such a test is the test itself whose
range clause holds an inline table of ONE entry, a table entry with one INPUT field changed
and its expected field holding the reference's answer for it.

- **Which tests**: those the canaries read (a `for ... range TABLE` over a package table), that
  name the table nowhere else, and compare a field of the loop variable to a computed value:
  `X != tc.F`, `tc.F == X`, or a call named `*Equal` of two arguments (`reflect.DeepEqual(X,
  tc.F)`, `bytes.Equal`, `slicesEqual`); comparisons to nil or a literal are mode flags.
- **Which entries**: the entry's first compared field holds a literal `read` writes back
  exactly (an int, a plain string, a bool, a flat slice of those) and no other compared field
  holds one (two answers); the field is no float; an entry that expects an error (a field
  named for errors set, `valid`/`ok` false) gives none (`error_test`, as in every language).
- **Inputs**: the other fields the test reads outside its failure calls and `t.Run`'s name: an
  integer (`mutate_int`, within its field's type), a plain string (`mutate_str`), a flat
  slice (two elements swapped, `reorder`; or an element changed: an integer into another the
  slice holds, a string by `mutate_str`). The table's own rules beside the shared ones: an
  integer field stays within the values the table writes there (3 or more), the changed
  entry's inputs are no other entry's, and a string keeps the clusters its entry's name names.
- **The probe**: the comparison replaced by `func() bool { t.Fatalf(MARKER SHAPE %#v, X);
  return COMPARISON }()`: the comparison stays (never run), so every import the test uses is
  still used; the `t` is the innermost `*testing.T` in scope (a subtest's own).
- **`read`**: `%#v`'s text of the shape (`int`, `str`, `bool`, `slice:[]T`) into the literal
  written in the expected slot: `%#v` prints Go syntax (quoted strings, hexadecimal unsigned
  integers, `[]T{...}`, `[]T(nil)`), written back with the table's own slice type.
"""

from __future__ import annotations

import random
import re
from typing import Callable, Mapping, Sequence

from ..judging.canaries import apply_edits, call_arguments, matching_brace
from ..judging.variants import (OBSERVED, VOCABULARY_USES, Candidate, TableCandidate, VariantDeriver, first_candidates,
                                keeps_named_clusters, mutate_int, mutate_str, named_clusters, reorder, stated_integers)
from . import go_tables

_SCAN = {"backtick": True}
_FLAT_SLICE = re.compile(r"\[\](?P<type>string|bool|byte|u?int(?:8|16|32|64)?)\{")
_INT_BOUNDS = {"int8": 127, "uint8": 255, "byte": 255, "int16": 32767, "uint16": 65535, "int32": 2**31 - 1,
               "rune": 2**31 - 1, "uint32": 2**32 - 1, "int": 2**63 - 1, "int64": 2**63 - 1, "uint": 2**64 - 1,
               "uint64": 2**64 - 1}
_FLOAT = re.compile(r"^(?:\[\])*(?:float32|float64|complex64|complex128)$")
_EQUAL_CALL = re.compile(r"(?<![\w.])(?:\w+\.)?\w*[Ee]qual\(")
_T_PARAMETER = re.compile(r"\b(\w+)\s+\*testing\.T\b")
_NOT_RUN_CALLS = re.compile(r"\b\w+\.(?:Run|Errorf|Fatalf|Error|Fatal|Logf|Log|Skipf|Skip)\(")
_ERROR_NAME = re.compile(r"(?i)err|panic|invalid|fail")
_SUCCESS_NAME = re.compile(r"(?i)^(?:valid|ok|success)$")


def for_instance(texts: Mapping[str, str], stubs: Sequence[str], observation_key=None
                 ) -> Callable[[str, str, random.Random], list[Candidate]]:
    """The `derive` of one instance: the tables sit in any test file of the package, and a
    field's named type may be declared in the stub."""
    every_test = "\n".join(texts.values())
    declarations = every_test + "\n" + "\n".join(stubs)
    return lambda test, name, rng: derive(test, name, rng, every_test, declarations)


def derive(test: str, name: str, rng: random.Random, every_test: str, declarations: str = "") -> list[Candidate]:
    """Up to CANDIDATES_PER_TEST candidates for one test (its text as find_units spans it)."""
    ranged = _ranged_table(test, every_test)
    if ranged is None:
        return []
    table_name, name_span, var, table = ranged
    comparisons = _comparisons(test, var)
    if not comparisons:
        return []
    types = _field_types(table, declarations)
    inputs = _input_fields(test, var, {field for field, *_ in comparisons})
    slots = []
    for entry in table.entries:
        values = {field: (start, end) for field, start, end in go_tables.entry_values(table, entry)}
        expected = _expected_of(table, values, comparisons, types, declarations)
        if expected is None or _expects_error(table, values, test, var, expected[0]):
            continue
        for field in inputs:
            if field in values:
                slots += [(entry, values, expected, field, point) for point in _points(table, values[field])]
    if not slots:
        return []
    return first_candidates(slots, rng, lambda slot: _mutation(table, slot, types, inputs, rng),
                            lambda edit: _candidate(name, test, name_span, table, comparisons, edit))


# --- the table and the test's comparisons ------------------------------------------------------

def _ranged_table(test: str, every_test: str):
    """(the table's name, its span in the range clause, the loop variable, the table) of the
    package table the test ranges over, when the test names it nowhere else."""
    tables = go_tables.tables(every_test)
    for loop in go_tables.RANGE.finditer(test):
        names = [found for found in re.finditer(r"\b\w+\b", loop["expr"]) if found[0] in tables]
        if not names or (loop["op"] != ":=" and loop["index"] in (None, "_")):
            continue
        table_name = names[0][0]
        if go_tables.uses(table_name, test) != 1 or len(tables[table_name].entries) == 0:
            return None
        start = loop.start("expr") + names[0].start()
        return table_name, (start, start + len(table_name)), loop["var"], tables[table_name]
    return None


def _comparisons(test: str, var: str) -> list[tuple[str, int, int, int, int]]:
    """(field, the comparison's span, the computed side's span) of each field of `var` compared
    to a computed value, the first comparison of each field, in the test's order."""
    found: dict[str, tuple[str, int, int, int, int]] = {}
    for access in re.finditer(rf"\b{re.escape(var)}\.(\w+)\b(?!\s*[.(\[])", test):
        field = access[1]
        if field in found:
            continue
        compared = _binary(test, access) or _equal_call(test, access)
        if compared is not None and _whole(test, compared[0], compared[1]):
            found[field] = (field,) + compared
    return sorted(found.values(), key=lambda comparison: comparison[1])


def _binary(test: str, access: re.Match) -> tuple[int, int, int, int] | None:
    after = re.match(r"\s*([!=]=)\s*", test[access.end():])
    if after is not None:
        start = access.end() + after.end()
        end = _operand_end(test, start)
        other = test[start:end]
        return None if _constant(other) or not other else (access.start(), end, start, end)
    before = re.search(r"([!=]=)\s*$", test[:access.start()])
    if before is None or test[:before.start()].endswith(("!", "=", "<", ">")):
        return None
    end = len(test[:before.start()].rstrip())
    start = _operand_start(test, end)
    other = test[start:end]
    return None if _constant(other) or not other else (start, access.end(), start, end)


def _equal_call(test: str, access: re.Match) -> tuple[int, int, int, int] | None:
    for call in _EQUAL_CALL.finditer(test, 0, access.start()):
        arguments = call_arguments(test, call.end() - 1, **_SCAN) or []
        if len(arguments) != 2 or (access.start(), access.end()) not in arguments:
            continue
        other = arguments[1 - arguments.index((access.start(), access.end()))]
        return call.start(), _closing(test, call.end() - 1), other[0], other[1]
    return None


_BEFORE = ("(", ";", "&&", "||", "!", ",", "=", "{", "\n", "if", "case", "return")
_AFTER = ("{", ")", ";", ":", "&&", "||", ",", "\n")


def _whole(test: str, start: int, end: int) -> bool:
    """Whether `test[start:end]` is a whole operand of what surrounds it (a condition, a case,
    an argument): the probe replaces it by a call, so `a + b != tc.F` or `*p != tc.F`, where
    the comparison reads more than the scan found, gives none."""
    before, after = test[:start].rstrip(" \t"), test[end:].lstrip(" \t")
    return before.endswith(_BEFORE) and after.startswith(_AFTER)


def _constant(operand: str) -> bool:
    return bool(re.fullmatch(r"nil|true|false|-?\d[\w.]*|[\"'`].*", operand.strip(), re.S))


def _operand_end(text: str, start: int) -> int:
    """Where the operand starting at `start` ends: names, selectors, calls and indexes."""
    at = start
    while at < len(text):
        if text[at].isalnum() or text[at] in "_.":
            at += 1
        elif text[at] in "([" and at > start:
            at = _closing(text, at)
        else:
            break
    return at


def _closing(text: str, open_at: int) -> int:
    """Offset just after the bracket closing the `(`, `[` or `{` at `open_at` (strings skipped)."""
    depth, at = 0, open_at
    while at < len(text):
        char = text[at]
        if char in "\"'`":
            at = _string_end(text, at)
            continue
        depth += 1 if char in "([{" else -1 if char in ")]}" else 0
        at += 1
        if depth == 0:
            return at
    return len(text)


def _string_end(text: str, start: int) -> int:
    """Offset just after the Go string or rune literal opening at `start`."""
    at = start + 1
    while at < len(text) and text[at] != text[start]:
        at += 2 if text[at] == "\\" and text[start] != "`" else 1
    return at + 1


def _operand_start(text: str, end: int) -> int:
    at = end
    while at > 0:
        char = text[at - 1]
        if char.isalnum() or char in "_.":
            at -= 1
        elif char in ")]":
            depth, at = 0, at - 1
            while at >= 0:
                depth += {")": 1, "]": 1, "(": -1, "[": -1}.get(text[at], 0)
                if depth == 0:
                    break
                at -= 1
        else:
            break
    return at


def _input_fields(test: str, var: str, compared: set[str]) -> list[str]:
    """Fields of `var` the test reads outside its failure calls and `t.Run`'s name, less its
    mode flags (compared to nil or a literal: `errCase != "none"`) and fields named for errors."""
    quiet = []
    for call in _NOT_RUN_CALLS.finditer(test):
        arguments = call_arguments(test, call.end() - 1, **_SCAN) or []
        if arguments and call[0].endswith(".Run("):
            quiet.append(arguments[0])
        elif arguments:
            quiet.append((arguments[0][0], arguments[-1][1]))
    flags = set(re.findall(rf"\b{re.escape(var)}\.(\w+)\s*[!=]=\s*(?:nil\b|[\"'`\d-])", test))
    fields = []
    for access in re.finditer(rf"\b{re.escape(var)}\.(\w+)\b", test):
        if access[1] not in compared and not any(start <= access.start() < end for start, end in quiet):
            fields.append(access[1])
    return [field for field in dict.fromkeys(fields) if field not in flags and not _ERROR_NAME.search(field)]


def _field_types(table: go_tables.Table, declarations: str) -> dict[str, str]:
    """The table's element struct's field types by name ({} where unknown)."""
    head = table.text[:table.body]
    match = re.match(r"\[\](?:struct\s*\{(?P<body>.*)\}|(?P<name>[\w.]+))\s*$", head, re.S)
    if match is None:
        return {}
    body = match["body"]
    if body is None:
        named = re.search(rf"^type {re.escape(match['name'])} struct \{{", declarations, re.M)
        if named is None:
            return {}
        body = declarations[named.end():matching_brace(declarations, named.end() - 1, **_SCAN) - 1]
    types = {}
    for line in re.split(r"[;\n]", re.sub(r"//[^\n]*", "", body)):
        found = re.match(r"\s*(\w+(?:\s*,\s*\w+)*)\s+(\S+)", line)
        if found:
            types.update((name.strip(), found[2]) for name in found[1].split(","))
    return types


def _is_float(type_name: str | None, declarations: str) -> bool:
    if type_name is None:
        return False
    if _FLOAT.match(type_name):
        return True
    named = re.search(rf"^type {re.escape(type_name.lstrip('[]'))}\s+(\S+)", declarations, re.M)
    return named is not None and bool(_FLOAT.match(named[1]))


def _expected_of(table: go_tables.Table, values: Mapping[str, tuple[int, int]], comparisons, types: Mapping[str, str],
                 declarations: str) -> tuple[str, int, int, object] | None:
    """(field, span, shape, original value) of the entry's expected value: its first compared
    field holding a literal `read` writes back; None where another compared field holds one
    too (two answers) or none does."""
    found = []
    for field, *_ in comparisons:
        if field in values:
            shape = _shape(table.text[slice(*values[field])])
            if shape is not None:
                found.append((field, *values[field], shape))
    if len(found) != 1 or _is_float(types.get(found[0][0]), declarations):
        return None
    return found[0]


def _shape(literal: str) -> tuple[str, object] | None:
    """('int'|'str'|'bool'|'slice:[]T', value) of a literal `read` can write back."""
    if literal.strip().startswith('"'):  # any length: the slot is rewritten whole
        value = go_tables.go_string(literal.strip())
        return None if value is None else ("str", value)
    value = go_tables.go_value(literal.strip())
    if isinstance(value, bool):
        return "bool", value
    if isinstance(value, int):
        return "int", value
    literal = literal.strip()
    match = _FLAT_SLICE.match(literal)
    if match is None or matching_brace(literal, match.end() - 1, **_SCAN) != len(literal):
        return None
    spans = call_arguments(literal, match.end() - 1, **_SCAN) or []
    elements = [go_tables.go_value(literal[start:end]) for start, end in spans]
    if any(element is None for element in elements):
        return None
    return f"slice:[]{match['type']}", elements


def _expects_error(table: go_tables.Table, values: Mapping[str, tuple[int, int]], test: str, var: str,
                   answer: str) -> bool:
    """An entry that expects an error: a field named for errors holding anything but nil,
    false, "" or a string the test compares that field to (hexadecimal's `errCase != "none"`),
    or a `valid`/`ok` field false; never the field that holds the answer (`valid` may be it)."""
    for field, span in values.items():
        if field == answer:
            continue
        literal = table.text[slice(*span)].strip()
        if _SUCCESS_NAME.match(field) and literal == "false":
            return True
        if not _ERROR_NAME.search(field) or literal in ("nil", "false", '""'):
            continue
        compared = re.findall(rf"\b{re.escape(var)}\.{re.escape(field)}\s*[!=]=\s*(\"[^\"\n]*\")", test)
        if literal not in compared:
            return True
    return False


# --- the inputs --------------------------------------------------------------------------------

def _points(table: go_tables.Table, span: tuple[int, int]) -> list[tuple[str, int, int, tuple]]:
    """The mutable literals of one input field's value: (kind, start, end, context) with kind
    'int', 'hex', 'str' (the value itself or a slice's element; context: the slice's integers)
    or 'reorder' (a flat slice of two or more elements; context: the elements' spans)."""
    start, end = span
    literal = table.text[start:end]
    value = go_tables.go_value(literal)
    if isinstance(value, int) and not isinstance(value, bool):
        return [("hex" if literal.lower().startswith("0x") else "int", start, end, ())]
    if isinstance(value, str) and literal.startswith('"') and value:
        return [("str", start, end, ())]
    match = _FLAT_SLICE.match(literal)
    if match is None or matching_brace(table.text, start + match.end() - 1, **_SCAN) != end:
        return []
    elements = call_arguments(table.text, start + match.end() - 1, **_SCAN) or []
    values = [go_tables.go_value(table.text[a:b]) for a, b in elements]
    if not elements or any(item is None or isinstance(item, bool) for item in values):
        return []
    points = [("reorder", start, end, tuple(elements))] if len(elements) >= 2 else []
    integers = tuple(item for item in values if isinstance(item, int))
    for (a, b), item in zip(elements, values):
        if isinstance(item, int):
            points.append(("element", a, b, integers))
        elif table.text[a:b].startswith('"') and item:
            points.append(("str", a, b, ()))
    return points


def _mutation(table: go_tables.Table, slot, types: Mapping[str, str], inputs: Sequence[str], rng: random.Random):
    """(the entry, the field, the edit in the table's text) of one input changed, or None."""
    entry, values, expected, field, (kind, start, end, context) = slot
    text = table.text
    entry_text = text[entry[0]:entry[1]]
    numbers = stated_integers(entry_text)
    if kind == "reorder":
        pair = reorder([text[a:b] for a, b in context], rng)
        if pair is None:
            return None
        (a0, a1), (b0, b1) = context[pair[0]], context[pair[1]]
        edit = (a0, b1, text[b0:b1] + text[a1:b0] + text[a0:a1])
    elif kind == "element":
        others = sorted({value for value in context if (value < 0) == (go_tables.go_value(text[start:end]) < 0)}
                        - {go_tables.go_value(text[start:end])})
        if not others:
            return None
        edit = (start, end, str(rng.choice(others)))
    elif kind == "str":
        new = mutate_str(go_tables.go_value(text[start:end]), rng, numbers)
        if new is None or not _plain(new):
            return None
        edit = (start, end, go_tables.go_literal(new))
    else:
        edit = _new_integer(text[start:end], types.get(field), rng, numbers, kind == "hex")
        if edit is None:
            return None
        edit = (start, end, edit)
    if not _fresh(table, entry, values, field, edit, inputs) or not _in_field_range(table, field, kind, edit):
        return None
    if kind == "str" and not keeps_named_clusters(_names_of(table, values, field), text[start:end], edit[2]):
        return None
    return entry, values, expected, edit


def _plain(value: str) -> bool:
    return '"' not in value and "\\" not in value and "\n" not in value


def _new_integer(literal: str, type_name: str | None, rng: random.Random, numbers: Sequence[int],
                 hexadecimal: bool) -> str | None:
    """Another integer of the same sign and digit count (as many hex digits for a hex literal)
    within the field's type (an overflowing constant does not compile: every probe of the
    package would be lost); None where the type is not an integer type the table names."""
    bound = _INT_BOUNDS.get(type_name or "")
    value = go_tables.go_value(literal)
    if bound is None or not isinstance(value, int):
        return None
    if hexadecimal:
        digits = len(literal) - 2
        options = [n for n in (rng.randrange(16 ** digits) for _ in range(16))
                   if n != value and len(f"{n:x}") == len(f"{value:x}") and n <= bound]
        return f"{options[0]:#x}" if options else None
    for _ in range(8):
        new = mutate_int(value, rng, numbers)
        if new is None:
            return None
        if abs(new) <= bound and (new >= 0 or not type_name.startswith(("uint", "byte"))):
            return str(new)
    return None


def _fresh(table: go_tables.Table, entry: tuple[int, int], values: Mapping[str, tuple[int, int]], field: str,
           edit: tuple[int, int, str], inputs: Sequence[str]) -> bool:
    """Whether the changed entry's inputs are no other entry's: an input another entry states
    is answered by a memorized table (the table's kin of `keeps_fresh`)."""
    def spelled(text: str) -> str:
        return re.sub(r"\s+", "", text)

    span = values[field]
    mine = {name: spelled(table.text[slice(*values[name])]) for name in inputs if name in values}
    mine[field] = spelled(table.text[span[0]:edit[0]] + edit[2] + table.text[edit[1]:span[1]])
    for other in table.entries:
        own = {name: spelled(table.text[start:end]) for name, start, end in go_tables.entry_values(table, other)}
        if other != entry and all(own.get(name) == text for name, text in mine.items()):
            return False
    return True


def _is_input_like(field: str) -> bool:
    return not re.search(r"(?i)^(description|name|desc|explain\w*)$", field)


def _in_field_range(table: go_tables.Table, field: str, kind: str, edit: tuple[int, int, str]) -> bool:
    """An integer field the table writes VOCABULARY_USES times or more keeps within the values
    it writes there (a month stays 1 to 12: the table's kin of `keeps_argument_range`)."""
    if kind not in ("int", "hex"):
        return True
    written = [go_tables.go_value(table.text[start:end]) for entry in table.entries
               for name, start, end in go_tables.entry_values(table, entry) if name == field]
    written = [value for value in written if isinstance(value, int) and not isinstance(value, bool)]
    new = go_tables.go_value(edit[2])
    return len(written) < VOCABULARY_USES or min(written) <= new <= max(written)


def _names_of(table: go_tables.Table, values: Mapping[str, tuple[int, int]], changed: str) -> set[str]:
    """The clusters the entry's name (its string fields other than the changed one that are no
    input: `description`) names: pig-latin's `word beginning with yt`."""
    clusters: set[str] = set()
    for field, span in values.items():
        literal = table.text[slice(*span)]
        if field != changed and not _is_input_like(field) and literal.startswith('"'):
            clusters |= named_clusters(go_tables.go_value(literal) or "")
    return clusters


# --- the candidate: the copy's inline table, the probe ------------------------------------------

def _candidate(name: str, test: str, name_span: tuple[int, int], table: go_tables.Table, comparisons,
               change) -> Candidate:
    entry, values, expected, edit = change
    field, slot_start, slot_end, (shape, original) = expected
    entry_text = table.text[entry[0]:entry[1]]
    changed = apply_edits(entry_text, [(edit[0] - entry[0], edit[1] - entry[0], edit[2])])
    shift = len(edit[2]) - (edit[1] - edit[0]) if edit[1] <= slot_start else 0
    head = "(" + table.text[:table.body + 1] + "\n\t"
    inline = head + changed + ",\n})"
    slot = (len(head) + slot_start - entry[0] + shift, len(head) + slot_end - entry[0] + shift)
    comparison = next(c for c in comparisons if c[0] == field)
    return TableCandidate(test=name, input_edit=(name_span[0], name_span[1], inline), expected=name_span,
                          statement=_probe(test, comparison, shape), original=original,
                          input_context=(entry_text, (edit[0] - entry[0], edit[1] - entry[0], edit[2])), slot=slot)


def _probe(test: str, comparison: tuple[str, int, int, int, int], shape: str) -> tuple[int, int, str]:
    _, start, end, actual_start, actual_end = comparison
    t = [match[1] for match in _T_PARAMETER.finditer(test, 0, start)][-1]
    half = len(OBSERVED) // 2  # never whole in the source a report may quote
    return (start, end, f'func() bool {{ {t}.Fatalf("%s%s%s %#v", "{OBSERVED[:half]}", "{OBSERVED[half:]}", '
                        f'"{shape}", {test[actual_start:actual_end]}); return {test[start:end]} }}()')


# --- reading an observed value back -------------------------------------------------------------

_GO_TOKEN = re.compile(r'\s*("(?:[^"\\]|\\.)*"|-?0x[0-9a-fA-F]+|-?\d+|true|false|[{}(),]|\[\][\w.]+|nil)')
_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "\\": "\\", '"': '"',
            "'": "'"}


def read(observed: str) -> tuple[object, str] | None:
    """`SHAPE %#v-TEXT` (the probe's report) into (the value, the literal written in the
    expected slot), or None where the text is no value of that shape."""
    shape, _, text = observed.strip().partition(" ")
    tokens = []
    position = 0
    while position < len(text.rstrip()):
        match = _GO_TOKEN.match(text, position)
        if match is None:
            return None
        tokens.append(match[1])
        position = match.end()
    if shape.startswith("slice:"):
        return _read_slice(shape[6:], tokens)
    if len(tokens) != 1:
        return None
    value = _scalar(tokens[0])
    if value is None or {"int": int, "str": str, "bool": bool}.get(shape) is not type(value):
        return None
    return value, (str(value) if shape == "int" else tokens[0])


def _scalar(token: str) -> int | str | bool | None:
    if token in ("true", "false"):
        return token == "true"
    if re.fullmatch(r"-?0x[0-9a-fA-F]+|-?\d+", token):
        return int(token, 0) if not re.fullmatch(r"-?0\d+", token) else None
    if token.startswith('"'):
        return _unquote(token)
    return None


def _unquote(token: str) -> str | None:
    out, body, index = [], token[1:-1], 0
    while index < len(body):
        if body[index] != "\\":
            out.append(body[index])
            index += 1
            continue
        code = body[index + 1:index + 2]
        if code in _ESCAPES:
            out.append(_ESCAPES[code])
            index += 2
            continue
        sized = {"x": 2, "u": 4, "U": 8}.get(code)
        digits = body[index + 2:index + 2 + sized] if sized else ""
        if not sized or not re.fullmatch(r"[0-9a-fA-F]+", digits) or len(digits) != sized:
            return None
        out.append(chr(int(digits, 16)))
        index += 2 + sized
    return "".join(out)


def _read_slice(type_text: str, tokens: list[str]) -> tuple[object, str] | None:
    """`[]T{a, b}` or `[]T(nil)` (fmt's own type name: `[]uint8` for a `[]byte`) written back
    with the table's type `type_text`."""
    if len(tokens) < 3 or not _FLAT_SLICE.match(tokens[0] + "{"):
        return None
    if tokens[1:] == ["(", "nil", ")"]:
        return [], "nil"
    if tokens[1] != "{" or tokens[-1] != "}":
        return None
    items = tokens[2:-1]
    values = [_scalar(token) for token in items[::2]]
    if any(token != "," for token in items[1::2]) or (items and len(items) % 2 == 0):
        return None
    element = type_text[2:]
    kind = str if element == "string" else bool if element == "bool" else int
    if any(type(value) is not kind for value in values):
        return None
    return values, f"{type_text}{{" + ", ".join(items[::2]) + "}"


DERIVER = VariantDeriver(derive=lambda test, name, rng: [], read=read, for_instance=for_instance)
