"""Where a variant runs, and what that tells a memorizer (issue 35, red team 4).

The solution process sees the calls in the order the tests run. The *last-known-input*
attacker memorized every hidden test's input; for an input it does not know (a variant's), it
guesses that the variant came from the test whose memorized input it saw last (a canary's copy
calls its source's input). This script plants the variants a preparation recorded, with the
grading's own code (`plant_variants`, then `canaries.plant` with CANARIES_PER_GRADING of the
recorded canary sources), on each instance's real test files, orders the tests as each
language's runner runs them, and counts the guesses that name the variant's source:

- `beside`: the placement before 2026-11-29 (`variants.beside_source`: right before or after
  the source, drawn);
- `block`: a gap drawn uniformly among the tests of the source's block (`variants.draw_gap`);
- `chance`: the mean of 1 / (the real tests of the variant's block), a guess among them.

Run orders (docker/<lang>/ runners, read 2026-11-29): python, pytest collecting a
`unittest.TestCase` (`TestLoader.getTestCaseNames`: a class's methods sorted by name); javascript,
jest, declaration order; java, JUnit Jupiter's default method order (hash code of the method's
name, then the name); rust, libtest (sorted by the test's path, `mod::name`; run on several
threads, so the order is the sorted one only roughly); C++, Catch 2.13's default, declaration
order (the binary runs twice, in the same order). Go has no variants.

Also printed: `same answer`, the share of the variants whose expected value is their source's
(the literal written back against the one it replaced; C++: the copy's observations against the
answer key's for the same assertion ids): an
attacker that names a variant's source (by the last known input, or by the nearest memorized
input) and answers the source's answer passes those, and no other. `won`: simulated gradings in
which the last-known-input attacker, answering its guess's answer, passed every variant of the
instance (resolved on variants without solving). `nearest`: the share of variants whose copy is
nearest, by difflib's ratio over whole test texts, to its source among the real tests (the
edit-distance attacker names the source so); `all same`: instances every variant of which answers
as its source (that attacker, answering its guess's answer, resolves them on variants).

    python3 bench/variant_placement.py DATASET_DIR [DATASET_DIR ...] [--draws 20] [--seed 1]

No Docker.
"""

from __future__ import annotations

import argparse
import difflib
import random
import re
import shutil
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(PROJECT_ROOT))

import _standalone  # noqa: F401,E402 - the checkout as the package polyglot_harness
from polyglot_harness.utils.judging.canaries import CANARIES_PER_GRADING, apply_edits, plant, test_files  # noqa: E402
from polyglot_harness.utils.judging.regular_files import read_regular  # noqa: E402
from polyglot_harness.utils.judging.variants import beside_source, draw_gap, plant_variants, same_block  # noqa: E402
from polyglot_harness.utils.languages import matches_any  # noqa: E402
from polyglot_harness.utils.pipeline.grading import unskip_tree, variant_names  # noqa: E402
from polyglot_harness.utils.records.dataset import load_dataset  # noqa: E402
from polyglot_harness.utils.records.instance_repo import checkout_commit  # noqa: E402

PLACEMENTS = {"beside": beside_source, "block": draw_gap}


def java_hash(name: str) -> int:
    """java.lang.String.hashCode, as a signed 32-bit int."""
    value = 0
    for char in name.encode("utf-16-be").decode("utf-16-be"):
        value = (31 * value + ord(char)) & 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


def rust_path(text: str, block: object, name: str) -> str:
    """A rust test's libtest name: the `mod`s around it, then its own name."""
    mods = [match[1] for offset in block for match in [re.search(r"\bmod\s+(\w+)\s*$", text[:offset])] if match]
    return "::".join(mods + [name])


