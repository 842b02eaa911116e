"""Canary tests planted at grading time: evidence that a forged report cannot produce.

The code under test shares a process with the test runner, so it can rewrite whatever the
runner reports (results, exit code, console summary). A canary is a test that a CORRECT
solution must fail, and it carries no tell (issue 25). For each chosen test T:

- the canary is a COPY of T's own text in which one assertion's expected value, a plain
  literal or a named constant (`Assertion`, found by the language's `Mutator`), is replaced by
  a fresh value of the same type and shape (`fresh_value`: one that appears where the original
  appears, `appearance_profile`, so no reader places the pair's values; issue 32);
  it sits right before or right after T, in a drawn order;
- every test of T's file is renamed (names made of its neighbours' words, `neighbour_name`):
  T, its copy and the others, so no name is upstream's or says which of a pair is the copy;
- the copy must fail with the framework's own message for that assertion, the new value in the
  expected slot (`Mutation.failure`, a regex on whole lines of a capped message).

A chosen test with no mutable assertion (and every test of a language without a mutator)
falls back to the former scheme under fresh names: the canary runs the renamed T, then fails
on two fresh numbers (`expected`, `actual`), in the framework's exact format where the
language gives it (`Planter.fallback_failure`). Grading picks mutable tests first.

Resolved then requires every canary reported failed with its message, every real test passed
(names mapped back), and every expected test present. So a report that flips failures to
passes shows a canary passed; disabled assertions, or a returned value that equals anything,
let the mutated copy pass; a report fabricated from the expected names lacks the canaries; a
forger that spares or flips by name finds no upstream name; one that recognises canaries by
shape (a test calling a test, two 5-digit literals) finds none where a copy is planted.

Planters are pure text functions, one per language (its module in utils/languages/ builds a
`Planter` from this module's generic parts: scanning, renaming, planting into a tree, reading
the results back), unit-tested without Docker. Preparation plants every eligible test at once
on the reference solution and records the tests whose canary behaved (`canary_sources`);
grading plants a random few of those with values from the OS's random source. Planting is a
pure function of the pristine file and the canaries (`plant_text`), so feedback redoes it.
"""

from __future__ import annotations

import functools
import re
import secrets
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Collection, Sequence

from .regular_files import read_regular, regular_files
from .runner_results import capped_message

if TYPE_CHECKING:
    from .runner_results import TestCase

CANARIES_PER_GRADING = 3


class CanaryError(ValueError):
    """A test file does not have the shape a planter expects."""


@dataclass(frozen=True)
class Mutation:
    """A canary that is a copy of its real test with ONE assertion's expected literal
    replaced (offsets relative to the test's own text) by a fresh value of the same type."""
    start: int
    end: int
    literal: str      # the new literal as source text
    failure: str      # regex (re.M) of the framework's failure message for the new value
    first: bool       # the copy runs before the real test (drawn: order says nothing)
    # The real test's own span rewritten the copy's way with its value unchanged, where the
    # copy's rewrite changes more than the value (Go: the table written inline, the entry moved
    # last, the gate): the pair then differs in the value alone. None: the real test as it is.
    real_literal: str | None = None


@dataclass(kw_only=True, frozen=True)
class Canary:
    source: str       # the test's upstream name
    hidden_name: str  # the name the real test runs under in this grading
    expected: int     # the fallback canary's final assertion compares these two numbers
    actual: int
    name: str = ""    # the name the canary runs under ("" = `source`: the fallback scheme)
    mutation: Mutation | None = None
    # The fallback's failure regex, when the language knows its framework's format.
    fallback_failure: str = ""
    # (hidden, upstream) names of the file's other tests, renamed in the same grading so
    # that no name is upstream's: carried by the file's first canary.
    renames: tuple[tuple[str, str], ...] = ()

    @property
    def reported_name(self) -> str:
        return self.name or self.source

    @property
    def failure(self) -> str:
        return self.mutation.failure if self.mutation else self.fallback_failure

    def carries_secret(self, message: str) -> bool:
        """The canary's failure message is the framework's own message for its assertion (a
        capped message, ANSI colours stripped): a regex of the exact format with this
        grading's value, never a substring test alone."""
        message = ANSI.sub("", capped_message(message))
        if self.failure:
            return re.search(self.failure, message, re.M) is not None
        return str(self.expected) in message and str(self.actual) in message


ANSI = re.compile(r"\x1b\[[0-9;]*m")


@dataclass(frozen=True)
class TestUnit:
    """One test in a test file: its name and the text span of its whole definition."""
    name: str
    start: int
    end: int
    body_start: int = -1  # offset just after the opening brace, where the language needs it


@dataclass(frozen=True)
class Leaf:
    """Where a test's own name sits inside a name the runner reported."""
    name: str
    start: int
    is_child: bool = False  # a subtest / nested case under that test (Go's TestX/sub)


# --- names -----------------------------------------------------------------------------------

def _words(name: str, style: str) -> list[str]:
    if style == "words":
        return name.split()
    if style == "snake":
        return [word for word in name.split("_") if word]
    return re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z0-9]+|[A-Z]", name)


def _join(words: list[str], style: str) -> str:
    if style == "words":
        return " ".join(words)
    if style == "snake":
        return "_".join(words)
    camel = "".join(word[:1].upper() + word[1:] for word in words)
    return camel[:1].lower() + camel[1:] if style == "lower_camel" else camel


