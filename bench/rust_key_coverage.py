"""The Rust answer key's coverage per exercise (docs/answer-key.md "Rust"): no Docker.

    python3 bench/rust_key_coverage.py --dataset DIR [--benchmark_dir DIR]

Every assertion macro of each hidden test file (`assert_eq!`, `assert_ne!`, `assert!`) is
counted; the converted ones are those the prepared dataset's `observation_key` holds (what the
real pipeline kept: converted, compiled with the reference, observed alike twice). Each of the
others is given the first reason `rust_key` leaves it in-process, in the order below.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import _standalone  # noqa: F401,E402
from polyglot_harness.utils.judging.canaries import call_arguments  # noqa: E402
from polyglot_harness.utils.languages import rust_key  # noqa: E402

ANY = re.compile(r"(?<![\w!:])(assert_eq|assert_ne|assert)!\(")


def reason(test: str, masked: str, match: re.Match[str], bodies, candidates: set[int]) -> str:
    start = match.start()
    if start in candidates:
        return "refused by rustc or unstable (candidate not in the key)"
    if not any(a <= start < b for a, b in bodies):
        return "outside a #[test] body (helper fn, should_panic test)"
    if match[1] == "assert_ne":
        return "assert_ne! (the test states no value)"
    before = masked[:start].rstrip()
    if before and before[-1] not in "{};":
        return "not a statement of its own (closure, match arm)"
    spans = call_arguments(masked, match.end() - 1, quotes="") or []
    if (match[1] == "assert_eq" and len(spans) != 2) or (match[1] == "assert" and len(spans) != 1):
        return "a message argument"
    if match[1] == "assert" and rust_key._split_equality(masked[slice(*spans[0])]) is None:
        return "a comparison other than == (`<`, `&&`, ...)"
    sides = [masked[a:b] for a, b in spans] if match[1] == "assert_eq" else []
    if any("{" in side for side in sides):
        return "a struct literal or block (a solution type)"
    return "expected side not constant (a solution call, a helper, a loop variable, a local read elsewhere)"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dataset", type=Path, required=True)
    parser.add_argument("--benchmark_dir", type=Path, default=Path("/work/data/polyglot-benchmark"))
    args = parser.parse_args()
    metadata = json.loads((args.dataset / "polyglot_benchmark_metadata.json").read_text())
    totals = [0, 0]
    print("| exercise | converted | in-process, why |\n|---|---|---|")
    for instance in sorted((i for i in metadata if i["instance_id"].startswith("rust__")), key=lambda i: i["instance_id"]):
        slug = instance["instance_id"].split("__", 1)[1]
        exercise = args.benchmark_dir / "rust" / "exercises" / "practice" / slug
        key = instance.get("observation_key") or {}
        enums = rust_key.stub_enums((exercise / "src" / "lib.rs").read_text()) if (exercise / "src" / "lib.rs").is_file() else {}
        crate = rust_key.crate_name(exercise)
        converted = every = 0
        why: Counter = Counter()
        for path in sorted((exercise / "tests").glob("*.rs")):
            relative = f"tests/{path.name}"
            test = path.read_text()
            masked = rust_key.mask(test)
            bodies = rust_key._bodies(test, masked)
            found = {c.start for c in rust_key.candidates(test, enums, crate)}
            ids = {c.start: c.id for c in rust_key.candidates(test, enums, crate)}
            for match in ANY.finditer(masked):
                every += 1
                if f"{relative}:{ids.get(match.start(), '-')}" in key:
                    converted += 1
                else:
                    why[reason(test, masked, match, bodies, found)] += 1
        totals[0] += converted
        totals[1] += every
        print(f"| {slug} | {converted}/{every} | " + "; ".join(f"{n} {r}" for r, n in why.most_common()) + " |")
    print(f"| **total** | **{totals[0]}/{totals[1]} ({100 * totals[0] // max(totals[1], 1)}%)** | |")


if __name__ == "__main__":
    main()