def run_order(language: str, text: str, units: list, blocks: list) -> list:
    """The file's tests in the order its runner runs them."""
    if language == "python":  # classes in file order, each class's methods sorted by name
        first = {}
        for unit, block in zip(units, blocks):
            first.setdefault(block, unit.start)
        return [unit for unit, _ in sorted(zip(units, blocks), key=lambda pair: (first[pair[1]], pair[0].name))]
    if language == "java":
        return sorted(units, key=lambda unit: (java_hash(unit.name), unit.name))
    if language == "rust":
        return [unit for unit, block in sorted(zip(units, blocks), key=lambda pair: rust_path(text, pair[1], pair[0].name))]
    return sorted(units, key=lambda unit: unit.start)  # javascript, cpp: declaration order


def one_grading(instance, pristine: Path, placement, rng: random.Random) -> list[tuple[bool, float, str]]:
    """(the attacker named the source, 1 / the real tests of the block, the source) per planted variant."""
    language = instance.language_spec
    planter = language.canaries
    with tempfile.TemporaryDirectory(prefix="placement-") as workdir:
        tree = Path(workdir) / "tree"
        shutil.copytree(pristine, tree)
        unskip_tree(tree, language)
        planted = plant_variants(tree, planter, matches_any, instance.variants, planter.mutator.rename, rng,
                                 gap=PLACEMENTS[placement])
        canaries = plant(tree, planter, matches_any, instance.canary_sources or (), CANARIES_PER_GRADING, rng=rng) \
            if instance.canary_sources else ()
        variant_of = variant_names(planted, canaries)  # name it runs under -> its source test
        known: dict[str, str] = {}  # name it runs under -> whose input it calls
        for canary in canaries:
            known[canary.hidden_name] = canary.source
            known[canary.reported_name] = canary.source
            known.update((hidden, source) for hidden, source in canary.renames if source not in planted)
        sequence = []
        for path in sorted(test_files(tree, planter, matches_any)):
            text = read_regular(tree, path.relative_to(tree).as_posix()).decode("utf-8", errors="surrogateescape")
            units = planter.find_units(text)
            keys = planter.scopes(text, units) if planter.scopes else [None] * len(units)
            blocks = same_block(text, units, planter)
            real_in_block = {unit.name: sum(1 for other in blocks[unit.name] if other.name not in variant_of)
                             for unit in units}
            for unit in run_order(instance.language, text, units, keys):
                sequence.append((unit.name, real_in_block[unit.name]))
    outcomes, last = [], None
    for name, real in sequence:
        if name in variant_of:
            outcomes.append((last == variant_of[name], 1 / max(1, real), variant_of[name]))
        else:
            last = known.get(name, name)
    return outcomes


def test_texts(instance, pristine: Path) -> dict[str, str]:
    """Every test's own text (un-skipped), by name."""
    language = instance.language_spec
    tests = {}
    for path in test_files(pristine, language.canaries, matches_any):
        relative = path.relative_to(pristine).as_posix()
        text = language.unskip_text(relative, read_regular(pristine, relative).decode("utf-8", errors="surrogateescape"))
        tests.update((unit.name, text[unit.start:unit.end]) for unit in language.canaries.find_units(text))
    return tests


def nearest_names_source(instance, tests: dict[str, str]) -> tuple[int, int]:
    """(variants whose copy's text is nearest (difflib's ratio) to its source's among the real
    tests, variants): the edit-distance attacker, given whole test texts (an upper bound of what
    it reads from the calls alone)."""
    named = total = 0
    for variant in instance.variants:
        if variant.test not in tests:
            continue
        copy = apply_edits(tests[variant.test], list(variant.edits))
        nearest = max(tests, key=lambda name: difflib.SequenceMatcher(None, copy, tests[name], autojunk=False).ratio())
        named += nearest == variant.test
        total += 1
    return named, total


