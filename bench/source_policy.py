"""The source policy's false positives and cost, per language, on every honest corpus at hand.

    python3 bench/source_policy.py [--benchmark_dir DIR]   (default: ../shared/data's tarball)

Each exercise is read the way preparation reads it (utils/prepare/exercises.py: the stub, the hidden
tests, the reference at the paths it replaces) and its files are checked the way grading
checks a patch's kept files (utils/judging/source_policy.refusals). Corpora:

- references:         the 225 reference solutions (the grading view: stub, tests and
                      reference allow) — the gate, pinned to 0 by tests/test_source_policy.py;
- references_strict:  the same, allowances from the stub and tests only: how often a rule
                      is off only because the reference itself uses the construct;
- stubs:              the untouched solution files;
- commented:          each reference with a comment naming every refused construct;
- decoys:             each reference with honest code whose names contain refused words;
- unparsed:           (Python) each reference as `ast.unparse` prints it;
- formatted:          (Rust, Go) each reference through rustfmt at 40 columns (names split over
                      lines) or `gofmt -s`, where the host has them;
- samples:            the bundled samples/ exercises, references and stubs;
- attackers:          tests/fixtures/forgers and early_exit (true positives: should be refused).

Printed per language: files checked, refusals (instances with any), and the policy's time
per instance (allowances + check).
"""

from __future__ import annotations

import argparse
import ast
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Mapping

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import _standalone  # noqa: F401,E402 - the checkout as the package polyglot_harness
from polyglot_harness.utils.judging.source_policy import ExerciseSources, Violation, refusals  # noqa: E402
from polyglot_harness.utils.languages import LANGUAGES  # noqa: E402
from polyglot_harness.utils.prepare.exercises import discover_exercises, plan_instance, read_exercise  # noqa: E402

CHECKOUT = Path(__file__).resolve().parents[1]
TARBALL = CHECKOUT.parent / "shared" / "data" / "polyglot-benchmark-7e0611e.tar.gz"

# Words every policy refuses somewhere, in comments: a comment is never code.
COMMENT = {
    "python": "# sys._getframe os._exit unittest pytest open('x_test.py') inspect gc ctypes __builtins__ eval\n",
    "javascript": "// process.exit(0) globalThis expect test it describe jest require('fs') eval Function\n"
                  "/* Error.prepareStackTrace child_process */\n",
    "go": "// os.Exit(0) unsafe //go:linkname testing os/exec os.ReadFile(\"x_test.go\")\n",
    "rust": "// std::process::exit(0) #[link_section = \".init_array\"] asm! extern \"C\" std::fs\n"
            "/* /* nested */ unsafe #[used] */\n",
    "java": "// System.exit(0) setAccessible Runtime.getRuntime().addShutdownHook org.junit\n"
            "/* sun.misc.Unsafe Class.forName */\n",
    "cpp": "// std::exit(0) asm __attribute__((constructor)) atexit std::system fopen catch.hpp\n"
           "/* #include \"test/catch.hpp\" CATCH_CONFIG_RUNNER */\n",
}
# Honest code whose names merely contain refused words (appended to each reference).
DECOY = {
    "python": "\n\ndef _processed_exit_codes(testing_values, opened=0):\n"
              "    exit_count = sum(1 for test_case in testing_values if test_case)\n"
              "    system_name, inspected = 'sys', opened\n    return exit_count, system_name, inspected\n",
    "javascript": "\nconst processedExits = (testing, opened = 0) => {\n"
                  "  const exitCode = testing.filter((item) => /test/.test(item)).length;\n"
                  "  const described = { it: 1, test: 2, describe: () => exitCode };\n"
                  "  return exitCode + opened + described.it;\n};\nvoid processedExits;\n",
    "go": "\nfunc processedExits(testingValues []int, opened int) int {\n\texitCount := 0\n"
          "\tfor _, testCase := range testingValues {\n\t\texitCount += testCase\n\t}\n"
          "\treturn exitCount + opened\n}\n\nvar _ = processedExits\n",
    "rust": "\n#[allow(dead_code)]\nfn processed_exits(testing_values: &[i32], opened: i32) -> i32 {\n"
            "    let exit_count: i32 = testing_values.iter().sum();\n    let used_fs = 'f';\n"
            "    exit_count + opened + used_fs as i32\n}\n",
    "java": "\nclass ProcessedExits {\n    static int exitCount(int[] testingValues, int opened) {\n"
            "        int systemExits = 0;\n        for (int testCase : testingValues) systemExits += testCase;\n"
            "        return systemExits + opened;\n    }\n}\n",
    "cpp": "\nnamespace decoy {\ninline int processed_exits(int testing_value, int opened) {\n"
           "    int exit_count = testing_value + opened;\n    int system_name = 1'000;\n"
           "    return exit_count + system_name;\n}\n}\n",
}


