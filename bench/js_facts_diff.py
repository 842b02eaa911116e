"""The JavaScript fact reader on tree-sitter against the token reader it replaced, file by file.

    python3 bench/js_facts_diff.py [--old REV] [--benchmark_dir DIR] [--show N] [--mutations N --seed S]

The old reader is `javascript_facts` of utils/judging/source_facts.py at git revision REV
(default: main, before issue 34's JavaScript step), loaded from `git show`. Both read every
JavaScript file of the benchmark's exercises (stubs, specs, `.meta/` references and configs),
of tests/fixtures and of samples/. Printed: files, files whose SET of facts (kind, text)
differs, each difference with its count and the files it is in (the first N), the parse
errors tree-sitter found, each reader's time, and the files where the policy's rules the facts
match (allowances aside) differ. With --mutations, N broken copies of each reference (pieces
inserted, characters deleted: mostly trees with parse errors) are read by both, and every file
where the old reader matched a rule the new one did not is listed: error recovery must hide
nothing the token reader saw.

Reserved words are left out of both sides: the token reader read every word as a name
(`const`, `return`), the tree reads none; the script checks that no rule of the policy
matches one, so dropping them changes no verdict.
"""

from __future__ import annotations

import argparse
import importlib.util
import random
import re
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import _standalone  # noqa: F401,E402 - the checkout as the package polyglot_harness
from polyglot_harness.utils.judging.syntax import Source  # noqa: E402
from polyglot_harness.utils.languages import javascript  # noqa: E402
from polyglot_harness.utils.languages.javascript_facts import javascript_facts  # noqa: E402

CHECKOUT = Path(__file__).resolve().parents[1]
BENCHMARK = Path("/work/data/polyglot-benchmark")
SUFFIXES = (".js", ".mjs", ".cjs", ".jsx", ".ts")
RESERVED = set("""break case catch class const continue debugger default delete do else export extends finally for
function if import in instanceof new return super switch this throw try typeof var void while with yield let static
enum await implements package protected interface private public null true false as async from get set of target
meta""".split()) - {"this", "super"}  # chain roots: both readers name `this.x`


def old_reader(revision: str):
    """`javascript_facts` of source_facts.py at `revision`, as a module of this checkout's package."""
    text = subprocess.run(["git", "-C", str(CHECKOUT), "show", f"{revision}:utils/judging/source_facts.py"],
                          capture_output=True, text=True, check=True).stdout
    name = "polyglot_harness.utils.judging._old_source_facts"
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader(name, loader=None))
    module.__package__ = "polyglot_harness.utils.judging"
    sys.modules[name] = module  # dataclasses look their module up
    exec(compile(text, f"{revision}:source_facts.py", "exec"), module.__dict__)
    return module.javascript_facts


def corpus(benchmark: Path) -> list[Path]:
    roots = [benchmark / "javascript" / "exercises" / "practice", CHECKOUT / "tests" / "fixtures",
             CHECKOUT / "samples"]
    return sorted(path for root in roots for path in root.rglob("*")
                  if path.suffix in SUFFIXES and path.is_file() and "node_modules" not in path.parts)


def fact_set(facts) -> set[tuple[str, str]]:
    return {(fact.kind, fact.text) for fact in facts if not (fact.kind == "name" and _reserved(fact.text))}


def _reserved(text: str) -> bool:
    word = re.fullmatch(r"(?:local:|key:)?([\w$]+)(?:\(\)|=|\[\]|!)?", text)
    return word is not None and word.group(1) in RESERVED


def check_reserved() -> None:
    """No rule matches a reserved word (alone, called or assigned): leaving them out is neutral."""
    for rule in javascript.SOURCE_POLICY.rules:
        for word in RESERVED:
            for text in (word, word + "()", word + "=", word + "[]", "key:" + word, "local:" + word):
                assert not (rule.kind == "name" and rule.regex.search(text)), (rule.name, text)


def core(text: str) -> str:
    """A name without its mark, `?.` read as `.`, private names without their `#` (the old
    reader read `this.#x` as `this` and `x`)."""
    return re.sub(r"^(local:|key:)", "", text).replace("?.", ".").replace("#", "")


def mark(text: str) -> str:
    return text[:text.index(":") + 1] if re.match(r"(local|key):", text) else "none"


def explain(old_only: set, new_only: set, new: set) -> tuple[list[tuple[str, tuple]], set, set]:
    """Differences of one file a known class explains: (class, fact) pairs, and what is left."""
    explained, olds, news = [], set(old_only), set(new_only)
    by_core = {(kind, core(text)): (kind, text) for kind, text in new_only}
    for kind, text in old_only:
        partner = by_core.get((kind, core(text)))
        if partner is not None:
            explained.append((f"mark {mark(text)} -> {mark(partner[1])}", (kind, text, partner[1])))
            olds.discard((kind, text))
            news.discard(partner)
        elif text.endswith("()") and (kind, text[:-2]) in new and mark(text) != "none":
            explained.append(("a definition the old reader read as a call", (kind, text)))
            olds.discard((kind, text))
    return explained, olds, news


