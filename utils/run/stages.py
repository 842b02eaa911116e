"""Staged evaluation (HyperAgents' polyglot domain: the small subset first, then small+medium).

A run of stages `small:0.4,medium` evaluates the instances of `small`; it goes on to the
instances of `small` and `medium` together only if stage 1's accuracy reaches 0.4. A stage
names a subset (any name --subset accepts) and optionally a threshold in [0, 1]; a stage
without one always lets the run continue.

Accuracy of stage k = resolved / instances, over the instances of stages 1..k together (each
id counted once, after --languages), where resolved counts those whose verdict is `resolved`:
unresolved, empty_patch, error and incomplete instances count as not resolved, as in the
report's accuracy_score. With --attempts K, an instance counts its success rate over its
attempts (2 of 3 resolved: 2/3), so accuracy is the mean over attempts, as accuracy_score is.
A stage passes when accuracy >= threshold (compared exactly: 4/10 passes 0.4).

Pure functions only: the run goes through the stages in flow.py (_run_stages).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from fractions import Fraction
from typing import Any, Sequence


class StageError(ValueError):
    """A --stages value or Stage that cannot be run."""


@dataclass(frozen=True)
class Stage:
    subset: str                     # a subset name, as --subset takes it
    threshold: float | None = None  # the accuracy needed to go on to the next stage; None = always go on

    def __post_init__(self) -> None:
        if not self.subset:
            raise StageError("--stages: a stage needs a subset name")
        if self.threshold is not None and not _is_fraction(self.threshold):
            raise StageError(f"--stages: threshold of {self.subset!r} must be a number in [0, 1], "
                             f"got {self.threshold!r}")


def _is_fraction(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= 1


@dataclass(frozen=True)
class StageResult:
    """One stage as it ended; `to_json` gives the run report's `stages` entries."""
    subset: str
    threshold: float | None
    instances: int   # instances of stages 1..k together
    resolved: int | float  # of those, resolved (with --attempts: success rates summed, 6 places)
    accuracy: float  # resolved / instances, rounded to 6 places (0.0 for no instances)
    passed: bool     # no threshold, or accuracy >= threshold

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def parse_stages(text: str) -> tuple[Stage, ...]:
    """'small:0.4,medium' -> (Stage('small', 0.4), Stage('medium')). Raises StageError with one
    line for an empty value, a missing name, or a threshold that is not a number in [0, 1]."""
    items = [item.strip() for item in str(text).split(",")]
    if not any(items):
        raise StageError("--stages needs at least one stage, e.g. small:0.4,medium")
    return tuple(_parse_stage(item) for item in items)


def _parse_stage(item: str) -> Stage:
    subset, colon, threshold = item.partition(":")
    if not colon:
        return Stage(subset.strip())
    try:
        value = float(threshold)
    except ValueError:
        raise StageError(f"--stages: threshold of {subset.strip()!r} must be a number in [0, 1], "
                         f"got {threshold.strip()!r}") from None
    return Stage(subset.strip(), value)


def check_stages(stages: Sequence[Stage], known_subsets: Sequence[str]) -> None:
    """At least one stage, every subset known, none named twice (a repeat adds no instance)."""
    if not stages:
        raise StageError("--stages needs at least one stage, e.g. small:0.4,medium")
    names = [stage.subset for stage in stages]
    for name in names:
        if name not in known_subsets:
            raise StageError(f"--stages: unknown subset {name!r}; available: {', '.join(known_subsets)}")
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise StageError(f"--stages: subset(s) named twice: {', '.join(repeated)}")


def judge_stage(stage: Stage, instances: int, resolved: int | Fraction) -> StageResult:
    """Stage k's result, given the number of instances of stages 1..k and how many are resolved
    (with attempts: their success rates summed, exactly)."""
    score = Fraction(resolved)
    passed = stage.threshold is None or (instances > 0 and score / instances >= Fraction(str(stage.threshold)))
    accuracy = round(float(score) / instances, 6) if instances else 0.0
    shown = int(score) if score.denominator == 1 else round(float(score), 6)
    return StageResult(stage.subset, stage.threshold, instances, shown, accuracy, passed)


def ended_because(result: StageResult, last: bool, interrupted: bool) -> str | None:
    """Why the run stops after this stage, or None when it goes on."""
    if interrupted:
        return "interrupted"
    if not result.passed:
        return f"accuracy {_shown(result.accuracy, result.threshold)} < {result.threshold:.2f}"
    return "all stages run" if last else None


def _shown(accuracy: float, threshold: float | None) -> str:
    """Two decimals, more when two would print the accuracy equal to the threshold it missed."""
    shown = f"{accuracy:.2f}"
    return shown if threshold is None or shown != f"{threshold:.2f}" else f"{accuracy:.6f}".rstrip("0")


def staged_report_json(results: Sequence[StageResult], ended_because_text: str) -> dict[str, Any]:
    """The run report's staged keys: `stages` (StageResult.to_json per stage run),
    `ended_at_stage` (the last stage run's subset) and `ended_because`."""
    return {"stages": [result.to_json() for result in results], "ended_at_stage": results[-1].subset,
            "ended_because": ended_because_text}
