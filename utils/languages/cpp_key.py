"""C++'s answer key (issue 32): the expected side of a hidden assertion never reaches the sandbox.

A C++ solution runs in the test binary's own process and can read all of its memory: every
expected value the binary holds, and Catch's report, are the solution's to read and rewrite.
So at preparation each assertion `REQUIRE(E == A)` / `CHECK(E == A)` whose one side (E) calls
nothing of the solution is rewritten into `polyglot_key::observe("L<line>", A)`, E (and the
locals only E used) deleted from the source; the binary reports what A rendered to (canonically,
by value: never through the solution's operator<< or operator==) and the host compares that
with the reference's renderings recorded in the dataset (the key). See docs/answer-key.md.

Pure text functions: `candidates` (which assertions can be converted, which side is observed),
`rewrite` (the converted test source), `compile_error_lines` (the probe build's refusals),
`parse_observations` and `judge` (the host's comparison).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Iterator, Sequence

from ..judging.canaries import TestUnit, apply_edits, call_arguments, matching_brace

# --- the Catch test-case reader (cpp.py plants canaries with it; the key converts inside it) --

_TEST = re.compile(r'^TEST_CASE\(\s*"(?P<name>[^"\\\n]+)"(?P<tags>\s*,\s*"[^"\n]*")?\s*\)\s*\{', re.M)
_CONDITIONAL = re.compile(r"^[ \t]*#[ \t]*(?P<kind>if|ifdef|ifndef|endif)\b(?P<rest>.*)$", re.M)


def _foreign_conditional(text: str, offset: int) -> bool:
    """Whether `offset` sits inside an #if other than the run-all-tests switch (e.g. benchmarks)."""
    open_conditions: list[str] = []
    for match in _CONDITIONAL.finditer(text, 0, offset):
        if match["kind"] == "endif":
            if open_conditions:
                open_conditions.pop()
        else:
            open_conditions.append(match["rest"])
    return any("EXERCISM_RUN_ALL_TESTS" not in condition for condition in open_conditions)


def find_units(text: str) -> list[TestUnit]:
    units = []
    for match in _TEST.finditer(text):
        end = matching_brace(text, match.end() - 1)
        if 'R"' in text[match.end():end] or _foreign_conditional(text, match.start()):
            continue  # raw strings: not scanned; benchmark-only cases: not compiled
        units.append(TestUnit(match["name"], match.start(), end, body_start=match.end()))
    return units


OBSERVATIONS_FILE = "observations.tsv"  # in the report directory (docker/cpp/polyglot-cpp-test)
_MACRO = re.compile(r"(?<![\w.])(?P<macro>REQUIRE|CHECK)\(")
_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'')
_IDENTIFIER = re.compile(r"(?<![\w.])(?:::)?[A-Za-z_]\w*(?:::[A-Za-z_]\w*)*")
# boost date_time's value types and pure parsers, spelled unqualified under `using namespace
# boost::posix_time` (gigasecond: `const ptime expected(time_from_string("2043-01-01 01:46:40"))`).
_BOOST_DATES = frozenset(("ptime", "time_from_string", "from_simple_string", "from_string", "date", "time_duration",
                          "hours", "minutes", "seconds"))
# Words an expected side may spell besides its locals and named constants: literals and the
# standard types it builds a value with (`std::vector<int>{1, 2}`, `string("x")`).
_PLAIN_WORDS = frozenset((
    "true", "false", "std", "string", "vector", "list", "map", "set", "pair", "tuple", "array", "size_t",
    "int", "long", "unsigned", "short", "char", "bool", "uint8_t", "uint16_t", "uint32_t", "uint64_t",
    "int8_t", "int16_t", "int32_t", "int64_t", "const", "auto", "u", "ul", "ull", "l", "ll", "optional",
    "nullopt", "make_pair", "deque", "unordered_map", "unordered_set", "multiset", "string_view")) | _BOOST_DATES