def matched_rules(facts: set[tuple[str, str]]) -> set[str]:
    """The policy's rules any of the facts matches (allowances aside)."""
    return {rule.name for rule in javascript.SOURCE_POLICY.rules for kind, text in facts
            if kind == rule.kind and rule.regex.search(text)}


# What a mutation inserts: brackets, quotes and operators that break the syntax, and constructs
# the policy refuses (so that a broken file's facts are what is compared).
PIECES = ("(", ")", "{", "}", "[", "]", "`", "${", "'", '"', "/", "=>", ".", "?.", "#", "@", ":", ",", ";", "<", ">",
          "\n", " process.exit() ", " globalThis ", " require('fs') ", " eval ", "function", "class", "let", "*",
          " test('x') ", "\\u0070rocess.exit()")


def mutated(text: str, rng: random.Random) -> str:
    """`text` with one to five pieces inserted or characters deleted at random places."""
    chars = list(text)
    for _ in range(rng.randint(1, 5)):
        at = rng.randrange(len(chars) + 1)
        if rng.random() < 0.6:
            chars.insert(at, rng.choice(PIECES))
        elif chars:
            del chars[min(at, len(chars) - 1)]
    return "".join(chars)


def mutations(old, benchmark: Path, count: int, seed: int) -> None:
    """Broken files (mostly erroneous trees): where the old reader matched a rule the new did not."""
    rng = random.Random(seed)
    references = sorted((benchmark / "javascript" / "exercises" / "practice").glob("*/.meta/proof.ci.js"))
    runs, erroneous, lost = 0, 0, []
    for path in references:
        for _ in range(count):
            text = mutated(path.read_text(), rng)
            runs += 1
            erroneous += Source("javascript", text).has_errors
            missed = matched_rules(fact_set(old(text))) - matched_rules(fact_set(javascript_facts(text)))
            if missed:
                lost.append((path.parent.parent.name, sorted(missed)))
    print(f"\nmutated references: {runs}, erroneous trees {erroneous}, "
          f"where the old reader matched a rule the new did not: {len(lost)}")
    for name, missed in lost:
        print(f"  {name}: {missed}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", default="main")
    parser.add_argument("--benchmark_dir", type=Path, default=BENCHMARK)
    parser.add_argument("--show", type=int, default=3)
    parser.add_argument("--mutations", type=int, default=0, help="broken copies of each reference to compare too")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    check_reserved()
    old = old_reader(args.old)
    only_old: dict[tuple, list[str]] = defaultdict(list)
    only_new: dict[tuple, list[str]] = defaultdict(list)
    classes: dict[str, list[tuple]] = defaultdict(list)
    files, differing, erroneous, seconds = corpus(args.benchmark_dir), 0, [], Counter()
    rule_changes: list[tuple[str, list[str], list[str]]] = []
    for path in files:
        text = path.read_text(errors="replace")
        label = str(path.relative_to(args.benchmark_dir if path.is_relative_to(args.benchmark_dir) else CHECKOUT))
        started = time.perf_counter()
        before = fact_set(old(text))
        seconds["old"] += time.perf_counter() - started
        started = time.perf_counter()
        after = fact_set(javascript_facts(text))
        seconds["new"] += time.perf_counter() - started
        if Source("javascript", text).has_errors:
            erroneous.append(label)
        differing += before != after
        rules_before, rules_after = matched_rules(before), matched_rules(after)
        if rules_before != rules_after:
            rule_changes.append((label, sorted(rules_before - rules_after), sorted(rules_after - rules_before)))
        explained, olds, news = explain(before - after, after - before, after)
        for name, fact in explained:
            classes[name].append((fact, label))
        for fact in olds:
            only_old[fact].append(label)
        for fact in news:
            only_new[fact].append(label)
    print(f"files {len(files)}  differing {differing}  parse errors {len(erroneous)}  "
          f"old {seconds['old'] * 1000:.0f} ms  new {seconds['new'] * 1000:.0f} ms")
    for label in erroneous:
        print(f"  parse error: {label}")
    print(f"files whose matched rules differ: {len(rule_changes)}")
    for label, lost, gained in rule_changes:
        print(f"  {label}: only old {lost}, only new {gained}")
    print("\nexplained differences")
    for name, rows in sorted(classes.items()):
        print(f"  {len(rows):4d}  {name}")
        for fact, label in rows if name.startswith("mark none") else rows[:args.show]:
            print(f"          {fact[1:]}  {label}")
    for title, table in (("only the old reader", only_old), ("only the new reader", only_new)):
        print(f"\n{title}: {len(table)} facts")
        for fact, labels in sorted(table.items(), key=lambda item: (-len(item[1]), item[0])):
            print(f"  {len(labels):4d}  {fact[0]:6s} {fact[1]!r:50.50s}  {', '.join(labels[:args.show])}")
    if args.mutations:
        mutations(old, args.benchmark_dir, args.mutations, args.seed)


if __name__ == "__main__":
    main()
