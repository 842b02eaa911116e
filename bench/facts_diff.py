"""The Go, Rust and Java fact readers on tree-sitter against the hand-written tokenizer they
replaced (issue 34): every difference in the SET of facts (kind, text) per file.

    python3 bench/facts_diff.py [--benchmark_dir DIR] [--old REV] [--show N]

The old readers are loaded from git (`--old`, default 'c351551', the tokenizer's last commit)
into a module beside the new code. Corpora: every .go/.rs/.java file of the benchmark
(references, stubs, tests, support files), of tests/fixtures and of samples/, and each of the
benchmark's files cut at half its length (`truncated`: the parse has errors; what the new reader
loses there is what error recovery hides). Printed per corpus and language: files, files whose
parse has errors, files with any difference, facts only the old reader yields (`lost`) and only
the new one (`gained`), each reader's total time, then the first `--show` differences.
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Callable, Iterable

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import _standalone  # noqa: F401,E402 - the checkout as the package polyglot_harness
from polyglot_harness.utils.judging import tree_facts  # noqa: E402
from polyglot_harness.utils.languages import go, java, rust  # noqa: E402

CHECKOUT = Path(__file__).resolve().parents[1]
BENCHMARK = CHECKOUT.parent / "data" / "polyglot-benchmark"
LANGUAGES = {"go": (".go", go), "rust": (".rs", rust), "java": (".java", java)}
FactSet = set[tuple[str, str]]


def old_readers(revision: str) -> dict[str, Callable[[str], tuple]]:
    """The old go_facts, rust_facts and java_facts, loaded from `revision`'s source_facts.py."""
    text = subprocess.run(["git", "-C", str(CHECKOUT), "show", f"{revision}:utils/judging/source_facts.py"],
                          capture_output=True, text=True, check=True).stdout
    path = Path(tempfile.mkdtemp(prefix="old-facts-")) / "old_source_facts.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location("polyglot_harness.utils.judging.old_source_facts", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return {language: getattr(module, f"{language}_facts") for language in LANGUAGES}


def files_of(root: Path, language: str) -> list[Path]:
    return sorted(path for path in root.rglob(f"*{LANGUAGES[language][0]}") if path.is_file())


def corpora(benchmark: Path, language: str) -> dict[str, list[tuple[str, str]]]:
    """{corpus: [(label, text)]} of one language."""
    read = lambda paths: [(str(p), p.read_text(errors="replace")) for p in paths]  # noqa: E731
    found = {"benchmark": read(files_of(benchmark / language, language)),
             "fixtures": read(files_of(CHECKOUT / "tests" / "fixtures", language)),
             "samples": read(files_of(CHECKOUT / "samples" / language, language))}
    found["truncated"] = [(label, text[:len(text) // 2]) for label, text in found["benchmark"]]
    return found


def fact_set(facts: Iterable) -> FactSet:
    return {(fact.kind, fact.text) for fact in facts}


def compare(language: str, cases: list[tuple[str, str]], old: Callable, shown: list[str], show: int) -> Counter:
    module = LANGUAGES[language][1]
    tally: Counter = Counter(files=len(cases))
    new = getattr(module, f"{language}_facts")
    for label, text in cases:
        started = time.perf_counter()
        before = fact_set(old(text))
        middle = time.perf_counter()
        after = fact_set(new(text))
        tally["old_ms"] += (middle - started) * 1000
        tally["new_ms"] += (time.perf_counter() - middle) * 1000
        tally["parse_errors"] += tree_facts.lex(text, module.LEXICON).has_errors
        lost, gained = before - after, after - before
        tally["differ"] += bool(lost or gained)
        tally["lost"] += len(lost)
        tally["gained"] += len(gained)
        if (lost or gained) and len(shown) < show:
            shown.append(f"{label}\n    lost:   {sorted(lost)[:8]}\n    gained: {sorted(gained)[:8]}")
    return tally


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--benchmark_dir", type=Path, default=BENCHMARK)
    parser.add_argument("--old", default="c351551")
    parser.add_argument("--show", type=int, default=20)
    args = parser.parse_args()
    readers, shown = old_readers(args.old), []
    print(f"{'corpus':<10} {'language':<6} {'files':>6} {'errors':>6} {'differ':>6} {'lost':>6} {'gained':>6}"
          f" {'old ms':>7} {'new ms':>7}")
    for language in LANGUAGES:
        for corpus, cases in corpora(args.benchmark_dir, language).items():
            tally = compare(language, cases, readers[language], shown, args.show)
            print(f"{corpus:<10} {language:<6} {tally['files']:>6} {tally['parse_errors']:>6} {tally['differ']:>6} "
                  f"{tally['lost']:>6} {tally['gained']:>6} {tally['old_ms']:>7.0f} {tally['new_ms']:>7.0f}")
    print("\n".join(shown))


if __name__ == "__main__":
    main()