def neighbour_name(names: Sequence[str], taken: set[str], style: str, text: str,
                   rng: secrets.SystemRandom) -> str:
    """A new test name made of the first half of one neighbour's words and the second half of
    another's: shaped like the file's own names, not derived from the test it hides."""
    word_lists = [_words(name, style) for name in names if _words(name, style)]
    vocabulary = [word for words in word_lists for word in words[1:]] or ["case"]
    for attempt in range(200):
        first, second = rng.choice(word_lists), rng.choice(word_lists)
        words = first[: max(1, len(first) // 2)] + second[len(second) // 2:]
        if attempt >= 20:  # small files run out of pairs: longer names
            words = words + [rng.choice(vocabulary) for _ in range(1 + attempt // 60)]
        candidate = _join(words, style)
        if candidate not in taken and candidate not in text:
            return candidate
    raise CanaryError("no fresh test name found")


# --- scanning --------------------------------------------------------------------------------

def brace_positions(text: str, start: int = 0, quotes: str = "\"'", backtick: bool = False):
    """(offset, brace) of every { and } from `start` on, skipping strings, character literals
    and comments (C-family syntax; Go's backtick strings when `backtick`)."""
    index = start
    length = len(text)
    while index < length:
        char = text[index]
        if text.startswith("//", index):
            index = line_end(text, index)
            continue
        if text.startswith("/*", index):
            end = text.find("*/", index + 2)
            index = length if end < 0 else end + 2
            continue
        if char in quotes or (backtick and char == "`"):
            index = _string_end(text, index, char)
            continue
        if char in "{}":
            yield index, char
        index += 1


def matching_brace(text: str, open_at: int, quotes: str = "\"'", backtick: bool = False) -> int:
    """Offset just after the brace closing the one at `open_at`."""
    depth = 0
    for index, brace in brace_positions(text, open_at, quotes, backtick):
        depth += 1 if brace == "{" else -1
        if depth == 0:
            return index + 1
    raise CanaryError("unbalanced braces")


def _string_end(text: str, start: int, quote: str) -> int:
    index = start + 1
    while index < len(text):
        if text[index] == "\\" and quote != "`":
            index += 2
            continue
        if text[index] == quote:
            return index + 1
        if text[index] == "\n" and quote in "\"'":
            return index + 1  # an apostrophe in a comment-like position (e.g. Rust lifetimes)
        index += 1
    return index


def call_arguments(text: str, open_at: int, quotes: str = "\"'", backtick: bool = False,
                   hash_comments: bool = False) -> list[tuple[int, int]] | None:
    """Spans (stripped) of the top-level comma-separated arguments of the call whose `(` is at
    `open_at`; None when the call does not close. Strings and comments are skipped."""
    spans, depth, start, index = [], 0, open_at + 1, open_at
    while index < len(text):
        char = text[index]
        if (hash_comments and char == "#") or (not hash_comments and text.startswith("//", index)):
            index = line_end(text, index)
            continue
        if char in quotes or (backtick and char == "`"):
            index = _string_end(text, index, char)
            continue
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            if depth == 0:
                spans.append((start, index))
                return [_stripped(text, a, b) for a, b in spans if text[a:b].strip()]
        elif char == "," and depth == 1:
            spans.append((start, index))
            start = index + 1
        index += 1
    return None


def _stripped(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


_INT_LITERAL = re.compile(r"-?(?:0|[1-9][0-9]{0,17})")
# Printable ASCII no language escapes or interpolates inside its plain quotes.
_PLAIN_STRING = re.compile(r"(?P<quote>[\"'])(?P<body>[A-Za-z0-9 ,.!?:;()\[\]/+*=<>_#@%&|~^-]{1,60})(?P=quote)")


@dataclass(frozen=True)
class LiteralSyntax:
    """How a language writes the plain literals a canary may mutate, and a local bound to one
    (`binding`: a regex with groups `name` and `value`, e.g. `let expected = 5;`)."""
    quotes: str
    booleans: tuple[str, str] | None
    binding: re.Pattern[str] | None = None
    symbols: bool = False  # a named constant (`Symbol`) counts as a literal too

    def value(self, source: str) -> int | str | bool | Symbol | None:
        value = plain_literal(source, self.quotes, self.booleans)
        return symbol_value(source) if value is None and self.symbols else value

    def side(self, test: str, span: tuple[int, int]) -> tuple[int, int, int | str | bool] | None:
        """An assertion's side that is a plain literal, or a local bound to one before it and
        used nowhere else (so changing the binding changes only that assertion): the
        literal's span and value."""
        source = test[span[0]:span[1]]
        value = self.value(source)
        if value is not None:
            return span[0], span[1], value
        if self.binding is None or not re.fullmatch(r"[A-Za-z_]\w*", source):
            return None
        # Every mention counts (a member access too): the binding must change this assertion only.
        if len(re.findall(rf"(?<![\w$]){source}(?![\w$])", test)) != 2:
            return None
        for match in self.binding.finditer(test, 0, span[0]):
            if match["name"] == source:
                value = self.value(match["value"])
                return None if value is None else (match.start("value"), match.end("value"), value)
        return None


def list_element(test: str, span: tuple[int, int], syntax: LiteralSyntax,
                 **scan) -> tuple[int, int, int | str, int] | None:
    """A flat list literal `[a, b, ...]` at `span`: its first element that is a plain integer
    or string (span, value, index), the one a canary mutates; None otherwise."""
    if not (test.startswith("[", span[0]) and test[span[1] - 1] == "]"):
        return None
    elements = call_arguments(test, span[0], **scan)
    if not elements or elements[-1][1] != span[1] - 1:
        return None
    for index, (start, end) in enumerate(elements):
        value = syntax.value(test[start:end])
        if value is not None and not isinstance(value, bool):
            return start, end, value, index
    return None


def plain_literal(source: str, quotes: str = "\"", booleans: tuple[str, str] | None = None) -> int | str | bool | None:
    """The value of a plain literal: a decimal integer, a short string of letters, digits,
    spaces and punctuation that no language escapes (in one of `quotes`), or one of
    `booleans` (false, true); None for anything else."""
    if _INT_LITERAL.fullmatch(source):
        return int(source)
    match = _PLAIN_STRING.fullmatch(source)
    if match and match["quote"] in quotes:
        return match["body"]
    if booleans and source in booleans:
        return source == booleans[1]
    return None


@dataclass(frozen=True)
class Symbol:
    """A named constant written as an expected value (an enum's constant, a class's static
    field): `qualifier` + `name`, e.g. `perfect_numbers::classification::` + `abundant`. A
    canary swaps it for another name the test files write under the same qualifier, so a type
    whose equality always holds passes the copy (issue 32)."""
    qualifier: str
    name: str

    def __str__(self) -> str:
        return self.qualifier + self.name


_SYMBOL = re.compile(r"(?P<qualifier>(?:[A-Za-z_]\w*(?:::|\.))+)(?P<name>[A-Za-z_]\w*)")
# Not a constant when a call, a struct literal, a deeper path or a member access follows.
_NOT_A_CONSTANT_AFTER = re.compile(r"\s*(?:[({!]|::|\.[A-Za-z_])")


def symbol_value(source: str) -> Symbol | None:
    """`source` as a qualified constant (`A::b`, `A.B`), None otherwise."""
    match = _SYMBOL.fullmatch(source.strip())
    return Symbol(match["qualifier"], match["name"]) if match and _a_type_path(match["qualifier"]) else None


def _a_type_path(qualifier: str) -> bool:
    """A path names a type or a namespace (`::`), a dotted one only when its last part is
    capitalised (Java's `Winner.NONE`): `t.expected` is a variable's field, and its
    neighbours (`t.input`) need not share its type."""
    return qualifier.endswith("::") or qualifier.rstrip(".").rsplit(".", 1)[-1][:1].isupper()


def symbols_in(text: str, qualifier: str) -> list[Symbol]:
    """The constants `text` writes under `qualifier`, in order of first appearance."""
    names: dict[str, None] = {}
    for match in re.finditer(rf"(?<![\w.:]){re.escape(qualifier)}(?P<name>[A-Za-z_]\w*)\b", text):
        if not _NOT_A_CONSTANT_AFTER.match(text, match.end()):
            names.setdefault(match["name"])
    return [Symbol(qualifier, name) for name in names]


def constant_point(test: str, span: tuple[int, int], constant: Callable[[str], bool],
                   **scan) -> tuple[int, int, Symbol | int | str] | None:
    """In an expected side built of constants only (`constant`, the language's test, e.g.
    `Some(Classification::Abundant)`, `Err(Error::InvalidRowCount(3))`): the first qualified
    constant or plain integer or string in it (its span and value), the point a canary changes."""
    source = test[span[0]:span[1]]
    if not constant(source):
        return None
    index = span[0]
    while index < span[1]:
        char = test[index]
        if char in scan.get("quotes", "\""):
            end = _string_end(test, index, char)
            value = plain_literal(test[index:end], scan.get("quotes", "\""))
            if isinstance(value, str):
                return index, end, value
            index = end
            continue
        match = _SYMBOL.match(test, index, span[1])
        if match and _a_type_path(match["qualifier"]) and (index == 0 or not re.match(r"[\w.:]", test[index - 1])):
            if not _NOT_A_CONSTANT_AFTER.match(test, match.end()):
                return index, match.end(), Symbol(match["qualifier"], match["name"])
            index = match.end()
            continue
        number = _INT_LITERAL.match(test, index, span[1])
        if number and not re.match(r"[\w.]", test[index - 1]) and not re.match(r"[\w.]", test[number.end():number.end() + 1] or " "):
            return index, number.end(), int(number.group())
        word = re.compile(r"\w+").match(test, index, span[1])
        index = word.end() if word else index + 1
    return None


def constructed_point(test: str, span: tuple[int, int], syntax: LiteralSyntax, constructed: Callable[[str], bool],
                      quotes: str = "\"") -> tuple[int, int, int | str] | None:
    """An expected side that builds a value of the solution's own type from constants only
    (`constructed`, the language's test: `new Rational(7, 6)`, `SgfTree(properties={"A": ["B"]})`),
    written in the assertion or bound to a local used nowhere else: its first literal, the
    point a canary changes. Two different values of that type are then asserted equal, so a
    type whose equality always holds (or whose state the test process cannot see) passes the
    copy: `canary_passed` (issue 32)."""
    source = test[span[0]:span[1]]
    if syntax.binding is not None and re.fullmatch(r"[A-Za-z_$][\w$]*", source):
        if len(re.findall(rf"(?<![\w$]){re.escape(source)}(?![\w$])", test)) != 2:
            return None
        bound = [match for match in syntax.binding.finditer(test, 0, span[0]) if match["name"] == source]
        if not bound:
            return None
        span = bound[-1].span("value")
    return constant_point(test, span, constructed, quotes=quotes)

# --- values built by calls (issue 32, equality canaries): a language-agnostic hook -----------

def built_point(test: str, span: tuple[int, int], quotes: str = "\"", prefer: type = object,
                skip: str = "'", inside_strings: bool = False) -> tuple[int, int, int | str] | None:
    """In an expected side built by calls (`decimal("0.3")`, `new Rational(7, 6)`,
    `Optional.of(new WordLocation(new Pair(1, 1), ..))`): the first plain integer or string
    literal in it (of type `prefer` when it has one), the point a canary changes. Changing
    it changes the expected value a correct solution is compared with, so the copy fails on
    a correct solution and passes on a type whose equality always holds. Integers that index
    (`BIGS[2]`), or are part of a name or a decimal number, are no such point; `skip` quotes
    (character literals) are stepped over. With `inside_strings`, a string literal that is not
    plain (escapes: `"Ten green bottles,\\n"`) offers its first run of plain text as a point:
    its span lies inside the quotes, so the caller writes the new value raw (no quotes)."""
    found: list[tuple[int, int, int | str]] = []
    index = span[0]
    while index < span[1]:
        char = test[index]
        if test.startswith("//", index):
            index = line_end(test, index)
            continue
        if char in quotes or char in skip:
            end = _string_end(test, index, char)
            value = plain_literal(test[index:end], quotes) if char in quotes else None
            if isinstance(value, str):
                found.append((index, end, value))
            elif inside_strings and char in quotes and (run := plain_run(test, index + 1, end - 1)) is not None:
                found.append(run)
            index = end
            continue
        number = _INT_LITERAL.match(test, index, span[1])
        if number and not re.match(r"[\w.\[]", test[index - 1]) and not re.match(r"[\w.\]]", test[number.end():number.end() + 1] or " "):
            found.append((index, number.end(), int(number.group())))
            index = number.end()
            continue
        word = re.compile(r"\w+").match(test, index, span[1])
        index = word.end() if word else index + 1
    preferred = [point for point in found if isinstance(point[2], prefer)]
    return (preferred or found or [None])[0]


# Text a string literal holds as it is written (no escape, no quote), in runs that hold a word.
_PLAIN_RUN = re.compile(r"[A-Za-z0-9 ,.!?:;()/+*=<>_#@%&|~^-]*[A-Za-z]{2}[A-Za-z0-9 ,.!?:;()/+*=<>_#@%&|~^-]*")


def plain_run(test: str, start: int, end: int) -> tuple[int, int, str] | None:
    """The first run of plain text between `start` and `end` (a string literal's body),
    stepping over escapes (`\\n`, `\\u00e9`): at most 60 characters, whole words."""
    index = start
    while index < end:
        if test[index] == "\\":
            index += 2
            continue
        match = _PLAIN_RUN.match(test, index, end)
        if match:
            text = match.group()
            if len(text) > 60:
                text = text[:60].rsplit(" ", 1)[0] if " " in text[:60] else text[:60]
            return (index, index + len(text), text)
        index += 1
    return None


def same_up_to_literals(left: str, right: str) -> bool:
    """Whether two sides of an assertion are one expression with different literals
    (`info.name_for("TGT") == info.name_for("TGY")`): a relation between two of the
    solution's answers, not an expected value. Changing a literal of such a side changes an
    INPUT, and a correct solution may answer the new input alike (TGC is cysteine too), so
    no built-value canary may change it (a correct solution would pass the copy)."""
    def shape(side: str) -> str:
        side = re.sub(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'', '"', side)
        return re.sub(r"\s+", "", re.sub(r"(?<![\w.])-?\d[\w.]*", "0", side))
    return shape(left) == shape(right)


def line_end(text: str, offset: int) -> int:
    end = text.find("\n", offset)
    return len(text) if end < 0 else end + 1


def apply_edits(text: str, edits: list[tuple[int, int, str]]) -> str:
    """Replace spans (start, end, new) that do not overlap; insertions have start == end."""
    for start, end, new in sorted(edits, key=lambda edit: (edit[0], edit[1]), reverse=True):
        text = text[:start] + new + text[end:]
    return text


# --- the planter: what a language module provides -------------------------------------------

@dataclass(kw_only=True, frozen=True)
class Assertion:
    """One assertion of a test whose expected value is a plain literal."""
    start: int   # the literal's span in the test's own text
    end: int
    value: int | str | bool
    failure: Callable[[int | str | bool], str]  # a new expected value -> regex of the message
    # How a new value is written here, when not as the language's literal (AssertJ's isTrue()).
    written: Callable[[int | str | bool], str] | None = None
    # Where a reader sees the value when its slot lies outside the test (Go's table beside
    # it): (that text with the slot left out, that text); None: the test's own text.
    context: tuple[str, str] | None = None
    # The real test's span written the copy's way too, its value unchanged (`written` of the
    # original value: Go's inline table), so the pair differs in the value alone.
    symmetric: bool = False
    # A literal inside an expected value built by calls (`built_point`): its copy can leave the
    # value equal (`decimal("1.00")` for `decimal("1.0")`), and preparation then drops the test.
    built: bool = False

    @classmethod
    def at(cls, point: tuple, failure: Callable[[int | str | bool], str], **more) -> "Assertion":
        """An assertion at `point` ((start, end, value, ...): the shape the languages' readers
        return), failing with `failure`."""
        start, end, value = point[:3]
        return cls(start=start, end=end, value=value, failure=failure, **more)


@dataclass(frozen=True)
class Mutator:
    """How a language copies a test into a canary: its assertions with literal expected
    values, renaming a test, writing a value as a literal."""
    assertions: Callable[[str], list[Assertion]]  # a test's own text -> in source order
    rename: Callable[[str, str, str], str]        # a test's text, its name, the new name
    literal: Callable[[int | str | bool], str]
    # (a test's own text, every test file joined) -> assertions, for a language whose
    # expected values sit outside the test (Go's tables): used instead of `assertions`.
    assertions_in: Callable[[str, str], list[Assertion]] | None = None

    def find(self, test: str, every_test: str) -> list[Assertion]:
        return self.assertions_in(test, every_test) if self.assertions_in else self.assertions(test)


@dataclass(frozen=True)
class FailureSections:
    """How a runner's text output sets one test's failure apart (utils/judging/feedback.py
    leaves out a mutated copy's, whose values are not upstream's): a line that starts a test's
    section (regex; group `name`: the name as reported), a line that ends any section, what
    joins a reported name's parts before the test's own (`Class.test`, `describe › title`), and
    a one-line mention of a test outside its section (group `name`; "" none), e.g. a summary."""
    header: str
    boundary: str
    separator: str
    mention: str = ""


@dataclass(kw_only=True, frozen=True)
class Planter:
    """How canaries are planted into one language's test files."""
    file_globs: tuple[str, ...]
    name_style: str
    find_units: Callable[[str], list[TestUnit]]
    # The fallback scheme, for a test with no assertion the mutator can change: the real
    # test renamed, a canary calling it then failing on two fresh numbers.
    plant_file: Callable[[str, list[tuple[TestUnit, Canary]]], str]
    leaf: Callable[[str], Leaf | None]  # a reported test name -> the test's own name in it
    mutator: Mutator | None = None
    # (expected, actual) -> regex of the framework's message for the fallback's assertion.
    fallback_failure: Callable[[int, int], str] | None = None
    # Every test file's planted text (by path) -> those it changes further: what only the whole
    # package shows (Go: a table no test ranges over any more is emptied).
    finish: Callable[[dict[str, str]], dict[str, str]] | None = None
    # A test file's text and its tests -> one key per test: the block whose setup the test runs
    # under (a class, a `describe`, a `mod`). A variant is planted anywhere among the tests of
    # its source's block (utils/judging/variants.py: `draw_gap`). None: the file is one block.
    scopes: Callable[[str, list[TestUnit]], list[object]] | None = None
    # Where the runner's output holds each test's failure (None: not known, lines are scrubbed one by one).
    failure_sections: FailureSections | None = None


def brace_scopes(quotes: str = "\"'", backtick: bool = False) -> Callable[[str, list[TestUnit]], list[object]]:
    """Scopes of C-family syntax: a test's key is the offsets of the braces around it (a
    class body, a `describe` callback, a `mod`), so two tests share a key when they sit
    directly in the same block."""
    def scopes(text: str, units: list[TestUnit]) -> list[object]:
        starts = sorted(unit.start for unit in units)
        keys: dict[int, tuple[int, ...]] = {}
        stack: list[int] = []
        braces = iter(brace_positions(text, 0, quotes, backtick))
        pending = next(braces, None)
        for start in starts:
            while pending is not None and pending[0] < start:
                if pending[1] == "{":
                    stack.append(pending[0])
                elif stack:
                    stack.pop()
                pending = next(braces, None)
            keys[start] = tuple(stack)
        return [keys[unit.start] for unit in units]
    return scopes


def plant_after(text: str, chosen: list[tuple[TestUnit, Canary]], declaration: str,
                canary_text: Callable[[str, Canary], str]) -> str:
    """Each chosen test renamed in place (`declaration` is how its name is introduced, e.g.
    "def {}("), with its canary right after it: order-dependent suites still run in order."""
    edits = []
    for unit, canary in chosen:
        block = text[unit.start:unit.end].rstrip("\n") + "\n"
        indent = block[: len(block) - len(block.lstrip())]
        renamed = block.replace(declaration.format(canary.source), declaration.format(canary.hidden_name), 1)
        edits.append((unit.start, unit.end, renamed + "\n" + canary_text(indent, canary)))
    return apply_edits(text, edits)


def brace_depths(text: str) -> Callable[[int], int]:
    """Brace depth at an offset (strings and comments skipped), for top-level checks."""
    braces = list(brace_positions(text))
    return lambda offset: sum(1 if brace == "{" else -1 for index, brace in braces if index < offset)


# --- planting into a tree --------------------------------------------------------------------

def test_files(tree: Path, planter: Planter, matches: Callable[[str, tuple[str, ...]], bool]) -> list[Path]:
    return [tree / relative for relative in regular_files(tree) if matches(relative, planter.file_globs)]


def plant(tree: Path, planter: Planter, matches: Callable[[str, tuple[str, ...]], bool],
          sources: Sequence[str] | None, count: int | None,
          rng: secrets.SystemRandom | None = None, exclude: Collection[str] = ()) -> tuple[Canary, ...]:
    """Plant canaries into the test files under `tree` (rewritten in place).

    `sources`: the tests that may become canaries (None: every eligible test); `exclude`: tests
    that never do (variants planted beside the real tests); `count`: how many to plant (None:
    all of them; else tests whose assertion can be mutated first).
    Every test of a file that holds a canary is renamed. Returns the planted canaries."""
    rng = rng or secrets.SystemRandom()
    files = {path: read_regular(tree, path.relative_to(tree).as_posix()).decode("utf-8", errors="surrogateescape")
             for path in test_files(tree, planter, matches)}
    units = {path: planter.find_units(text) for path, text in files.items()}
    all_names = {unit.name for file_units in units.values() for unit in file_units}
    eligible = [(path, unit) for path, file_units in units.items() for unit in file_units
                if (sources is None or unit.name in sources) and unit.name not in exclude]
    eligible = _unique_names(eligible)
    every_test = "\n".join(files.values())
    assertions = {unit.name: _first_assertion(planter, files[path], unit, every_test) for path, unit in eligible}
    pools = {path: _value_pool(planter, files[path], units[path], every_test) for path in files}
    docs = _documents(tree)
    contexts = {unit.name: ValueContext(files[path], unit, every_test, docs) for path, unit in eligible}
    values = {unit.name: _draw(contexts[unit.name], assertions[unit.name], pools[path], rng)
              for path, unit in eligible if assertions[unit.name] is not None}
    chosen = _choose(eligible, count, lambda unit: unit.name in values, rng,
                     lambda unit: unit.name in values and values[unit.name][1] == 0,
                     lambda unit: unit.name in values and assertions[unit.name].built)
    namer = _Namer(sorted(all_names), set(all_names), planter.name_style, every_test, rng)
    per_file: dict[Path, list[tuple[TestUnit, Canary]]] = {}
    for path, unit in chosen:
        canary = _canary(planter, contexts[unit.name], assertions[unit.name], values.get(unit.name, (None, 0))[0],
                         namer, rng)
        per_file.setdefault(path, []).append((unit, canary))
    canaries: list[Canary] = []
    texts = dict(files)
    for path, planted in per_file.items():
        if planter.mutator is not None:
            planted = _with_renames(planted, units[path], namer)
        canaries += [canary for _, canary in planted]
        texts[path] = plant_text(planter, files[path], planted)
    if planter.finish is not None and per_file:
        texts.update(planter.finish(texts))
    for path, text in texts.items():
        if text != files[path]:
            path.write_text(text, encoding="utf-8", errors="surrogateescape")
    return tuple(canaries)


def _draw(context: ValueContext, assertion: Assertion, pool: list, rng: secrets.SystemRandom) -> tuple[object, int]:
    """The copy's value for a test, and how far its appearance is from the real one's. Inside
    a built value, never a literal its own test already writes elsewhere: the copy of
    java__sgf-parsing's `Map.of("A", List.of("b"), "C", List.of("d"))` drew "C" for "A" and
    threw `duplicate key` on the reference instead of failing its assertion (a correct
    solution graded `canary_without_secret`, CI of 2026-11-29)."""
    words = sorted(set(re.findall(r"[A-Za-z]{2,}|[0-9]+", context.every_test)))
    taken = _own_literals(context, assertion) if assertion.built else frozenset()
    return drawn_value(assertion.value, pool, rng, words, context.profile(assertion), taken)


def _own_literals(context: ValueContext, assertion: Assertion) -> frozenset:
    """The plain string and integer literals of the test's own text, its slot left out."""
    own, _ = context.own(assertion)
    strings = {match.group(1) for match in re.finditer(r'"([^"\\\n]*)"', own)}
    numbers = {int(match.group()) for match in re.finditer(r"(?<![\w.])\d+(?![\w.])", own)}
    return frozenset(strings | numbers)


def _documents(tree: Path) -> str:
    """The instructions in the tree (`.docs/`), where a reader looks a value up too."""
    return "\n".join(read_regular(tree, relative).decode("utf-8", errors="replace")
                     for relative in regular_files(tree) if relative.startswith(".docs/"))


@dataclass
class _Namer:
    names: list[str]
    taken: set[str]
    style: str
    text: str
    rng: secrets.SystemRandom

    def fresh(self) -> str:
        name = neighbour_name(self.names, self.taken, self.style, self.text, self.rng)
        self.taken.add(name)
        return name


def _choose(eligible: list, count: int | None, mutable: Callable[[TestUnit], bool],
            rng: secrets.SystemRandom, untellable: Callable[[TestUnit], bool] = lambda unit: True,
            built: Callable[[TestUnit], bool] = lambda unit: False) -> list:
    """Every eligible test, or `count` of them: one whose copy changes a value built of the
    solution's own type (`built`: only such a copy catches a type whose equality always holds,
    so every grading that can plant one does, red team 3), then tests with a mutable assertion
    whose copy's value appears exactly where the real one does (`untellable`), then the other
    mutable ones (their canaries carry no tell of shape), the fallback's only to make up the
    number."""
    if count is None:
        return eligible
    builts = [item for item in eligible if built(item[1])]
    picked: list = rng.sample(builts, 1) if builts and count else []
    tiers = [[item for item in eligible if mutable(item[1]) and untellable(item[1])],
             [item for item in eligible if mutable(item[1]) and not untellable(item[1])],
             [item for item in eligible if not mutable(item[1])]]
    for tier in tiers:
        rest = [item for item in tier if item not in picked]
        picked += rng.sample(rest, min(count - len(picked), len(rest)))
    return picked


def _first_assertion(planter: Planter, text: str, unit: TestUnit, every_test: str = "") -> Assertion | None:
    """The test's first assertion with a mutable expected value (a named constant only when
    the test files write another under its qualifier): the same one at preparation (which
    checks the canary behaves on the reference) and at every grading."""
    if planter.mutator is None:
        return None
    for assertion in planter.mutator.find(text[unit.start:unit.end], every_test or text):
        if not isinstance(assertion.value, Symbol) or _alternatives(assertion.value, every_test or text):
            return assertion
    return None


def _alternatives(symbol: Symbol, text: str) -> list[Symbol]:
    return [other for other in symbols_in(text, symbol.qualifier) if other != symbol]


def _value_pool(planter: Planter, text: str, units: list[TestUnit], every_test: str = "") -> list[int | str | bool | Symbol]:
    """Every expected value of the file's tests (and the constants written under the
    qualifier of each named one): the candidates a mutated value is chosen among first."""
    if planter.mutator is None:
        return []
    values = [assertion.value for unit in units
              for assertion in planter.mutator.find(text[unit.start:unit.end], every_test or text)]
    return values + [other for value in values if isinstance(value, Symbol) for other in _alternatives(value, text)]


@dataclass(frozen=True)
class ValueContext:
    """Where a reader of the planted tests looks a pair's values up: the test's own text
    (the mutated slot left out), the rest of the test files, the instructions."""
    text: str        # the test's file
    unit: TestUnit
    every_test: str  # every test file of the instance, joined
    docs: str

    def own(self, assertion: Assertion) -> tuple[str, str]:
        """(the test's own text with the assertion's slot left out, that text whole); for a
        slot outside the test (Go's table), the text that holds it."""
        if assertion.context is not None:
            return assertion.context
        own_text = self.text[self.unit.start:self.unit.end]
        return own_text[:assertion.start] + " " + own_text[assertion.end:], own_text

    def profile(self, assertion: Assertion) -> Callable[[object], tuple[int, ...]]:
        own, own_text = self.own(assertion)
        return lambda value: appearance_profile(value, own, self.every_test, self.docs, own_text)


def appearance_profile(value: object, own: str, tests: str, docs: str, own_text: str = "") -> tuple[int, ...]:
    """What a reader holding the tests and the instructions can see of a value besides its
    slot: how often it appears in its own test, in the other tests (`tests` less `own_text`,
    the test with its slot), in the instructions (`_magnitude`), and for a string how many of
    its words appear nowhere there. Counts in the whole files are cached: grading draws for
    every eligible test."""
    rest = _occurrences(value, tests) - (_occurrences(value, own_text) if own_text else 0)
    counts = (_magnitude(_occurrences(value, own)), _magnitude(rest), _magnitude(_occurrences(value, docs)))
    if not isinstance(value, str):
        return counts
    unknown = sum(1 for word in re.findall(r"[A-Za-z]{2,}", value)
                  if not any(_occurrences(word, text) for text in (own, tests, docs)))
    return counts + (min(3, unknown),)


def _occurrences(value: object, text: str) -> int:
    return _cached_occurrences(type(value).__name__, value, text)


@functools.lru_cache(maxsize=65536)
def _cached_occurrences(kind: str, value: object, text: str) -> int:
    return len(_value_pattern(value).findall(text))


def _magnitude(count: int) -> int:
    """0, 1, 2 as they are, then one step per doubling (3, 4-7, 8-15, ...): a reader compares
    how often two values appear, and a few more or fewer among many says little."""
    return count if count < 3 else 2 + count.bit_length() - 1


def _value_pattern(value: object) -> re.Pattern[str]:
    if isinstance(value, Symbol):
        return re.compile(rf"(?<![\w]){re.escape(value.name)}(?!\w)")
    if isinstance(value, bool):
        return re.compile(rf"\b{str(value).lower()}\b", re.I)
    # A reader searches for a value as a token: not inside a longer word or number.
    return re.compile(rf"(?<![\w.]){re.escape(str(value))}(?![\w.])")


def _canary(planter: Planter, context: ValueContext, assertion: Assertion | None, value: object,
            namer: _Namer, rng: secrets.SystemRandom) -> Canary:
    unit, text = context.unit, context.text
    hidden = namer.fresh()
    name = namer.fresh() if planter.mutator else ""  # without a renamer: the upstream name
    if name and rng.random() < 0.5:
        # Which drawn name the real test gets is a coin: names drawn later run longer in a small
        # file (`neighbour_name`), so the first drawn always going to the real test named it
        # (red team 9: go__wordy's real test was TestAnswerAnswer, its copy TestAnswerAnswerAnswer,
        # 30 of 30 plantings; a Go solution reading the test table from memory chose by that).
        hidden, name = name, hidden
    expected, actual = rng.sample(range(10_000, 99_999), 2)
    if assertion is None:
        failure = planter.fallback_failure(expected, actual) if planter.fallback_failure else ""
        return Canary(source=unit.name, hidden_name=hidden, expected=expected, actual=actual, name=name, fallback_failure=failure)
    literal = str(value) if isinstance(value, Symbol) else (assertion.written or planter.mutator.literal)(value)
    original = text[unit.start + assertion.start:unit.start + assertion.end]
    if isinstance(value, str) and original[:1] in "'\"" and literal[:1] in "'\"":
        literal = original[0] + literal[1:-1] + original[0]  # the file's own quote style
    real = assertion.written(assertion.value) if assertion.written and assertion.symmetric else None
    mutation = Mutation(assertion.start, assertion.end, literal, assertion.failure(value),
                        rng.random() < 0.5, real_literal=real)
    return Canary(source=unit.name, hidden_name=hidden, expected=expected, actual=actual, name=name, mutation=mutation)


def _with_renames(planted: list[tuple[TestUnit, Canary]], units: list[TestUnit],
                  namer: _Namer) -> list[tuple[TestUnit, Canary]]:
    """The file's other tests get fresh names too, carried by its first canary."""
    chosen = {unit.name for unit, _ in planted}
    renames = tuple((namer.fresh(), unit.name) for unit in units if unit.name not in chosen)
    first_unit, first = planted[0]
    return [(first_unit, replace(first, renames=renames))] + planted[1:]


def plant_text(planter: Planter, text: str, planted: Sequence[tuple[TestUnit, Canary]]) -> str:
    """The test file with its canaries: every test renamed (a mutated copy beside each chosen
    one), then the fallback canaries planted by the language's own scheme. A pure function
    of the pristine text and the canaries (feedback redoes it)."""
    renames = {source: hidden for _, canary in planted for hidden, source in canary.renames}
    by_unit = {unit.name: canary for unit, canary in planted}
    units = planter.find_units(text)
    if planter.mutator is None:
        return planter.plant_file(text, list(planted))
    rename = planter.mutator.rename
    edits = []
    for unit in units:
        block = text[unit.start:unit.end]
        canary = by_unit.get(unit.name)
        if canary is None:
            if unit.name in renames:
                edits.append((unit.start, unit.end, rename(block, unit.name, renames[unit.name])))
            continue
        if canary.mutation is None:  # renamed to the canary's name; the fallback plants it below
            edits.append((unit.start, unit.end, rename(block, unit.name, canary.reported_name)))
            continue
        indent = text[text.rfind("\n", 0, unit.start) + 1:unit.start]
        edits.append((unit.start, unit.end, _pair(block, unit.name, canary, rename, indent if not indent.strip() else "")))
    text = apply_edits(text, edits)
    fallback = {canary.reported_name: canary for _, canary in planted if canary.mutation is None}
    if not fallback:
        return text
    chosen = [(unit, replace(fallback[unit.name], source=unit.name)) for unit in planter.find_units(text)
              if unit.name in fallback]
    return planter.plant_file(text, chosen)


def _pair(block: str, name: str, canary: Canary, rename: Callable[[str, str, str], str], indent: str) -> str:
    """The real test under its hidden name and its mutated copy, in the drawn order (`indent`:
    what precedes the test on its first line)."""
    mutation = canary.mutation
    real_block = block if mutation.real_literal is None else \
        block[:mutation.start] + mutation.real_literal + block[mutation.end:]
    real = rename(real_block, name, canary.hidden_name)
    copy = rename(block[:mutation.start] + mutation.literal + block[mutation.end:], name, canary.name)
    real, copy = real.rstrip("\n"), copy.rstrip("\n")
    trailing = block[len(block.rstrip("\n")):]
    gap = "\n\n" + indent
    return (copy + gap + real if mutation.first else real + gap + copy) + trailing


def _unique_names(eligible: list[tuple[Path, TestUnit]]) -> list[tuple[Path, TestUnit]]:
    counts: dict[str, int] = {}
    for _, unit in eligible:
        counts[unit.name] = counts.get(unit.name, 0) + 1
    return [(path, unit) for path, unit in eligible if counts[unit.name] == 1]


# --- fresh values ----------------------------------------------------------------------------

_INT_BOUNDS = (127, 255, 32_767, 65_535, 2**31 - 1, 2**32 - 1, 2**63 - 1)


def fresh_value(value: int | str | bool | Symbol, pool: Sequence, rng: secrets.SystemRandom,
                words: Sequence[str] = (),
                profile: Callable[[object], tuple[int, ...]] | None = None) -> int | str | bool | Symbol:
    """A value of the same type as `value`, never equal to it, that a reader holding the tests
    cannot tell from it (issue 32): among candidates of the same type and shape (the file's
    other expected values, integers of the same sign, digit count and width written in the
    file or drawn, strings with one word swapped for a word of the file or some letters
    changed, the other constants under a named one's qualifier), one whose `profile` (where
    else it appears: `appearance_profile`) is the original's, else the nearest. Drawn from
    the file's own values only, a copy's value was always another test's real one, and the
    real test of a pair was the one whose value appeared nowhere else. A boolean is flipped."""
    return drawn_value(value, pool, rng, words, profile)[0]


def drawn_value(value, pool: Sequence, rng: secrets.SystemRandom, words: Sequence[str] = (),
                profile: Callable[[object], tuple[int, ...]] | None = None,
                taken: frozenset = frozenset()) -> tuple[object, int]:
    """`fresh_value` and how far its profile is from the original's (0: none can tell); never
    one of `taken` while another candidate is left."""
    if isinstance(value, bool):  # no choice: how far it is still decides which tests grading picks
        return not value, (_distance(profile(not value), profile(value)) if profile else 0)
    options = _candidates(value, pool, rng, words)
    options = [option for option in options if option not in taken or isinstance(option, bool)] or options
    if not options:
        raise CanaryError(f"no other value for {value!r}")
    if profile is None:
        return rng.choice(options), 0
    target = profile(value)
    distances = [_distance(profile(option), target) for option in options]
    nearest = min(distances)
    return rng.choice([option for option, distance in zip(options, distances) if distance == nearest]), nearest


def _distance(profile: tuple[int, ...], target: tuple[int, ...]) -> int:
    return sum(abs(a - b) for a, b in zip(profile, target))


def _candidates(value: int | str | Symbol, pool: Sequence, rng: secrets.SystemRandom,
                words: Sequence[str]) -> list:
    alike = [other for other in pool if type(other) is type(value) and other != value and _same_shape(other, value)]
    if isinstance(value, Symbol):
        return sorted(set(alike), key=str)
    if isinstance(value, int):
        written = [int(word) for word in words if word.isdigit() and _same_shape(int(word), value) and int(word) != value]
        drawn = [_fresh_int(value, rng) for _ in range(24)]
        return sorted(set(alike + written + [number for number in drawn if number != value]))
    swapped = [_swap_a_word(value, words, rng) for _ in range(12)]
    changed = [_fresh_string(value, rng) for _ in range(12)]
    return sorted({option for option in alike + swapped + changed if option is not None and option != value})


def _swap_a_word(value: str, words: Sequence[str], rng: secrets.SystemRandom) -> str | None:
    spans = [match.span() for match in re.finditer(r"[A-Za-z]{2,}", value)]
    rng.shuffle(spans)
    for start, end in spans:
        old = value[start:end]
        options = sorted({word for word in words if word != old and _capitalised(word) == _capitalised(old)
                          and word.lower() != old.lower()})
        if options:
            return value[:start] + rng.choice(options) + value[end:]
    return None


def _capitalised(word: str) -> str:
    return "upper" if word.isupper() else "title" if word[:1].isupper() else "lower"


def _same_shape(other, value) -> bool:
    if isinstance(value, Symbol):
        return other.qualifier == value.qualifier  # a constant of the same enum
    if isinstance(value, str):
        return True  # any other expected string of the file reads like a real one
    return (other < 0) == (value < 0) and len(str(abs(other))) == len(str(abs(value))) \
        and abs(other) <= _bound(abs(value))


def _bound(magnitude: int) -> int:
    return next((bound for bound in _INT_BOUNDS if magnitude <= bound), magnitude)


def _fresh_int(value: int, rng: secrets.SystemRandom) -> int:
    digits = len(str(abs(value)))
    low = (1 if value < 0 else 0) if digits == 1 else 10 ** (digits - 1)  # -0 is no negative number
    high = min(10 ** digits - 1, _bound(abs(value)))
    choices = [number for number in (rng.randint(low, high) for _ in range(20)) if number != abs(value)]
    magnitude = choices[0] if choices else (abs(value) + 1 if abs(value) < high else abs(value) - 1)
    return -magnitude if value < 0 else magnitude


def _char_class(char: str) -> str:
    return "a" if char.islower() else "A" if char.isupper() else "0" if char.isdigit() else char


def _fresh_string(value: str, rng: secrets.SystemRandom) -> str:
    pools = {"a": "abcdefghijklmnopqrstuvwxyz", "A": "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "0": "0123456789"}
    positions = [index for index, char in enumerate(value) if _char_class(char) in pools]
    if not positions:
        return value + value[-1:] if value else "a"  # nothing to vary in place: one longer
    chars = list(value)
    for index in rng.sample(positions, max(1, len(positions) // 3)):
        options = pools[_char_class(value[index])].replace(value[index], "")
        chars[index] = rng.choice(options)
    return "".join(chars)


# --- reading the results back ----------------------------------------------------------------

def case_leaf(case, leaf_of: Callable[[str], Leaf | None]) -> Leaf | None:
    if case.leaf_start >= 0:
        return Leaf(case.name[case.leaf_start:], case.leaf_start)
    return leaf_of(case.name)


def _section_parent(leaf: Leaf | None, *names: dict) -> Leaf | None:
    """Catch reports a SECTION as `case/section`: such a leaf belongs to the planted case."""
    if leaf is None or any(leaf.name in known for known in names):
        return leaf
    for known in names:
        for name in known:
            if leaf.name.startswith(name + "/"):
                return Leaf(name, leaf.start, True)
    return leaf


def separate(results, canaries: Sequence[Canary], leaf_of: Callable[[str], Leaf | None],
             in_test_files: Callable[[TestCase], bool] = lambda case: True):
    """Split runner results into (the real tests, names mapped back to upstream; each
    canary's own case by source). A canary's own case is the one reported under its name;
    cases under it (Go subtests it ran) count only when that is missing (Catch reports a
    case with SECTIONs only as `case/section`, and the mutated assertion sits in one): then
    a failed one, else any. Only cases
    `in_test_files` (where canaries are planted) can be a canary or a renamed test: a
    solution's own test that shares a canary's leaf name (Rust's `tests::add` beside a
    hidden `add`) stays a real test. Narrowing can only hide a canary, never forge one."""
    from .runner_results import PASSED, TestResults

    by_reported = {canary.reported_name: canary for canary in canaries}
    by_hidden = {canary.hidden_name: canary.source for canary in canaries}
    by_hidden.update((hidden, source) for canary in canaries for hidden, source in canary.renames)
    real = []
    own = {}
    children: dict[str, list[TestCase]] = {}
    for case in results.cases:
        if not in_test_files(case):
            real.append(case)
            continue
        leaf = _section_parent(case_leaf(case, leaf_of), by_reported, by_hidden)
        if leaf is not None and leaf.name in by_reported:
            source = by_reported[leaf.name].source
            if leaf.is_child:
                children.setdefault(source, []).append(case)
            else:
                own[source] = case
            continue
        if leaf is not None and leaf.name in by_hidden:
            source = by_hidden[leaf.name]
            name = case.name[:leaf.start] + source + case.name[leaf.start + len(leaf.name):]
            # A leaf that ends the name (jest's title) still does: later readers (split_variants) find it.
            tail = case.leaf_start >= 0 and leaf.start + len(leaf.name) == len(case.name)
            case = replace(case, name=name, leaf_start=leaf.start if tail else -1)
        real.append(case)
    for source, cases in children.items():
        if source not in own:
            own[source] = next((case for case in cases if case.outcome != PASSED), cases[0])
    for canary in canaries:
        _message_from_children(canary, own, children.get(canary.source, []))
    return TestResults(tuple(real), results.report_files, results.problems, results.caught), own


def _message_from_children(canary: Canary, own: dict, children: list) -> None:
    """Go reports a subtest's failure message under the subtest, not its parent: a canary whose
    mutated table entry runs as a subtest carries its message in a failed child. The parent's
    outcome stands (a parent reported passed is still `canary_passed`)."""
    from .runner_results import PASSED

    if canary.source not in own or canary.carries_secret(own[canary.source].message):
        return
    carrier = next((case for case in children if case.outcome != PASSED and canary.carries_secret(case.message)), None)
    if carrier is not None:
        own[canary.source] = replace(own[canary.source], message=carrier.message)