@dataclass(frozen=True)
class Case:
    language: str
    label: str
    kept: Mapping[str, str]
    sources: ExerciseSources


@dataclass
class Tally:
    files: int = 0
    instances: int = 0
    refused: int = 0
    seconds: float = 0.0
    examples: list[str] | None = None


def benchmark_checkout(directory: Path | None) -> Path:
    """An extracted benchmark: `directory`, or ../shared/data's tarball unpacked to a temp dir."""
    if directory is not None:
        return directory
    target = Path(tempfile.mkdtemp(prefix="policy-bench-"))
    with tarfile.open(TARBALL) as archive:
        archive.extractall(target, filter="data")
    return target / "polyglot-benchmark"


def exercise_cases(checkout: Path) -> Iterable[tuple[str, str, dict[str, str], ExerciseSources]]:
    """(language, instance id, reference {path: text}, sources) of every exercise."""
    for location in discover_exercises(checkout, None):
        plan = plan_instance(read_exercise(location))
        text = lambda files: {f.path: f.content.decode("utf-8", "replace") for f in files}  # noqa: E731
        base = text(plan.base_files)
        stub = {path: base[path] for path in plan.exercise.config.solution if path in base}
        reference = text(plan.reference_files)
        yield location.language, plan.instance_id, reference, ExerciseSources(stub, text(plan.hidden_files), reference)


def corpora(checkout: Path) -> dict[str, list[Case]]:
    found: dict[str, list[Case]] = defaultdict(list)
    for language, instance_id, reference, sources in exercise_cases(checkout):
        found["references"].append(Case(language, instance_id, reference, sources))
        found["references_strict"].append(Case(language, instance_id, reference,
                                               ExerciseSources(sources.stub, sources.tests, {})))
        found["stubs"].append(Case(language, instance_id, dict(sources.stub), sources))
        found["commented"].append(Case(language, instance_id, {p: COMMENT[language] + t for p, t in reference.items()},
                                       sources))
        found["decoys"].append(Case(language, instance_id, _with_decoy(language, reference), sources))
        if language == "python":
            found["unparsed"].append(Case(language, instance_id, {p: _unparsed(t) for p, t in reference.items()},
                                          sources))
        if language in FORMATTERS and shutil.which(FORMATTERS[language][0]):
            found["formatted"].append(Case(language, instance_id, {p: _formatted(language, p, t)
                                                                   for p, t in reference.items()}, sources))
    samples = CHECKOUT / "samples"
    for language, instance_id, reference, sources in exercise_cases(samples):
        found["samples"].append(Case(language, instance_id, reference, sources))
        found["samples"].append(Case(language, instance_id + " (stub)", dict(sources.stub), sources))
    return found


def _with_decoy(language: str, reference: Mapping[str, str]) -> dict[str, str]:
    """The decoy goes into the first file the policy reads (a header-only C++ file takes it too)."""
    policy = LANGUAGES[language].source_policy
    chosen = next((path for path in sorted(reference) if policy.reads(path) and not path.endswith(".h")),
                  next((path for path in sorted(reference) if policy.reads(path)), None))
    return {path: text + DECOY[language] if path == chosen else text for path, text in reference.items()}


FORMATTERS = {"rust": ["rustfmt", "--emit", "stdout", "--edition", "2021", "--config", "max_width=40"],
              "go": ["gofmt", "-s"]}


def _formatted(language: str, path: str, text: str) -> str:
    if not path.endswith((".rs", ".go")):
        return text
    completed = subprocess.run(FORMATTERS[language], input=text, capture_output=True, text=True)
    return completed.stdout if completed.returncode == 0 and completed.stdout.strip() else text


def _unparsed(text: str) -> str:
    try:
        return ast.unparse(ast.parse(text))
    except SyntaxError:
        return text