_TYPE_CALLS = re.compile(r"\b(?:std::)?(?:string|string_view|vector|pair|make_pair|tuple|optional)\b(?:<[^;()]*>)?\s*\("
                         r"|\b(?:boost::(?:posix_time|gregorian)::)?(?:" + "|".join(sorted(_BOOST_DATES)) + r")\s*\(")
_DECLARATION = re.compile(
    r"^(?:const\s+)?(?P<type>(?:::)?[A-Za-z_][\w:]*(?:\s*<.*>)?)(?:\s+const)?\s*[&*]?\s+(?P<name>[A-Za-z_]\w*)\s*"
    r"(?P<init>[={(].*)$", re.S)
_KEYWORDS = frozenset(("return", "throw", "delete", "new", "else", "case", "goto", "using", "typedef"))


@dataclass(kw_only=True, frozen=True)
class Candidate:
    """An assertion that can be converted: its id (`L<line>`, `.n` for the n-th on that
    line), the statement's span, which argument side is the solution's (0 left, 1 right), the
    observed expression, the declarations deleted with it, and the named constants of the
    expected side's qualifiers (enumerators: observed by underlying value)."""
    id: str
    start: int
    end: int
    side: int
    observed: str
    deleted: tuple[tuple[int, int], ...]
    enumerators: tuple[str, ...]
    observed_start: int = 0  # where `observed` starts in the test (a variant changes an input inside it)


@dataclass(frozen=True)
class _Statement:
    """A declaration at the top level of a test body: `TYPE NAME = ...;` / `{...};` / `(...);`."""
    start: int
    end: int  # just after its `;`
    type: str
    name: str
    init: str


def solution_words(stub_texts: Sequence[str]) -> frozenset[str]:
    """The names a call into the solution spells: its namespaces and the functions its stub
    headers declare (`using namespace` lets the tests call them unqualified)."""
    words: set[str] = set()
    for text in stub_texts:
        text = _STRING.sub('""', _without_comments(text))
        words.update(re.findall(r"\bnamespace\s+(\w+)", text))
        words.update(name for name in re.findall(r"\b([A-Za-z_]\w*)\s*\(", text) if name not in _NOT_FUNCTIONS)
    return frozenset(words)


_NOT_FUNCTIONS = _KEYWORDS | {"defined", "if", "for", "while", "switch", "sizeof", "decltype", "alignof", "static_assert"}


def candidates(test: str, solution: frozenset[str], only: frozenset[str] | None = None) -> list[Candidate]:
    """Every convertible assertion of a test file (or those of `only`'s ids), in source order:
    an assertion whose expected locals another statement still uses is left out, until none is."""
    found: list[Candidate] = []
    for unit_start, unit_end in _test_bodies(test):
        statements = _statements(test, unit_start, unit_end)
        for match in _MACRO.finditer(test, unit_start, unit_end):
            candidate = _candidate(test, match, statements, solution)
            if candidate is not None:
                found.append(candidate)
    found = [candidate for candidate in numbered(test, found) if only is None or candidate.id in only]
    while True:
        kept = _deletions_unused(test, found)
        if len(kept) == len(found):
            return kept
        found = kept


def numbered(test: str, found: list[Candidate]) -> list[Candidate]:
    numbered: list[Candidate] = []
    for candidate in found:
        line = f"L{test.count(chr(10), 0, candidate.start) + 1}"
        same = sum(1 for earlier in numbered if earlier.id.split(".")[0] == line)
        numbered.append(replace(candidate, id=line if not same else f"{line}.{same + 1}"))
    return numbered


def _deletions_unused(test: str, found: list[Candidate]) -> list[Candidate]:
    """The candidates whose deleted locals nothing left in their test body spells."""
    kept = []
    for unit_start, unit_end in _test_bodies(test):
        inside = [candidate for candidate in found if unit_start <= candidate.start < unit_end]
        edits = [(c.start - unit_start, c.end - unit_start, _observation(c)) for c in inside]
        edits += [(start - unit_start, end - unit_start, " ") for start, end in {s for c in inside for s in c.deleted}]
        left = _without_comments(_STRING.sub('""', apply_edits(test[unit_start:unit_end], edits)))
        words = set(_IDENTIFIER.findall(left))
        kept += [c for c in inside if not any(_declared_name(test, span) in words for span in c.deleted)]
    return kept


