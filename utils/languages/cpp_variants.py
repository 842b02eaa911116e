"""C++'s variant candidates (docs/variants-cpp.md; utils/judging/variants.py), read with
tree-sitter (utils/judging/syntax.py).

C++ keeps expected values out of the sandbox: its answer key (docs/answer-key.md,
utils/languages/cpp_key.py) rewrites each convertible `REQUIRE(X == Y)` so that the test binary
reports what the solution side X rendered to, and the host compares that with the reference's
renderings. So a C++ variant needs no expected literal written back: it is a copy of a test ALL
of whose assertions the key holds, with one input literal changed, every assertion of the copy
converted into an observation (its expected side and the locals only it used deleted, as the
key's rewrite does), and its expected value is what the reference's copy observed, kept on the
host (`Variant.observations`). The probe is the variant itself (`KeyedCandidate`).

Which tests: every `REQUIRE`/`CHECK`-like macro of the body is one of the answer key's
assertions (one in-process assertion would compare the new input's answer with the old
expected value). Inputs: integer literals (same sign and digit count, within the smallest
integer type the original fits in: an overflowing or narrowed literal is a compile error that
would lose every probe of the file; an element of an all-integer braced list becomes another
value the list uses), string literals (`mutate_str`, simple escapes only), braced lists of two or
more literals of one kind (reordered). Never an expected side or a local it needs, an index, a
template argument, a character, a float, nothing in a lambda or after the last assertion.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass, replace
from typing import Iterator, Mapping, NamedTuple, Sequence

import tree_sitter

from ..judging.canaries import TestUnit
from ..judging.syntax import Source
from ..judging.variants import (Candidate, KeyedCandidate, VariantDeriver, first_candidates, mutate_int, mutate_str,
                                reorder, stated_integers)
from . import cpp_key

_WRAPPER = "void polyglot_variant_body() "
_INT = re.compile(r"(?P<sign>-?)(?P<digits>0[xX][0-9a-fA-F]+|[1-9][0-9]*|0)(?P<suffix>[uUlL]{0,3})")
_BOUNDS = (127, 255, 32767, 65535, 2**31 - 1, 2**32 - 1, 2**63 - 1, 2**64 - 1)
_NEGATIVE_BOUNDS = (128, 32768, 2**31, 2**63)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "'": "'", "0": "\0", "a": "\a", "b": "\b",
            "f": "\f", "v": "\v", "?": "?"}
# Subtrees that hold no input: a type's or an index's numbers, a callback's logic, characters,
# raw and adjacent strings, the preprocessor's.
_SKIPPED = frozenset(("template_argument_list", "subscript_argument_list", "lambda_expression", "char_literal",
                      "raw_string_literal", "concatenated_string", "sizeof_expression", "static_assert_declaration",
                      "case_statement", "array_declarator", "comment", "alignof_expression"))
_LOOPS = frozenset(("for_statement", "while_statement", "do_statement"))
# Every Catch macro that asserts or structures a test: one not converted keeps the test in-process.
_CATCH_MACROS = re.compile(r"(?<![\w.])(?:REQUIRE|CHECK|FAIL|SUCCEED|WARN|SECTION|STATIC_REQUIRE)\w*\s*\(")


class _Slot(NamedTuple):
    """An input literal: its span in the test file, its kind (int, str, list), its text, and for
    an integer element of a braced list of integers, the list's values."""
    start: int
    end: int
    kind: str
    text: str
    siblings: tuple[int, ...] = ()


@dataclass(frozen=True)
class _Keyed:
    """A test all of whose assertions the key holds: its file, its unit, those assertions."""
    path: str
    text: str
    unit: TestUnit
    chosen: tuple[cpp_key.Candidate, ...]
    original: Mapping[str, tuple[str, ...]]


def for_instance(tests: Mapping[str, str], stubs: Sequence[str],
                 observation_key: Mapping[str, tuple[str, ...]] | None):
    """The `derive` of one instance: its tests whose every assertion the key holds."""
    words = cpp_key.solution_words(stubs)
    keyed: dict[str, _Keyed] = {}
    for path, text in tests.items():
        ids = frozenset(i[len(path) + 1:] for i in observation_key or {} if i.startswith(path + ":"))
        found = cpp_key.candidates(text, words, ids) if ids else []
        for unit in cpp_key.find_units(text):
            mine = tuple(c for c in found if unit.body_start <= c.start < unit.end)
            if mine and _only_keyed(text, unit, mine):
                original = {f"{path}:{c.id}": tuple(observation_key[f"{path}:{c.id}"]) for c in mine}
                keyed[unit.name] = _Keyed(path, text, unit, mine, original)

    def derive(source: str, name: str, rng: random.Random) -> list[Candidate]:
        entry = keyed.get(name)
        if entry is None or entry.text[entry.unit.start:entry.unit.end] != source:
            return []
        return derive_keyed(entry, name, rng)
    return derive


