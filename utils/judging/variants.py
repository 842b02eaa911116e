"""Fresh variants (issue 35): copies of real hidden tests with ONE input literal changed, whose
expected value is what the reference solution returned for the new input.

A solution that answers the tests' own inputs from memory (a table keyed by the inputs) passes
every real test and every canary; it fails a variant, whose input it has never seen. So a
result reports `resolved` (upstream, unchanged) and `resolved_on_variants` (every real test
and every variant passed); the difference over a run is the memorization gap.

A variant is stored as edits to its source test's own text (`Variant.edits`, offsets relative
to the test as `Planter.find_units` finds it in the pristine file), like a canary's mutation:
planting is a pure function of the pristine file and the variants. Preparation derives
candidates (a language's `derive`, e.g. utils/languages/python_variants.py), plants them as
*probes* (the assertion replaced by a statement that reports the observed value) on the
reference, writes the observed value back as a literal, and keeps a variant only where a
second run of the reference passes it (utils/pipeline/variant_recording.py). Grading plants
the kept variants under drawn names at drawn places among the real tests of their source's
block (`plant_variants`) and sets their cases apart before the verdict (`split_variants`):
the upstream verdict never sees them.

The input mutations are pure and unit-tested (`mutate_int`, `mutate_str`, `reorder`).
"""

from __future__ import annotations

import functools
import json
import math
import random
import re
import secrets
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Iterable, Mapping, Sequence

from .canaries import Planter, TestUnit, apply_edits, call_arguments, case_leaf, neighbour_name, test_files
from .regular_files import read_regular
from .runner_results import PASSED, TestCase, TestResults

# Why a candidate was not kept (counted per exercise in the dataset: `variant_counts`).
KEPT = "kept"
NO_INPUT = "no_input_literal"            # a test with no mutable input (or no single assertion)
REFERENCE_RAISED = "reference_raised"    # the original expects a value, the reference raised
NOT_A_LITERAL = "not_a_literal"          # the observed value is no plain literal (an object, a float)
NOT_DETERMINISTIC = "not_deterministic"  # the second run disagreed with the first
NOT_REPORTED = "not_reported"            # the probe's case was missing from the report
RAISES_DIFFER = "raises_differ"          # an error test whose new input the reference answers otherwise
ERROR_TEST = "error_test"                # an error test: never kept (variants_recording.choose says why)
RECORDING_FAILED = "recording_failed"    # the instance's recording raised (logged): no variant, retried on a rerun
BEYOND_STATED = "beyond_stated_word"     # an integer of its input or answer needs a wider word than the tests' own
SELECTION_CHANGED = "selection_changed"  # the input reordered, the answer picks other elements of it

# The marker a probe's failure message carries before the observed value's repr.
OBSERVED = "POLYGLOT-VARIANT-OBSERVED:"
MAX_LITERAL = 400  # longer observed values make unreadable tests: not kept


@dataclass(frozen=True)
class Variant:
    """Edits (start, end, new text) to a test's own text; `key` tells probes of one test apart.
    `observations`: where the language keeps expected values outside the sandbox (the answer
    key, docs/answer-key.md), the reference's renderings of the copy's observed assertions
    (id -> renderings), compared on the host; the copy's text then states no expected value."""
    test: str
    edits: tuple[tuple[int, int, str], ...]
    key: str = ""
    observations: tuple[tuple[str, tuple[str, ...]], ...] = ()

    @property
    def ident(self) -> str:
        return self.key or self.test

    @property
    def states_a_value(self) -> bool:
        """Whether the variant states an expected value (its input and its expected side
        changed, `Candidate.variant`, or the key's observations of its new input), not only
        that the reference refuses a new input."""
        return len(self.edits) > 1 or bool(self.observations)

    def to_json(self) -> dict:
        data = {"test": self.test, "edits": [list(edit) for edit in self.edits]}
        if self.observations:  # written only when set: other languages' records read as before
            data["observations"] = {assertion: list(values) for assertion, values in self.observations}
        return data

    @staticmethod
    def from_json(data: Mapping) -> "Variant":
        observations = tuple((str(assertion), tuple(map(str, values)))
                             for assertion, values in sorted((data.get("observations") or {}).items()))
        return Variant(data["test"], tuple((int(s), int(e), str(t)) for s, e, t in data["edits"]),
                       observations=observations)


