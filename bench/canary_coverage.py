"""Which instances get mutated canaries, and which only fallbacks (issue 32): no Docker.

    python3 bench/canary_coverage.py [--benchmark_dir DIR] [--languages cpp,rust] [--show] [--dataset DIR]

Each exercise's hidden test files are read as the planter reads them (`find_units`, the
language's `Mutator`). Per language: tests, tests with a mutable assertion, instances, and
instances whose canaries are all fallbacks (no test with a mutable assertion); `--show` lists
those instances with their first assertion lines, the reason they remain. `--dataset`: a
prepared dataset; a test counts as mutable only when it is also one of its instance's
`canary_sources` (its canary failed on the reference as it must: what grading can plant).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import _standalone  # noqa: F401,E402 - the checkout as the package polyglot_harness
from polyglot_harness.utils.languages import LANGUAGES, matches_any  # noqa: E402

DEFAULT_BENCHMARK = Path("/work/data/polyglot-benchmark")
_ASSERTION_LINE = re.compile(r"^\s*(REQUIRE|CHECK|assert|assertThat|assertEquals|if |t\.)", re.M)


def test_texts(exercise: Path, globs: tuple[str, ...], unskip=lambda path, text: text) -> list[str]:
    """The hidden test files as grading plants into them: un-skipped (jest's `xtest`, ...)."""
    return [unskip(path.relative_to(exercise).as_posix(), path.read_text(errors="replace"))
            for path in sorted(exercise.rglob("*"))
            if path.is_file() and matches_any(path.relative_to(exercise).as_posix(), globs)]


def recorded_sources(dataset: Path | None) -> dict[str, tuple[str, ...]] | None:
    """Each prepared instance's canary sources (None: no dataset given, count statically)."""
    if dataset is None:
        return None
    from polyglot_harness.utils.records.dataset import load_dataset
    return {instance.instance_id: instance.canary_sources or () for instance in load_dataset(dataset)}


def coverage(language: str, benchmark: Path, show: bool,
             sources: dict[str, tuple[str, ...]] | None = None) -> tuple[int, int, int, int]:
    planter = LANGUAGES[language].canaries
    tests = mutable = instances = fallback_only = 0
    for exercise in sorted((benchmark / language / "exercises" / "practice").iterdir()):
        instance_id = f"{language}__{exercise.name}"
        if sources is not None and instance_id not in sources:
            continue
        texts = test_texts(exercise, planter.file_globs, LANGUAGES[language].unskip_text)
        units = [(text, unit) for text in texts for unit in planter.find_units(text)]
        every_test = "\n".join(texts)
        count = sum(1 for text, unit in units if planter.mutator.find(text[unit.start:unit.end], every_test)
                    and (sources is None or unit.name in sources[instance_id]))
        instances += 1
        tests += len(units)
        mutable += count
        if units and not count:
            fallback_only += 1
            if show:
                lines = [line.strip() for text in texts for line in text.splitlines()
                         if _ASSERTION_LINE.match(line)][:3]
                print(f"  {language}__{exercise.name}: {' | '.join(lines)[:220]}")
    return tests, mutable, instances, fallback_only


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--benchmark_dir", type=Path, default=DEFAULT_BENCHMARK)
    parser.add_argument("--languages", default="cpp,rust,java,go,python,javascript")
    parser.add_argument("--show", action="store_true")
    parser.add_argument("--dataset", type=Path, help="a prepared dataset: count recorded canary sources only")
    args = parser.parse_args()
    sources = recorded_sources(args.dataset)
    print(f"{'language':<11} {'tests':>6} {'mutable':>8} {'instances':>10} {'fallback-only':>14}")
    for language in args.languages.split(","):
        tests, mutable, instances, fallback_only = coverage(language, args.benchmark_dir, args.show, sources)
        print(f"{language:<11} {tests:>6} {mutable:>8} {instances:>10} {fallback_only:>14}")


if __name__ == "__main__":
    main()