def attacker_cases(checkout: Path) -> list[Case]:
    """Forgers and early exits (tests/fixtures), each against its exercise's own allowances."""
    import json

    by_id = {instance_id: sources for _, instance_id, _, sources in exercise_cases(checkout)}
    samples = {instance_id: sources for _, instance_id, _, sources in exercise_cases(CHECKOUT / "samples")}
    cases = []
    for meta in sorted([*(CHECKOUT / "tests/fixtures/forgers").glob("*/*/forger.json"),
                        *(CHECKOUT / "tests/fixtures/forgers_policy_only").glob("*/*/forger.json")]):
        instance_id = json.loads(meta.read_text())["instance_id"]
        cases.append(Case(instance_id.split("__")[0], f"{meta.parent.parent.name}/{meta.parent.name}",
                          _files_under(meta.parent / "files"), by_id[instance_id]))
    for exercise in sorted((CHECKOUT / "tests/fixtures/early_exit").glob("*/*")):
        instance_id = f"{exercise.parent.name}__{exercise.name}"
        cases.append(Case(exercise.parent.name, f"early_exit/{exercise.parent.name}/{exercise.name}",
                          _files_under(exercise), samples.get(instance_id, ExerciseSources())))
    return cases


def _files_under(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): p.read_text() for p in sorted(root.rglob("*")) if p.is_file()}


def run_case(case: Case) -> tuple[tuple[Violation, ...], float]:
    policy = LANGUAGES[case.language].source_policy
    started = time.perf_counter()
    found = refusals(policy, case.kept, case.sources)
    return found, time.perf_counter() - started


def tally(cases: list[Case], keep: Callable[[Case, tuple[Violation, ...]], None] = lambda c, v: None) -> dict[str, Tally]:
    by_language: dict[str, Tally] = defaultdict(Tally)
    for case in cases:
        found, seconds = run_case(case)
        row = by_language[case.language]
        row.instances += 1
        row.files += sum(1 for path in case.kept if LANGUAGES[case.language].source_policy.reads(path))
        row.seconds += seconds
        if found:
            row.refused += 1
            keep(case, found)
    return by_language


def rule_hits(cases: list[Case]) -> dict[tuple[str, str], set[str]]:
    """(language, rule) -> the instances whose honest files match the rule with NO allowance
    at all: each rule's exposure to false positives before the exercise's own files count."""
    from polyglot_harness.utils.judging.source_policy import check

    hits: dict[tuple[str, str], set[str]] = defaultdict(set)
    for case in cases:
        policy = LANGUAGES[case.language].source_policy
        for violation in check(policy, {p: t for p, t in case.kept.items() if policy.reads(p)}):
            hits[(case.language, violation.rule)].add(case.label)
    return hits


def print_rule_table(all_corpora: dict[str, list[Case]]) -> None:
    honest = [case for name in ("references", "stubs", "samples") for case in all_corpora.get(name, [])]
    hits = rule_hits(honest)
    print("\nper rule: honest instances (references, stubs, samples) matching it with no allowance at all")
    for language, spec in LANGUAGES.items():
        if spec.source_policy is None:
            continue
        row = [f"{rule.name} {len(hits.get((language, rule.name), ()))}" for rule in spec.source_policy.rules]
        print(f"  {language:<11} " + ", ".join(row))
    for (language, rule), labels in sorted(hits.items()):
        print(f"    {language}/{rule}: {', '.join(sorted(labels)[:6])}{' ...' if len(labels) > 6 else ''}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--benchmark_dir", type=Path, help="an extracted benchmark (default: the tarball)")
    parser.add_argument("--show", type=int, default=3, help="refusals shown per corpus")
    args = parser.parse_args(argv)
    checkout = benchmark_checkout(args.benchmark_dir)
    all_corpora = corpora(checkout)
    all_corpora["attackers"] = attacker_cases(checkout)
    print(f"{'corpus':<18} {'language':<11} {'instances':>9} {'files':>6} {'refused':>8} {'ms/instance':>12}")
    for name, cases in all_corpora.items():
        shown: list[str] = []
        keep = lambda case, found: shown.append(f"    {case.label}: {found[0].describe()}")  # noqa: E731
        for language, row in sorted(tally(cases, keep).items()):
            print(f"{name:<18} {language:<11} {row.instances:>9} {row.files:>6} {row.refused:>8} "
                  f"{1000 * row.seconds / max(row.instances, 1):>12.2f}")
        if name != "attackers":
            print("\n".join(shown[:args.show]) if shown else "")
        else:
            missed = [case.label for case in cases if not run_case(case)[0]]
            print(f"    attackers not refused: {', '.join(missed) or 'none'}")
    print_rule_table(all_corpora)
    return 0


if __name__ == "__main__":
    sys.exit(main())
