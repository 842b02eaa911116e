"""Can a reader holding the test text tell a canary's copy from its real test? (issue 32): no Docker.

    python3 bench/canary_readers.py [--languages rust,java,cpp] [--gradings 20] [--drawing old|new]

For each instance, `--gradings` times, the real planter plants its canaries (3, mutable tests
first) into a copy of the exercise's tests (with its `.docs/`), exactly as grading does. A
reader then sees the planted tests, the instructions and the stub, and for every mutated pair
guesses which member is the real test from where else each member's value appears:

  own      times the value appears in the pair's own test text besides its slot
  tests    times it appears in the other tests (the pair left out)
  docs     times it appears in the instructions
  stub     times it appears in the stub (the solution files the agent gets)
  unknown  words of a string value that appear nowhere there
  expected whether it is another assertion's expected value

Each cue, in both directions (the real one appears more / less), and all of them in sequence
(the first cue that differs decides), is a reader; ties are a coin. Reported per language:
the best reader's win rate per pair and per grading (every pair of a grading right: what a
forger sparing the real tests needs), for the drawing given (`old`: the former one, a value
drawn from the file's other expected values first).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import re
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import _standalone  # noqa: F401,E402 - the checkout as the package polyglot_harness
from polyglot_harness.utils.judging import canaries as canary_module  # noqa: E402
from polyglot_harness.utils.judging.canaries import CANARIES_PER_GRADING, Symbol, plant  # noqa: E402
from polyglot_harness.utils.languages import LANGUAGES, matches_any  # noqa: E402

DEFAULT_BENCHMARK = Path("/work/data/polyglot-benchmark")
CUES = ("own", "tests", "docs", "stub", "unknown", "expected")


def old_fresh_value(value, pool, rng, words=(), profile=None):
    """The drawing before issue 32: another of the file's expected values of that shape first."""
    if isinstance(value, bool):
        return not value
    alike = [other for other in pool if type(other) is type(value) and other != value
             and canary_module._same_shape(other, value)]
    if alike:
        return rng.choice(alike)
    if isinstance(value, int):
        written = [int(word) for word in words if word.isdigit() and canary_module._same_shape(int(word), value)
                   and int(word) != value]
        return rng.choice(written) if written else canary_module._fresh_int(value, rng)
    if isinstance(value, Symbol):
        raise ValueError(f"no other constant for {value}")
    return canary_module._swap_a_word(value, words, rng) or canary_module._fresh_string(value, rng)


def token(literal: str) -> str:
    """A value as a reader searches for it: a string's body, a constant's name, a number."""
    literal = literal.strip()
    if literal[:1] in "\"'" and literal[-1:] == literal[:1]:
        return literal[1:-1]
    return re.split(r"::|\.", literal)[-1]


def count(value: str, text: str) -> int:
    return len(re.findall(rf"(?<![\w.]){re.escape(value)}(?![\w.])", text)) if value else 0


def cues(value: str, own: str, tests: str, docs: str, stub: str, expected: set[str]) -> tuple[int, ...]:
    seen = own + tests + docs + stub
    unknown = sum(1 for word in re.findall(r"[A-Za-z]{2,}", value) if not re.search(rf"\b{word}\b", seen))
    return (count(value, own), count(value, tests), count(value, docs), count(value, stub), unknown,
            int(value in expected))


def exercise_files(exercise: Path, globs) -> tuple[list[Path], str, str]:
    tests = [path for path in exercise.rglob("*") if path.is_file()
             and matches_any(path.relative_to(exercise).as_posix(), globs)]
    docs = "\n".join(path.read_text(errors="replace") for path in (exercise / ".docs").glob("*.md"))
    config = json.loads((exercise / ".meta" / "config.json").read_text())
    stub = "\n".join((exercise / relative).read_text(errors="replace") for relative in config["files"]["solution"]
                     if (exercise / relative).is_file())
    return tests, docs, stub