def _only_keyed(text: str, unit: TestUnit, chosen: Sequence[cpp_key.Candidate]) -> bool:
    """Whether every Catch macro of the test's body is one of `chosen`."""
    body = cpp_key._without_comments(cpp_key._STRING.sub(lambda m: " " * len(m[0]), text[unit.body_start:unit.end]))
    starts = {c.start for c in chosen}
    return all(unit.body_start + match.start() in starts for match in _CATCH_MACROS.finditer(body))


def derive_keyed(entry: _Keyed, name: str, rng: random.Random) -> list[Candidate]:
    """Up to CANDIDATES_PER_TEST candidates of one keyed test."""
    text, unit = entry.text, entry.unit
    body = text[unit.body_start - 1:unit.end]
    source = Source("cpp", _WRAPPER + body)
    if source.has_errors:
        return []
    base = unit.body_start - 1 - len(_WRAPPER)
    excluded = _expected_spans(entry.chosen)
    last = max(c.end for c in entry.chosen)
    slots = [slot for slot in _slots(source, source.root, base)
             if slot.end <= last and not any(s <= slot.start < e for s, e in excluded)]
    slots = _unrelated(slots)
    numbers = stated_integers(text[unit.body_start:unit.end])
    return first_candidates(slots, rng, lambda slot: _mutation(slot, text, rng, numbers),
                            lambda edit: _candidate(entry, name, edit))


def _unrelated(slots: list[_Slot]) -> list[_Slot]:
    """The slots but a scalar literal the test writes twice among its inputs: the two state a
    relation (`push(61)` then `erase(61)`), and one changed alone asks what the tests never do
    (cpp__linked-list's `erase(41)` of a value not in the list, where the reference compares the
    sentinel's uninitialised value first: its answer changed between gradings)."""
    scalars = [slot.text for slot in slots if slot.kind != "list" and not slot.siblings]
    return [slot for slot in slots if slot.kind == "list" or slot.siblings or scalars.count(slot.text) == 1]


def _expected_spans(chosen: Sequence[cpp_key.Candidate]) -> list[tuple[int, int]]:
    """The file spans no input is taken from: each assertion's expected side, the locals it needs."""
    spans = []
    for c in chosen:
        spans += [(c.start, c.observed_start), (c.observed_start + len(c.observed), c.end)]
        spans += list(c.deleted)
    return spans


# --- the input slots ------------------------------------------------------------------------

def _slots(source: Source, node: tree_sitter.Node, base: int, siblings: tuple[int, ...] = ()) -> Iterator[_Slot]:
    """Every input literal under `node` (`base`: the file offset of the parsed text's start)."""
    if node.type in _SKIPPED or node.type.startswith("preproc"):
        return
    if node.type in _LOOPS:
        # How often a test repeats something is no input of the exercise: a loop's header is
        # never varied, its body is (cpp__bank-account's `i < 1000` threads became 1175-3995,
        # more than a grading's process limit holds under load).
        body = node.child_by_field_name("body")
        if body is not None:
            yield from _slots(source, body, base, siblings)
        return
    start, end = source.span(node)
    if node.type == "number_literal":
        if _INT.fullmatch(source.text_of(node).replace("'", "")) and "'" not in source.text_of(node):
            yield _Slot(start + base, end + base, "int", source.text_of(node), siblings)
        return
    if node.type == "string_literal":
        if source.text_of(node).startswith('"') and _unquote(source.text_of(node)):
            yield _Slot(start + base, end + base, "str", source.text_of(node))
        return
    elements = node.named_children if node.type == "initializer_list" else []
    if len(elements) >= 2 and _alike(source, elements):
        yield _Slot(start + base, end + base, "list", source.text_of(node))
    values = tuple(_int_value(source.text_of(child)) for child in elements)
    inner = values if elements and all(value is not None for value in values) else ()
    for child in node.named_children:
        yield from _slots(source, child, base, inner)


def _alike(source: Source, elements: list[tree_sitter.Node]) -> bool:
    """Elements a reorder keeps the types of: all integers, all strings, or all braced lists of
    one length (never a constructor's arguments of different types: `{May, 2013}`)."""
    kinds = {element.type for element in elements}
    if kinds == {"number_literal"}:
        return all(_int_value(source.text_of(element)) is not None for element in elements)
    if kinds == {"string_literal"}:
        return True
    return kinds == {"initializer_list"} and len({element.named_child_count for element in elements}) == 1


def _int_value(text: str) -> int | None:
    match = _INT.fullmatch(text)
    if match is None:
        return None
    digits = match["digits"]
    value = int(digits, 16) if digits[:2] in ("0x", "0X") else int(digits)
    return -value if match["sign"] else value


def _mutation(slot: _Slot, text: str, rng: random.Random, numbers: list[int]) -> tuple[int, int, str] | None:
    start, end, kind, literal, siblings = slot
    if kind == "int":
        new = _mutate_literal(literal, siblings, rng, numbers)
        return None if new is None else (start, end, new)
    if kind == "str":
        new = mutate_str(_unquote(literal), rng, numbers)
        return None if new is None else (start, end, _quote(new))
    return _reordered(start, end, text, rng)