def _declared_name(test: str, span: tuple[int, int]) -> str:
    match = _DECLARATION.match(_without_comments(test[span[0]:span[1] - 1]).strip())
    return match["name"] if match else ""


def _candidate(test: str, match: re.Match[str], statements: list[_Statement],
               solution: frozenset[str]) -> Candidate | None:
    spans = call_arguments(test, match.end() - 1, quotes="\"'")
    if not spans or len(spans) != 1:
        return None
    close = re.compile(r"\s*\)\s*;").match(test, spans[0][1])
    sides = _split_equality(test[slice(*spans[0])])
    if close is None or sides is None:
        return None
    calls = [_calls_solution(side, statements, solution, match.start()) for side in sides]
    if calls.count(True) != 1:
        return None  # both or neither call the solution: stays in-process
    observed = calls.index(True)
    deleted = _expected_locals(sides[1 - observed], statements, match.start())
    if deleted is None:
        return None
    expected_text = sides[1 - observed] + " " + " ".join(statement.init for statement in deleted)
    side_start = spans[0][0] + (0 if observed == 0 else len(sides[0]) + 2)
    return Candidate(id="", start=match.start(), end=close.end(), side=observed, observed=sides[observed].strip(),
                     deleted=tuple((statement.start, statement.end) for statement in deleted),
                     enumerators=_enumerators(test, expected_text, solution),
                     observed_start=side_start + len(sides[observed]) - len(sides[observed].lstrip()))


def _scan(text: str, start: int, end: int) -> Iterator[tuple[int, str, int]]:
    """(offset, character, bracket depth before it) of each character outside strings and
    `//` comments, brackets being ( [ {."""
    depth, index = 0, start
    while index < end:
        char = text[index]
        if text.startswith("//", index):
            index = text.find("\n", index, end) if "\n" in text[index:end] else end
            continue
        if char in "\"'":
            string = _STRING.match(text, index)
            index = string.end() if string else index + 1
            continue
        yield index, char, depth
        depth += 1 if char in "([{" else -1 if char in ")]}" else 0
        index += 1


def _split_equality(argument: str) -> tuple[str, str] | None:
    """The two sides of a lone top-level `==` (no other comparison or logic at top level)."""
    positions: list[int] = []
    for index, char, depth in _scan(argument, 0, len(argument)):
        if depth or (positions and index == positions[-1] + 1):
            continue
        if argument.startswith("==", index):
            positions.append(index)
        elif argument.startswith(("!=", "&&", "||", "<=", ">=", "<<", ">>"), index) or char in "?,":
            return None
    if len(positions) != 1:
        return None
    left, right = argument[:positions[0]], argument[positions[0] + 2:]
    return (left, right) if left.strip() and right.strip() else None


def _calls_solution(side: str, statements: list[_Statement], solution: frozenset[str], before: int,
                    seen: frozenset[str] = frozenset()) -> bool:
    """Whether evaluating `side` may run solution code: a call (or a braced construction) of a
    solution name, any member call, or a local whose declaration does or whose type is the
    solution's and is constructed (`allergies::allergy_test score(5)`)."""
    code = _STRING.sub('""', side)
    for call in re.finditer(r"(?P<receiver>[\w)\]]*)\s*(\.|->)\s*\w+\s*\(", code):
        if not re.fullmatch(r"[A-Za-z_]\w*", call["receiver"]) or _declaration(statements, call["receiver"], before) is None:
            return True  # a member call on what the solution returned (or on a name not declared here)
    for word in _IDENTIFIER.findall(code):
        if word.lstrip(":").split("::")[0] in solution and re.search(re.escape(word) + r"\s*[({]", code):
            return True
        local = _declaration(statements, word, before)
        if local is not None and word not in seen and (
                _calls_solution(local.init, statements, solution, local.start, seen | {word})
                or (local.type.lstrip(":").split("::")[0] in solution and local.init.lstrip()[:1] in "({")):
            return True
    return False