def grading_pairs(language: str, exercise: Path, rng: random.Random) -> list[tuple[tuple, tuple]]:
    """One simulated grading: (real cues, copy cues) for each mutated pair planted."""
    planter = LANGUAGES[language].canaries
    tests, docs, stub = exercise_files(exercise, planter.file_globs)
    with tempfile.TemporaryDirectory() as temporary:
        tree = Path(temporary)
        for path in tests + list((exercise / ".docs").glob("*.md")):
            target = tree / path.relative_to(exercise)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
        for path in tests:  # grading plants into the un-skipped tests (jest's xtest, ...)
            relative = path.relative_to(exercise).as_posix()
            (tree / relative).write_text(LANGUAGES[language].unskip_text(relative, path.read_text(errors="replace")))
        originals = {path.relative_to(exercise).as_posix(): path.read_text(errors="replace") for path in tests}
        planted = plant(tree, planter, matches_any, None, CANARIES_PER_GRADING, rng)
        texts = {relative: (tree / relative).read_text(errors="replace") for relative in originals}
    pairs = []
    for canary in planted:
        if canary.mutation is None:
            continue
        for relative, text in texts.items():
            members = {u.name: u for u in planter.find_units(text) if u.name in (canary.name, canary.hidden_name)}
            if len(members) != 2:
                continue
            real_text = text[members[canary.hidden_name].start:members[canary.hidden_name].end]
            copy_text = text[members[canary.name].start:members[canary.name].end]
            (real_value, own), (copy_value, _) = differing_values(real_text.replace(canary.hidden_name, "N"),
                                                                  copy_text.replace(canary.name, "N"))
            rest = text
            for member in sorted(members.values(), key=lambda u: -u.start):
                rest = rest[:member.start] + rest[member.end:]
            rest += "\n".join(t for r, t in texts.items() if r != relative)
            expected = {token(rest[u.start:u.end][a.start:a.end]) for u in planter.find_units(rest)
                        for a in planter.mutator.assertions(rest[u.start:u.end])} if planter.mutator else set()
            pairs.append((cues(real_value, own, rest, docs, stub, expected),
                          cues(copy_value, own, rest, docs, stub, expected)))
            break
    return pairs


_TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|`[^`]*`|[\w.]+|\S')


def differing_values(real: str, copy: str) -> tuple[tuple[str, str], tuple[str, str]]:
    """What a reader holding both members sees differ: in each member the literal (whole
    tokens) where the two texts part, and the member's text without it (its own test). Read
    from the planted text, so a language whose copy rewrites more than the value (Go's inline
    table) is read as the reader sees it."""
    prefix = len(os.path.commonprefix([real, copy]))
    suffix = len(os.path.commonprefix([real[prefix:][::-1], copy[prefix:][::-1]]))
    return tuple(_covering(text, prefix, len(text) - suffix) for text in (real, copy))


def _covering(text: str, start: int, end: int) -> tuple[str, str]:
    spans = [m.span() for m in _TOKEN.finditer(text) if m.start() < max(end, start + 1) and m.end() > start]
    if not spans:
        return "", text
    first, last = spans[0][0], spans[-1][1]
    return token(text[first:last]), text[:first] + " " + text[last:]


def readers():
    """(name, score function): a reader calls the member with the higher score real."""
    for index, cue in enumerate(CUES):
        yield f"{cue}+", lambda c, i=index: c[i]
        yield f"{cue}-", lambda c, i=index: -c[i]
    for signs in itertools.product((1, -1), repeat=3):
        yield f"lexicographic{signs}", lambda c, s=signs: (s[0] * c[1], s[1] * c[2], s[2] * c[5], c[0], -c[4], c[3])


def win(score, real, copy, rng: random.Random) -> float:
    a, b = score(real), score(copy)
    return 1.0 if a > b else 0.0 if a < b else 0.5


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--benchmark_dir", type=Path, default=DEFAULT_BENCHMARK)
    parser.add_argument("--languages", default="rust,java,cpp,python,javascript")
    parser.add_argument("--gradings", type=int, default=20)
    parser.add_argument("--drawing", choices=("old", "new"), default="new")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if args.drawing == "old":
        canary_module.drawn_value = lambda value, pool, rng, words=(), profile=None: (
            old_fresh_value(value, pool, rng, words), 0)
    rng = random.Random(args.seed)
    print(f"drawing: {args.drawing}")
    print(f"{'language':<11} {'gradings':>9} {'pairs':>6} {'best reader':<32} {'per pair':>9} {'per grading':>12}")
    for language in args.languages.split(","):
        gradings = []
        for exercise in sorted((args.benchmark_dir / language / "exercises" / "practice").iterdir()):
            for _ in range(args.gradings):
                try:
                    pairs = grading_pairs(language, exercise, rng)
                except Exception as error:  # noqa: BLE001 - a file the planter cannot read: no pairs
                    print(f"  {exercise.name}: {error}", file=sys.stderr)
                    pairs = []
                if pairs:
                    gradings.append(pairs)
        best = None
        for name, score in readers():
            per_pair = [win(score, real, copy, rng) for pairs in gradings for real, copy in pairs]
            per_grading = [float(__import__("math").prod(win(score, r, c, rng) for r, c in pairs)) for pairs in gradings]
            pair_rate = sum(per_pair) / max(1, len(per_pair))
            grading_rate = sum(per_grading) / max(1, len(per_grading))
            if best is None or grading_rate > best[2]:
                best = (name, pair_rate, grading_rate, len(per_pair))
        name, pair_rate, grading_rate, pairs_total = best
        print(f"{language:<11} {len(gradings):>9} {pairs_total:>6} {name:<32} {pair_rate:>8.0%} {grading_rate:>11.0%}")


if __name__ == "__main__":
    main()