@dataclass(frozen=True)
class Candidate:
    """A test with one input changed, before the reference has answered it.
    `expected`: the span of the assertion's expected side (None: an error test, whose
    expectation stays); `statement`: the assertion statement's span and the probe statement
    that replaces it; `original`: the original expected value."""
    test: str
    input_edit: tuple[int, int, str]
    expected: tuple[int, int] | None
    statement: tuple[int, int, str] | None
    original: object = None
    # Where the changed input lies when not in the test's own text (Go's table beside the
    # test): (that text, the input's edit in it), for the domain rules and the word rule.
    input_context: tuple[str, tuple[int, int, str]] | None = None

    @property
    def changed_input(self) -> tuple[str | None, tuple[int, int, str]]:
        """(the text holding the changed input, its edit there; None: the test's own text)."""
        return self.input_context or (None, self.input_edit)

    def probe(self, key: str) -> Variant:
        if self.statement is None:
            return Variant(self.test, (self.input_edit,), key)
        inside = self.statement[0] <= self.input_edit[0] and self.input_edit[1] <= self.statement[1]
        # An input inside the assertion is already changed in the probe statement's text.
        return Variant(self.test, ((self.statement,) if inside else (self.input_edit, self.statement)), key)

    def variant(self, literal: str | None) -> Variant:
        edits = (self.input_edit,) + ((self.expected + (literal,),) if self.expected and literal else ())
        return Variant(self.test, edits)


@dataclass(frozen=True)
class KeyedCandidate(Candidate):
    """A candidate of a language with an answer key (C++, docs/variants-cpp.md): `copy_edits`
    make the whole copy (the input changed, every assertion of the test converted into an
    observation, the expected sides deleted), so the probe is the variant itself, and the
    variant's expected value is the reference's observations, kept on the host
    (`Variant.observations`), never written into the test."""
    copy_edits: tuple[tuple[int, int, str], ...] = ()

    def probe(self, key: str) -> Variant:
        return Variant(self.test, self.copy_edits, key)

    def variant(self, literal: str | None) -> Variant:
        observations = json.loads(literal) if literal else {}
        return Variant(self.test, self.copy_edits, observations=tuple(
            (assertion, tuple(values)) for assertion, values in sorted(observations.items())))


@dataclass(frozen=True)
class TableCandidate(Candidate):
    """A candidate of a language whose tests range over a table of entries beside them (Go,
    docs/variants-go.md): the copy ranges over an inline table of ONE entry, the changed one
    (`input_edit` writes it in place of the table's name, the entry's expected value as it
    was), and the probe replaces the test's comparison of the expected field (`statement`).
    `slot`: the expected value's span in that inline text, where the variant writes the
    reference's answer. The variant's edits are the inline text up to the slot, then the
    answer and the rest inserted at the same place: an input and an expected side, as every
    language's variant has (`Variant.states_a_value`)."""
    slot: tuple[int, int] = (0, 0)

    def probe(self, key: str) -> Variant:
        return Variant(self.test, (self.input_edit, self.statement), key)

    def variant(self, literal: str | None) -> Variant:
        start, end, inline = self.input_edit
        if literal is None:
            return Variant(self.test, (self.input_edit,))
        return Variant(self.test, ((start, end, inline[:self.slot[0]]), (end, end, literal + inline[self.slot[1]:])))


# A language whose candidates depend on more than one test's text: given the instance's test
# texts by path, its stub's texts and its answer key, the `derive` for that instance.
InstanceDerive = Callable[[Mapping[str, str], Sequence[str], "Mapping[str, tuple[str, ...]] | None"],
                          Callable[[str, str, random.Random], list[Candidate]]]


@dataclass(frozen=True)
class VariantDeriver:
    """A language's variants (LanguageSpec.variants): `derive` reads one test's text (as
    `Planter.find_units` spans it) into its candidates; `read` turns a probe's observed text
    (what follows OBSERVED in its failure message) into (the value, for `is_plain_literal` and
    the comparison with the original; the literal written in the expected value's place), or
    None where the text is no literal the test can state. `for_instance`, where set, makes the
    `derive` of one instance (C++: which assertions its answer key holds, the stub's names).
    `keyed`: a variant's copy observes its assertions (the answer key's way: C++), so the
    probes' observations, not their failure messages, are read."""
    derive: Callable[[str, str, random.Random], list[Candidate]]
    read: Callable[[str], tuple[object, str] | None]
    for_instance: InstanceDerive | None = None
    keyed: bool = False