def _expected_locals(expected: str, statements: list[_Statement], before: int) -> list[_Statement] | None:
    """The declarations the expected side needs (transitively), or None when it spells anything
    but literals, standard type names, named constants (`a::b`) and such locals."""
    needed: list[_Statement] = []
    pending = [expected]
    while pending:
        code = _STRING.sub('""', pending.pop())
        if re.search(r"(\.|->)\s*[A-Za-z_]", code) or re.search(r"\w\s*\(", _TYPE_CALLS.sub("", code)):
            return None
        for word in _IDENTIFIER.findall(code):
            local = None if "::" in word.lstrip(":") else _declaration(statements, word, before)
            if local is None and ("::" in word.lstrip(":") or word in _PLAIN_WORDS):
                continue  # a local named like a plain word (`date`) is still a local, deleted with the side
            if local is None:
                return None
            if local not in needed:
                needed.append(local)
                pending.append(local.type + " " + local.init)
    return needed


def _enumerators(test: str, expected: str, solution: frozenset[str]) -> tuple[str, ...]:
    """Named constants of the solution's namespace the expected side spells, widened to every
    constant the test file names under the same qualifier (so the list singles out no answer)."""
    code = _STRING.sub('""', expected)
    qualifiers = {word.rsplit("::", 1)[0] for word in _IDENTIFIER.findall(code)
                  if "::" in word.lstrip(":") and word.lstrip(":").split("::")[0] in solution}
    if not qualifiers:
        return ()
    text = _STRING.sub('""', _without_comments(test))
    return tuple(sorted(word for word in set(_IDENTIFIER.findall(text))
                        if "::" in word and word.rsplit("::", 1)[0] in qualifiers
                        and not re.search(re.escape(word) + r"\s*\(", text)))


def _test_bodies(test: str) -> list[tuple[int, int]]:
    return [(unit.body_start, unit.end - 1) for unit in find_units(test)]


def _statements(test: str, start: int, end: int) -> list[_Statement]:
    """The declarations at the top level of a test body."""
    found: list[_Statement] = []
    statement_start = start
    for index, char, depth in _scan(test, start, end):
        if char == "}" and depth == 1 and test[statement_start:index].lstrip().startswith(("if", "for", "while", "{", "do")):
            statement_start = index + 1
        elif char == ";" and depth == 0:
            text = test[statement_start:index]
            match = _DECLARATION.match(_without_comments(text).strip())
            if match and match["type"] not in _KEYWORDS:
                begin = statement_start + len(text) - len(text.lstrip())
                found.append(_Statement(begin, index + 1, match["type"], match["name"], match["init"]))
            statement_start = index + 1
    return found


def _declaration(statements: list[_Statement], name: str, before: int) -> _Statement | None:
    earlier = [statement for statement in statements if statement.name == name and statement.end <= before]
    return earlier[-1] if earlier else None


def _without_comments(text: str) -> str:
    return re.sub(r"//[^\n]*|/\*.*?\*/", " ", text, flags=re.S)


# --- the rewrite ------------------------------------------------------------------------

def blank_lines(text: str) -> str:
    """As many newlines as `text` held: the lines after it keep their numbers (ids, compiler
    messages)."""
    return "\n" * text.count("\n")


def _observation(candidate: Candidate, prefix: str = "") -> str:
    """The observer's call; templated on its line, so that a refused type is refused at every
    line observing it (compile_error_lines)."""
    if candidate.enumerators:
        named = ", ".join(f'polyglot_key::named<__LINE__>("{name}", {name})' for name in candidate.enumerators)
        return f'polyglot_key::observe_enum<__LINE__>("{prefix}{candidate.id}", ({candidate.observed}), {{{named}}});'
    return f'polyglot_key::observe<__LINE__>("{prefix}{candidate.id}", ({candidate.observed}));'