def _mutate_literal(literal: str, siblings: tuple[int, ...], rng: random.Random, numbers: list[int]) -> str | None:
    """Another integer literal of the same sign, size and suffix: within a braced list of
    integers another value the list uses, a hex one as many hex digits."""
    match = _INT.fullmatch(literal)
    magnitude, negative = abs(_int_value(literal)), bool(match["sign"])
    if siblings:
        others = sorted({abs(value) for value in siblings if (value < 0) == negative} - {magnitude})
        return f"{match['sign']}{rng.choice(others)}{match['suffix']}" if others else None
    bound = next((b for b in (_NEGATIVE_BOUNDS if negative else _BOUNDS) if magnitude <= b), None)
    if bound is None:
        return None
    if match["digits"][:2] in ("0x", "0X"):
        width = len(match["digits"]) - 2
        options = [n for n in (rng.randrange(16 ** width) for _ in range(16))
                   if n != magnitude and len(f"{n:x}") == len(f"{magnitude:x}") and n <= bound]
        return f"{match['sign']}{match['digits'][:2]}{options[0]:0{width}x}{match['suffix']}" if options else None
    for _ in range(8):
        new = mutate_int(magnitude, rng, numbers)
        if new is None:
            return None
        if new <= bound:
            return f"{match['sign']}{new}{match['suffix']}"
    return None


def _reordered(start: int, end: int, text: str, rng: random.Random) -> tuple[int, int, str] | None:
    """A braced list with two of its different elements swapped."""
    source = Source("cpp", _WRAPPER + "{ auto x = " + text[start:end] + "; }")
    lists = [node for node in source.walk() if node.type == "initializer_list"]
    if not lists:
        return None
    offset = len(_WRAPPER) + len("{ auto x = ")
    elements = [(s - offset + start, e - offset + start) for s, e in map(source.span, lists[0].named_children)]
    pair = reorder([text[s:e] for s, e in elements], rng)
    if pair is None:
        return None
    (a0, a1), (b0, b1) = elements[pair[0]], elements[pair[1]]
    return a0, b1, text[b0:b1] + text[a1:b0] + text[a0:a1]


def _unquote(literal: str) -> str | None:
    """A plain "..." literal's value (simple escapes only), or None."""
    if len(literal) < 2 or literal[0] != '"' or literal[-1] != '"':
        return None
    out, body, index = [], literal[1:-1], 0
    while index < len(body):
        char = body[index]
        if char == "\\":
            escaped = body[index + 1:index + 2]
            if escaped not in _ESCAPES or (escaped == "0" and body[index + 2:index + 3].isdigit()):
                return None  # octal, hex, unicode: not handled
            out.append(_ESCAPES[escaped])
            index += 2
            continue
        out.append(char)
        index += 1
    return "".join(out)


def _quote(value: str) -> str:
    named = {v: k for k, v in _ESCAPES.items() if k not in "'?"}
    return '"' + "".join("\\" + named[char] if char in named else char for char in value) + '"'


# --- the candidate: the whole copy ------------------------------------------------------------

def _candidate(entry: _Keyed, name: str, edit: tuple[int, int, str]) -> Candidate:
    """The copy's edits (relative to the test's text): every assertion converted, the one the
    input sits in with its observed side changed, the input's own edit where it is elsewhere."""
    start, end, new = edit
    chosen, inside = [], False
    for c in entry.chosen:
        if c.observed_start <= start and end <= c.observed_start + len(c.observed):
            offset = start - c.observed_start
            c = replace(c, observed=c.observed[:offset] + new + c.observed[offset + end - start:])
            inside = True
        chosen.append(c)
    edits = cpp_key.conversion_edits(entry.text, chosen, f"{entry.path}:") + ([] if inside else [edit])
    shift = entry.unit.start
    first = entry.chosen[0]
    return KeyedCandidate(name, (start - shift, end - shift, new), (first.start - shift, first.end - shift), None,
                          dict(entry.original), copy_edits=tuple((s - shift, e - shift, t) for s, e, t in edits))


# --- reading a probe's observations back --------------------------------------------------------

def read(observed: str) -> tuple[object, str] | None:
    """A keyed probe's observations (JSON: id -> renderings) into (the value, the same JSON),
    or None where a rendering is no value a correct solution must share: an enum's value that
    no enumerator the test names renders as the reference's own numbering (`enum:?`)."""
    try:
        observations = json.loads(observed)
    except ValueError:
        return None
    if not isinstance(observations, dict) or not observations:
        return None
    if any(not isinstance(values, list) or any("enum:?" in str(value) for value in values)
           for values in observations.values()):
        return None
    return {assertion: tuple(values) for assertion, values in observations.items()}, observed


def _no_context(source: str, name: str, rng: random.Random) -> list[Candidate]:
    """Without the instance's answer key no C++ test is keyed: no candidate."""
    return []


DERIVER = VariantDeriver(derive=_no_context, read=read, for_instance=for_instance, keyed=True)