CANDIDATES_PER_TEST = 3  # probes per test (one variant is kept per test)


def first_candidates(slots: Iterable, rng: random.Random, edit_of: Callable[[object], tuple[int, int, str] | None],
                     candidate_of: Callable[[tuple[int, int, str]], Candidate]) -> list[Candidate]:
    """The candidates of a test's first CANDIDATES_PER_TEST input slots (in a drawn order)
    that a mutation changes: a deriver's common last step."""
    slots = list(slots)
    rng.shuffle(slots)
    candidates = []
    for slot in slots:
        edit = edit_of(slot)
        if edit is not None:
            candidates.append(candidate_of(edit))
        if len(candidates) == CANDIDATES_PER_TEST:
            break
    return candidates


# --- the input mutations (pure) -------------------------------------------------------------

def mutate_int(value: int, rng: random.Random, others: Sequence[int] = ()) -> int | None:
    """Another integer of the same sign and digit count (0 and 1-digit values stay within
    0..9; None where there is no other) that keeps its greatest common divisor with each of
    `others` (the test's other integers): a division that was exact stays exact, numbers that
    were coprime stay coprime. Which way an inexact one rounds is what instructions leave open
    (wordy: `33 divided by -3` became `50 divided by -3`, -16 or -17)."""
    magnitude = abs(value)
    digits = len(str(magnitude))
    low = 0 if digits == 1 else 10 ** (digits - 1)
    high = 10 ** digits - 1
    if value < 0:
        low = max(low, 1)
    relations = [other for other in others if abs(other) > 1 and other != value]
    options = [n for n in (rng.randint(low, high) for _ in range(64)) if n != magnitude
               and all(_related(n, other) == _related(magnitude, other) for other in relations)]
    if not options:
        return None
    return -options[0] if value < 0 else options[0]


def _related(number: int, other: int) -> tuple[int, bool, bool]:
    """What a test's numbers say of each other: their gcd, and which divides which."""
    other = abs(other)
    return math.gcd(number, other), number != 0 and other % number == 0, number % other == 0


def _char_class(char: str) -> str | None:
    """Digits, upper-case letters, and lower-case letters by vowel, `y` or consonant: a
    changed lower-case word keeps its vowels where they were. Word exercises read exactly that
    (pig-latin's rules are about the vowels a word starts with), and a word of consonants only
    is an input their instructions leave open (javascript__pig-latin: `thrush` became `hhrhsh`
    and `rhythm` `rhhtrm`, whose references' answers an honest solution need not share).
    Upper-case letters are more often symbols (boards of X and O, DNA's ACGT): one class."""
    if char.isdigit():
        return "digit"
    if char.isupper():
        return "upper"
    if not char.islower():
        return None
    return "vowel" if char in "aeiou" else "y" if char == "y" else "consonant"