def conversion_edits(test: str, chosen: Sequence[Candidate], prefix: str = "") -> list[tuple[int, int, str]]:
    """The edits that convert `chosen` (each statement an observation, its expected side's
    locals blank lines): the rewrite's, and a keyed variant's copy's (utils/languages/cpp_variants.py)."""
    edits = []
    for candidate in chosen:
        statement = test[candidate.start:candidate.end]
        edits.append((candidate.start, candidate.end, _observation(candidate, prefix).replace("\n", " ") + blank_lines(statement)))
    deleted = {span for candidate in chosen for span in candidate.deleted}
    return edits + [(start, end, blank_lines(test[start:end])) for start, end in sorted(deleted)]


def _edited(test: str, chosen: Sequence[Candidate], prefix: str = "") -> str:
    return apply_edits(test, conversion_edits(test, chosen, prefix))


def rewrite(test: str, chosen: Sequence[Candidate], prefix: str = "") -> str:
    """The test file with `chosen` converted: the observer (PRELUDE) first, its lines taken
    back by `#line 1` so that every line keeps its number, the test's own name read from
    Catch by a function defined after the test."""
    return f"#line {PRELUDE_LINE}\n{PRELUDE}\n#line 1\n{_edited(test, chosen, prefix)}\n{_TEST_NAME}\n"


PRELUDE_LINE = 100000  # the observer's lines, numbered apart from the test's own (compile_error_lines)
_TEST_NAME = ("std::string polyglot_key_test_name() "
              "{ return Catch::getResultCapture().getCurrentTestName(); } "
              'void polyglot_key_observed() { SUCCEED("observed"); }')
PRELUDE = (Path(__file__).parent / "cpp_key_observe.hpp").read_text(encoding="utf-8")


# --- the probe build and the host's comparison ---------------------------------------------

def compile_error_lines(output: str, test_name: str) -> set[int]:
    """Lines of the test file the compiler's messages point at (the observations of a type
    the observer refuses, e.g. a float or a class of the solution's); the prelude's own lines
    are numbered from PRELUDE_LINE."""
    lines = {int(line) for line in re.findall(re.escape(test_name) + r":(\d+):\d+:", output)}
    return {line for line in lines if line < PRELUDE_LINE}


def convert(tree: Path, pristine: Path, hidden_paths: Sequence[str], solution_paths: Sequence[str],
            only: frozenset[str] | None) -> frozenset[str]:
    """Rewrite the hidden test files in `tree` (ids `path:Lnn`; `only`: those ids, None: every
    candidate); the stub's words are read from the pristine tree. The ids converted."""
    words = solution_words([(pristine / path).read_text(encoding="utf-8", errors="replace")
                            for path in solution_paths if (pristine / path).is_file()])
    converted: set[str] = set()
    for path in hidden_paths:
        target = tree / path
        if not path.endswith("_test.cpp") or not target.is_file():
            continue
        test = target.read_text(encoding="utf-8")
        wanted = None if only is None else frozenset(i.split(":", 1)[1] for i in only if i.startswith(path + ":"))
        chosen = candidates(test, words, wanted)
        if chosen:
            target.write_text(rewrite(test, chosen, f"{path}:"), encoding="utf-8")
            converted.update(f"{path}:{candidate.id}" for candidate in chosen)
    return frozenset(converted)


def error_ids(output: str, hidden_paths: Sequence[str], ids: frozenset[str]) -> frozenset[str]:
    """The converted ids on the lines the compiler refused."""
    refused = set()
    for path in hidden_paths:
        lines = compile_error_lines(output, Path(path).name)
        refused.update(i for i in ids if i.startswith(path + ":") and int(i.split(":L", 1)[1].split(".")[0]) in lines)
    return frozenset(refused)


