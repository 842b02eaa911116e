"""The answer key's comparison (issue 32, docs/answer-key.md): what the test binary observed of the
solution's values, by assertion id, against what the reference's run recorded at preparation.

The key never enters a sandbox: a language module (utils/languages/cpp_key.py) rewrites the
hidden assertions so that the binary reports values instead of comparing them; this module
reads those reports and judges them. Pure functions.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping, Sequence


@dataclass(frozen=True)
class AnswerKey:
    """What a language provides: `convert(tree, pristine_tree, hidden_paths, solution_paths,
    only_ids)` rewrites the hidden tests and returns the ids converted; `error_ids(build_output,
    hidden_paths, ids)` the ids whose rewrite the compiler refused; the report file's name."""
    convert: Callable[[Path, Path, Sequence[str], Sequence[str], frozenset[str] | None], frozenset[str]]
    error_ids: Callable[[str, Sequence[str], frozenset[str]], frozenset[str]]
    report_file: str


@dataclass(frozen=True)
class Observation:
    id: str
    test: str
    value: str


def parse_observations(text: str) -> list[Observation]:
    observations = []
    for line in text.splitlines():
        parts = line.split("\t")
        if len(parts) == 3:
            observations.append(Observation(*parts))
    return observations


def observed_values(observations: Sequence[Observation], ignored_tests: frozenset[str]) -> dict[str, list[str]]:
    """Each id's renderings in the order they came, those of the tests named in `ignored_tests`
    (the canaries' copies) left out."""
    ignored = {_quoted(name) for name in ignored_tests}  # as the observer writes a name
    values: dict[str, list[str]] = {}
    for observation in observations:
        if observation.test not in ignored:
            values.setdefault(observation.id, []).append(observation.value)
    return values


def observations_by_test(observations: Sequence[Observation], tests: Mapping[str, str]) -> dict[str, dict[str, list[str]]]:
    """The renderings observed in the tests named by `tests` (test name -> what it stands for,
    e.g. a variant's copy under its drawn name), by what they stand for, then by id."""
    wanted = {_quoted(name): label for name, label in tests.items()}
    values: dict[str, dict[str, list[str]]] = {}
    for observation in observations:
        if observation.test in wanted:
            values.setdefault(wanted[observation.test], {}).setdefault(observation.id, []).append(observation.value)
    return values


def _quoted(text: str) -> str:
    """The observer's quoted(): `"` and `\\` escaped, other bytes outside printable ASCII as \\xNN."""
    out = []
    for byte in text.encode("utf-8"):
        char = chr(byte)
        out.append("\\" + char if char in '"\\' else char if 0x20 <= byte < 0x7f else f"\\x{byte:02x}")
    return '"' + "".join(out) + '"'


@dataclass(frozen=True)
class KeyFinding:
    reason: str  # "missing" | "mismatch"
    detail: str


def judge(key: Mapping[str, Sequence[str]], observed: Mapping[str, Sequence[str]]) -> KeyFinding | None:
    """The first difference between the key and what the binary observed, by id; None: all match.
    The detail never shows the expected value (it goes back to the agent on a second try)."""
    for assertion in sorted(key):
        values, wanted = list(observed.get(assertion, ())), list(key[assertion])
        if len(values) < len(wanted):
            return KeyFinding("missing", f"assertion {assertion}: observed {len(values)} time(s), the reference "
                                         f"{len(wanted)}")
        if len(values) > len(wanted):
            return KeyFinding("mismatch", f"assertion {assertion}: observed {len(values)} time(s) (duplicate), "
                                          f"the reference {len(wanted)}")
        for number, (value, expected) in enumerate(zip(values, wanted), 1):
            if value != expected:
                return KeyFinding("mismatch", f"assertion {assertion} (observation {number}): the solution's value "
                                              f"{value[:200]} is not the expected one")
    extra = sorted(set(observed) - set(key))
    if extra:
        return KeyFinding("mismatch", f"observations of assertions the key does not hold: {', '.join(extra[:5])}")
    return None