def mutate_str(value: str, rng: random.Random, others: Sequence[int] = ()) -> str | None:
    """A string of the same length and alphabet: about a third of its letters and digits (at
    least one) replaced by another character of the same class that the string itself uses
    (so DNA stays ACGT, a word stays a word of its letters); None where no position has an
    alternative. A string with digits and letters changes one number only, and a string of
    several words none of its letters: its words are the exercise's vocabulary (`What is 5
    plus 13?`, `What is?`), and an unknown word is an input whose answer the instructions leave
    open (wordy: `What as?` is a syntax error or an unknown operation)."""
    if any(char.isdigit() for char in value) and any(char.isalpha() for char in value):
        return _mutate_digits(value, rng, others)
    if len(value.split()) > 1 and any(char.isalpha() for char in value):
        return None
    alphabet: dict[str, list[str]] = {}
    for char in value:
        kind = _char_class(char)
        if kind and char not in alphabet.setdefault(kind, []):
            alphabet[kind].append(char)
    positions = [i for i, char in enumerate(value) if _char_class(char) and len(alphabet[_char_class(char)]) > 1]
    if not positions:
        return None
    chars = list(value)
    for index in rng.sample(positions, max(1, len(positions) // 3)):
        chars[index] = rng.choice([c for c in alphabet[_char_class(value[index])] if c != value[index]])
    changed = "".join(chars)
    return changed if changed != value else None


def _mutate_digits(value: str, rng: random.Random, others: Sequence[int] = ()) -> str | None:
    """Words and numbers in one string: the words are the exercise's vocabulary (`What is 5
    plus 13?`), the numbers its data. One number changed, same digit count; None without one.
    A number written against a letter (`10D`, `2S`, `A1`) is part of a token, not data: a
    card, a square, a code has a closed set of values (javascript__poker's `10D` became `30D`,
    a card that does not exist, which its reference read and an honest solution refused)."""
    numbers = list(re.finditer(r"(?<![A-Za-z0-9])\d+(?![A-Za-z0-9])", value))
    rng.shuffle(numbers)
    for match in numbers:  # the first number that has another of its kind
        number = int(match.group())
        new = mutate_int(number, rng, others) if len(match.group()) == len(str(number)) else None
        if new is not None:
            return value[:match.start()] + str(new) + value[match.end():]
    return None


def reorder(elements: Sequence[str], rng: random.Random) -> tuple[int, int] | None:
    """Two positions of `elements` (their source texts) holding different elements: swapping
    them reorders the list; None where all are alike. In a sequence of integers the first and
    last stay: its ends are where its structure sits (a leading digit that must not be 0,
    java__variable-length-quantity's bytes `0x81, 0x80, 0x80, 0x0` reordered to end in `0x81`,
    an incomplete sequence its reference decodes and an honest solution refuses: 2 of 55
    honest variants failed). A list of other things is a collection: any two may swap."""
    numbers = bool(elements) and all(_INTEGER.fullmatch(element.strip().lstrip("-")) for element in elements)
    positions = range(1, len(elements) - 1) if numbers else range(len(elements))
    pairs = [(i, j) for i in positions for j in positions if i < j and elements[i] != elements[j]]
    return rng.choice(pairs) if pairs else None


def is_plain_literal(value: object) -> bool:
    """A value a test states as a literal and every correct solution returns alike: None,
    bool, int, str and containers of those (no float: honest solutions round differently)."""
    if value is None or isinstance(value, (bool, int, str)):
        return True
    if isinstance(value, (list, tuple, set, frozenset)):
        return all(is_plain_literal(item) for item in value)
    if isinstance(value, dict):
        return all(is_plain_literal(key) and is_plain_literal(item) for key, item in value.items())
    return False


# An integer literal of any of the six languages: decimal or hex, `_` separators, a type suffix
# (`0xFFFFFFFFL`, `255u8`); never part of a name (`u32`, `test_2`) or of a decimal number.
_INTEGER = re.compile(r"(?<![\w.])(?:0[xX](?P<hex>[0-9a-fA-F_]+)|(?P<dec>\d[\d_]*))(?:[uUiIlLnN]\w*)?(?![\w.])")


def stated_integers(text: str) -> list[int]:
    """The magnitudes of the integer literals in `text` (inside strings too: `"What is 53?"`)."""
    return [int(match["hex"].replace("_", ""), 16) if match["hex"] else int(match["dec"].replace("_", ""))
            for match in _INTEGER.finditer(text) if (match["hex"] or match["dec"]).strip("_")]


def word_bits(number: int) -> int:
    """The machine word (32 or 64 bits, then multiples of 64) an unsigned magnitude needs:
    the words exercises compute in (a byte or a short is an input's type, not a domain the
    answers overflow: wordy's `123 plus 90147` is fine where the tests stop at 45801)."""
    bits = number.bit_length()
    return 32 if bits <= 32 else -(-bits // 64) * 64


def within_stated_range(texts: Iterable[str], bound: int) -> bool:
    """Whether no integer in `texts` (a variant's new input, its observed answer) needs a
    wider machine word than `bound`, the largest integer the test files state. The tests show
    the word the exercise computes in; past it the answer is what the instructions leave open
    (variable-length-quantity's 32 bits: a variant encoding a 10-digit number, or decoding five
    bytes to more than 2**32-1, states how the reference overflows, and an honest 64-bit
    solution fails it). Within the word a variant may go past the stated numbers (forth's
    `4 4 *` is 16 where the tests stop at 13)."""
    width = word_bits(bound)
    return all(word_bits(number) <= width for text in texts for number in stated_integers(text))


# The clusters a test's name names: pig-latin's `word beginning with yt`, `testXrTreatedLike...`.
NAMED_CLUSTER = 3  # letters at most: a word of the name longer than this names no cluster


def named_clusters(name: str) -> set[str]:
    """The words of a test's name (in any of the languages' styles) short enough to be a
    cluster of an input's letters, lower-cased."""
    words = re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[A-Z]", name)
    return {word.lower() for word in words if len(word) <= NAMED_CLUSTER}


def keeps_named_clusters(clusters: Iterable[str], old: str, new: str) -> bool:
    """Whether a changed input still holds every cluster the test's name names that the
    original held: the named part is what the test is about (pig-latin's `yttria` became
    `yrtria` in the test named for `yt`, an input whose cluster the instructions name no rule
    for, and the references of two languages answer it differently: rust__pig-latin's honest
    false failure of 2026-11-28)."""
    old, new = old.lower(), new.lower()
    return all(cluster in new for cluster in clusters if cluster in old)


VOCABULARY_USES = 3  # a one-word string the tests write this often is a word of the exercise


def keeps_vocabulary(tests: str, old: str, new: str) -> bool:
    """Whether a changed string input stays inside the exercise's vocabulary: a one-word string
    literal the test files write VOCABULARY_USES times or more (a descriptor, a weekday, an
    allergen, a command) is a word of a closed set, and changed into a string the tests never
    write it is an input the instructions leave open (javascript__meetup's `'teenth'` became
    `'teentn'`, which its reference answered as `first` where an honest solution refuses it)."""
    body = _quoted_body(old)
    if body is None or not re.fullmatch(r"[A-Za-z]+", body) or _quoted_uses(tests, body) < VOCABULARY_USES:
        return True
    new_body = _quoted_body(new)
    return new_body is not None and _quoted_uses(tests, new_body) > 0


_CALL = re.compile(r"(?<![\w.:])([A-Za-z_][\w.:]*)\s*\(")
_PLAIN_INT = re.compile(r"-?\d+")


def keeps_argument_range(tests: str, source: str, edit: tuple[int, int, str]) -> bool:
    """Whether a changed integer argument stays within the integers the test files write at
    that argument of that call (where they write VOCABULARY_USES or more): a month stays 1 to 12
    (javascript__meetup's `meetup(2013, 12, ...)` became `meetup(2013, 86, ...)`, which its
    reference answered by rolling the date over, an input the instructions leave open)."""
    start, end, new = edit
    if not (_PLAIN_INT.fullmatch(source[start:end].strip()) and _PLAIN_INT.fullmatch(new.strip())):
        return True
    position = _argument_position(source, start, end)
    written = _written_at(tests, *position[:2]) if position else ()
    return len(written) < VOCABULARY_USES or min(written) <= int(new) <= max(written)


def keeps_fresh(tests: str, source: str, edit: tuple[int, int, str]) -> bool:
    """Whether the call a changed input is an argument of is a call no test makes: a month
    changed into another test's month asks what that test asks (javascript__meetup's memorizer
    passed 2 of its variants so)."""
    position = _argument_position(source, edit[0], edit[1])
    if position is None:
        return True
    callee_start, opening = position[2]
    spans = call_arguments(source, opening) or []
    close = source.index(")", spans[-1][1]) + 1
    call = source[callee_start:edit[0]] + edit[2] + source[edit[1]:close]
    return _spelled(call) not in _spelled(tests)


def _spelled(code: str) -> str:
    """Code as a value reader sees it: no whitespace, one quote."""
    return re.sub(r"\s+", "", code).replace('"', "'")


def _argument_position(source: str, start: int, end: int) -> tuple[str, int, tuple[int, int]] | None:
    """(the callee, the argument's index, (where the call starts, its `(`)) of the innermost
    call `source[start:end]` is an argument of."""
    for match in reversed([m for m in _CALL.finditer(source, 0, start)]):
        spans = call_arguments(source, match.end() - 1) or []
        if (start, end) in spans:
            return match[1], spans.index((start, end)), (match.start(), match.end() - 1)
        if spans and spans[0][0] <= start < spans[-1][1]:
            return None  # inside an argument, not one: a nested expression
    return None


@functools.lru_cache(maxsize=256)  # every candidate of an instance asks of the same test files
def _written_at(tests: str, callee: str, index: int) -> tuple[int, ...]:
    values = []
    for match in _CALL.finditer(tests):
        spans = call_arguments(tests, match.end() - 1) if match[1] == callee else None
        if spans and len(spans) > index and _PLAIN_INT.fullmatch(tests[slice(*spans[index])]):
            values.append(int(tests[slice(*spans[index])]))
    return tuple(values)


def keeps_selection(input_text: str, original: object, value: object) -> bool:
    """Whether an answer that selects strings of the input still selects the ones its source's
    answer selected: where both answers are lists of strings the changed input writes, the
    change reordered or left them, and which ones win is the exercise's rule, not their order
    (javascript__poker's reference compares high cards one way only: 6 of 34 reorders of its
    hands changed the winner, an answer no honest solution gives)."""
    if not (isinstance(original, list) and isinstance(value, list) and original and value):
        return True
    if not all(isinstance(item, str) and _quoted_uses(input_text, item) for item in original + value):
        return True
    return sorted(original) == sorted(value)


def _quoted_body(literal: str) -> str | None:
    literal = literal.strip()
    return literal[1:-1] if len(literal) >= 2 and literal[0] in "'\"" and literal[-1] == literal[0] else None


def _quoted_uses(tests: str, body: str) -> int:
    return len(re.findall(rf"(['\"]){re.escape(body)}\1", tests))


# --- planting and reading back --------------------------------------------------------------

def plant_variants(tree: Path, planter: Planter, matches: Callable[[str, tuple[str, ...]], bool],
                   variants: Sequence[Variant], rename: Callable[[str, str, str], str],
                   rng: secrets.SystemRandom | random.Random | None = None,
                   originals: Mapping[str, str] | None = None,
                   gap: "Callable[[Sequence[TestUnit], TestUnit, secrets.SystemRandom | random.Random], tuple[TestUnit, bool]] | None" = None,
                   ) -> dict[str, str]:
    """Each variant planted at a gap drawn uniformly among the gaps of its source test's block
    (`draw_gap`: before any test of the block or after its last), under a name drawn from the
    file's own words: neither where it sits nor when it runs tells which test it came from
    (red team 4 guessed a variant's source from the last known input before it, when it sat
    beside its source). Returns {name planted: variant ident}. A variant's edits apply to its
    test as the file held it before grading rewrote it (`originals`, by path: the answer key
    converts assertions before variants are planted); the file's own text by default.
    `gap`: how a gap is drawn (the simulation's former `beside_source`; `draw_gap` by default)."""
    rng = rng or secrets.SystemRandom()
    gap = gap or draw_gap
    planted: dict[str, str] = {}
    for path in test_files(tree, planter, matches):
        relative = path.relative_to(tree).as_posix()
        text = read_regular(tree, relative).decode("utf-8", errors="surrogateescape")
        found = planter.find_units(text)
        units = {unit.name: unit for unit in found}
        original = (originals or {}).get(relative, text)
        sources = {unit.name: original[unit.start:unit.end] for unit in planter.find_units(original)}
        mine = [variant for variant in variants if variant.test in units and variant.test in sources]
        if not mine:
            continue
        blocks = same_block(text, found, planter)
        rng.shuffle(mine)  # variants drawn into one gap stand in a drawn order
        taken = set(units)
        edits = []
        for variant in mine:
            at, before = gap(blocks[variant.test], units[variant.test], rng)
            name = neighbour_name(sorted(units), taken, planter.name_style, text, rng)
            taken.add(name)
            planted[name] = variant.ident
            edits.append(_insertion(text, at, sources[variant.test], variant, name, rename, before))
        path.write_text(_apply_insertions(text, edits), encoding="utf-8", errors="surrogateescape")
    return planted


def same_block(text: str, units: Sequence[TestUnit], planter: Planter) -> dict[str, list[TestUnit]]:
    """{test name: the tests of its block, in file order} (`Planter.scopes`; the whole file
    where the language declares no blocks)."""
    keys = planter.scopes(text, list(units)) if planter.scopes else [None] * len(units)
    blocks: dict[object, list[TestUnit]] = {}
    for unit, key in zip(units, keys):
        blocks.setdefault(key, []).append(unit)
    ordered = {key: sorted(block, key=lambda unit: unit.start) for key, block in blocks.items()}
    return {unit.name: ordered[key] for unit, key in zip(units, keys)}


def draw_gap(block: Sequence[TestUnit], source: TestUnit,
             rng: secrets.SystemRandom | random.Random) -> tuple[TestUnit, bool]:
    """One of the block's len(block) + 1 gaps, uniformly, whatever the source: (the test the
    copy goes before, True), or (the last test, False) for the gap after it."""
    index = rng.randrange(len(block) + 1)
    return (block[index], True) if index < len(block) else (block[-1], False)


def beside_source(block: Sequence[TestUnit], source: TestUnit,
                  rng: secrets.SystemRandom | random.Random) -> tuple[TestUnit, bool]:
    """The placement before 2026-11-29 (right before or right after the source, drawn), kept
    for bench/variant_placement.py's comparison only."""
    return source, rng.random() < 0.5


def _insertion(text: str, unit: TestUnit, source: str, variant: Variant, name: str,
               rename: Callable[[str, str, str], str], before: bool) -> tuple[int, str]:
    """The copy of `source` with the variant's edits, under `name`, before or after `unit`."""
    block = text[unit.start:unit.end]
    copy = rename(apply_edits(source, list(variant.edits)), variant.test, name).rstrip("\n") + "\n\n"
    if before:
        return unit.start, copy
    return unit.end, (("" if block.endswith("\n\n") else "\n") + copy)


def _apply_insertions(text: str, insertions: list[tuple[int, str]]) -> str:
    for offset, new in sorted(insertions, key=lambda item: item[0], reverse=True):
        text = text[:offset] + new + text[offset:]
    return text


def split_variants(results: TestResults, planted: Mapping[str, str],
                   leaf_of: Callable[[str], object]) -> tuple[TestResults, dict[str, TestCase]]:
    """(the results without the variants' cases, {variant ident: its case}; a case under a
    variant's, Go's subtest, joins it: `_with_children`)."""

    real, own, children = [], {}, {}
    for case in results.cases:
        leaf = case_leaf(case, leaf_of)  # jest's names carry their leaf's offset
        name = getattr(leaf, "name", None)
        if name in planted and getattr(leaf, "is_child", False):
            children.setdefault(planted[name], []).append(case)
        elif name in planted:
            own[planted[name]] = case
        else:
            real.append(case)
    for ident, cases in children.items():
        own[ident] = _with_children(own.get(ident), cases)
    return replace(results, cases=tuple(real)), own


def _with_children(parent: TestCase | None, children: Sequence[TestCase]) -> TestCase:
    """A variant's case where the runner reports its cases under it too (Go's subtests, whose
    failure messages go under the subtest, not its parent): the parent's outcome (a failed
    child's, else the first child's, when the parent is missing), its failed children's
    messages joined after its own (a probe's observed value is in a subtest's)."""
    failed = [case for case in children if case.outcome != PASSED]
    if parent is None:
        return failed[0] if failed else children[0]
    if not failed:
        return parent
    return replace(parent, message="\n".join([parent.message] + [case.message for case in failed]))


def observed_key(case: TestCase | None, observations: Mapping[str, Sequence[str]]) -> tuple[str | None, str]:
    """A keyed probe's observed value (its observations as JSON), or why there is none: the
    probe passes (every assertion is an observation), so a failed case is the reference
    raising (or crashing) on the new input."""
    if case is None:
        return None, NOT_REPORTED
    if case.outcome != PASSED:
        return None, REFERENCE_RAISED
    if not observations:
        return None, NOT_REPORTED
    return json.dumps({assertion: list(values) for assertion, values in sorted(observations.items())},
                      separators=(",", ":"), ensure_ascii=False), KEPT


def observed_literal(case: TestCase | None) -> tuple[str | None, str]:
    """A probe's observed value (its repr) from its failure message, or why there is none."""
    if case is None:
        return None, NOT_REPORTED
    # Not the probe's source line (a traceback quotes it): the probe writes the marker in two halves.
    match = re.search(rf"(?<!['\"]){re.escape(OBSERVED)}(?P<literal>[^\n]*)", case.message)
    if match is None:
        return None, REFERENCE_RAISED
    return match["literal"].strip(), KEPT