def same_answers(instance, tests: dict[str, str]) -> tuple[set[str], int]:
    """(the sources of the variants whose expected value is their source's, variants compared)."""
    same, total = set(), 0
    for variant in instance.variants:
        if variant.observations:  # C++: the copy observes under its source's assertion ids
            key = instance.observation_key or {}
            total += 1
            if all(tuple(key.get(assertion, ())) == tuple(values) for assertion, values in variant.observations):
                same.add(variant.ident)
            continue
        if len(variant.edits) < 2 or variant.test not in tests:
            continue
        start, end, literal = variant.edits[-1]
        total += 1
        if re.sub(r"\s+", "", tests[variant.test][start:end]) == re.sub(r"\s+", "", literal):
            same.add(variant.ident)
    return same, total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("datasets", nargs="+", type=Path)
    parser.add_argument("--draws", type=int, default=20, help="gradings simulated per instance and placement")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--languages", nargs="*", default=["python", "javascript", "java", "rust", "cpp"])
    args = parser.parse_args()
    rows: dict[str, dict] = defaultdict(lambda: {"instances": 0, "variants": 0, "beside": [0, 0], "block": [0, 0],
                                                 "chance": 0.0, "same": [0, 0], "won": {"beside": 0, "block": 0},
                                                 "gradings": 0, "nearest": [0, 0], "all_same": 0})
    seen = set()
    for dataset in args.datasets:
        for instance in load_dataset(dataset):
            if instance.language not in args.languages or not instance.variants or instance.instance_id in seen:
                continue
            seen.add(instance.instance_id)
            row = rows[instance.language]
            row["instances"] += 1
            row["variants"] += len(instance.variants)
            with tempfile.TemporaryDirectory(prefix="placement-pristine-") as workdir:
                pristine = Path(workdir) / "tree"
                checkout_commit(instance.grading_repo_dir, instance.test_commit, pristine)
                tests = test_texts(instance, pristine)
                same, total = same_answers(instance, tests)
                named, compared = nearest_names_source(instance, tests)
                row["nearest"][0] += named
                row["nearest"][1] += compared
                row["all_same"] += bool(total) and len(same) == len(instance.variants)
                row["same"][0] += len(same)
                row["same"][1] += total
                row["gradings"] += args.draws
                for placement in PLACEMENTS:
                    rng = random.Random(f"{args.seed}:{instance.instance_id}:{placement}")
                    for _ in range(args.draws):
                        outcomes = one_grading(instance, pristine, placement, rng)
                        row[placement][0] += sum(hit for hit, _, _ in outcomes)
                        row[placement][1] += len(outcomes)
                        # Answering the guessed source's answer passes a variant only where the
                        # guess is right and the answers agree: won, every variant passed.
                        row["won"][placement] += bool(outcomes) and all(hit and source in same
                                                                        for hit, _, source in outcomes)
                        if placement == "block":
                            row["chance"] += sum(chance for _, chance, _ in outcomes)
    print(f"last-known-input attacker, {args.draws} simulated gradings per instance and placement (seed {args.seed})")
    print(f"{'language':<11} {'instances':>9} {'variants':>8} {'beside':>8} {'block':>8} {'chance':>8} {'same answer':>13}"
          f" {'won beside':>11} {'won block':>10} {'nearest':>8} {'all same':>9}")
    for language in args.languages:
        if language not in rows:
            continue
        row = rows[language]
        share = lambda pair: pair[0] / pair[1] if pair[1] else float("nan")  # noqa: E731
        same = f"{row['same'][0]}/{row['same'][1]}" if row["same"][1] else "n/a"
        print(f"{language:<11} {row['instances']:>9} {row['variants']:>8} {share(row['beside']):>8.1%} "
              f"{share(row['block']):>8.1%} {row['chance'] / max(1, row['block'][1]):>8.1%} {same:>13}"
              f" {row['won']['beside']:>5}/{row['gradings']:<5} {row['won']['block']:>4}/{row['gradings']:<5}"
              f" {share(row['nearest']):>8.1%} {row['all_same']:>4}/{row['instances']:<4}")


if __name__ == "__main__":
    main()
