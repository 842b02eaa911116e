"""Two runs side by side: what flipped, per language, per reason, tokens and money, and whether
the difference is more than noise (exact McNemar on the flips).

    comparison = compare_runs("runs/gen_2_0", "runs/gen_3_0", prices=None)
    print(format_comparison(comparison)); comparison.to_json()

Contract:
- A run is a run directory (`<output_dir>/<name>_0/`), loaded once (utils/records/loaded_run.py:
  its results and `run_settings.json`). Nothing is written to either.
- Runs made on different datasets (run_settings.json `dataset_hash` differ) are refused
  (CompareError). A run without a dataset hash is compared, and a note says so.
- Runs with different instance sets are compared on the intersection; the instances only in
  A / only in B are listed, and every number below is over the intersection.
- An instance `incomplete` or `error` in either run is *excluded*: it is neither a flip nor a
  McNemar pair, and is listed with its two buckets. It still counts in the per-language and
  accuracy denominators (it is not resolved there), as in report.json.
- Newly resolved: not resolved in A, resolved in B; regressed: the reverse. McNemar's exact
  two-sided p-value is the binomial test of b = newly resolved against c = regressed, p = 1/2.
  The flips are those of the instances' top-level verdicts (attempt 1's with --attempts).
- The paired comparison (`paired`, utils/records/estimators.py paired_comparison) is on the
  per-instance success rates (successes / attempts; 0 or 1 with one attempt) of the same
  counted instances: B's mean minus A's, a two-sided sign-flip permutation p-value, and the
  instances that would tell a difference of that size from noise (alpha 0.05, power 0.8) at
  the observed spread, with the runs' attempts per instance. With one attempt each McNemar is
  the figure to read; with attempts, the paired one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any, Mapping

from ..outcomes import FINISHED_BUCKETS, Bucket
from .pricing import PriceTable, RunCost, run_cost
from ..records.loaded_run import LoadedRun, LoadError, load_run_dir
from ..records.estimators import PairedComparison, paired_comparison
from ..records.results import USAGE_KEYS, RunReport


class CompareError(ValueError):
    """The runs cannot be compared (missing, empty, other datasets); one line."""


def mcnemar_exact_p(newly_resolved: int, regressed: int) -> float:
    """Exact two-sided McNemar p-value: P(X <= min(b, c)) * 2, capped at 1, for X ~ Bin(b + c, 1/2).
    1.0 when there are no discordant pairs."""
    if newly_resolved < 0 or regressed < 0:
        raise ValueError("flip counts cannot be negative")
    pairs = newly_resolved + regressed
    tail = sum(math.comb(pairs, k) for k in range(min(newly_resolved, regressed) + 1))
    return float(min(Fraction(1), Fraction(2 * tail, 2 ** pairs)))


def load_run(run_dir: str | Path) -> LoadedRun:
    """A run directory loaded for comparing; CompareError when it is missing or holds no results."""
    try:
        loaded = load_run_dir(run_dir)
    except LoadError as error:
        raise CompareError(str(error)) from None
    if not loaded.results:
        raise CompareError(f"run directory {loaded.source} holds no instance results")
    return loaded


@dataclass(frozen=True)
class Excluded:
    instance_id: str
    bucket_a: str
    bucket_b: str


@dataclass(frozen=True)
class Side:
    """One run restricted to the instances both runs hold."""

    loaded: LoadedRun                   # the whole run, as loaded (once)
    report: RunReport                   # its report over the common instances alone
    cost: RunCost | None                # None without a price table

    @property
    def run_dir(self) -> Path:
        return self.loaded.source

    @property
    def dataset_hash(self) -> str | None:
        return self.loaded.dataset_hash

    @property
    def resolved(self) -> int:
        return len(self.report.ids[Bucket.RESOLVED])

    def to_json(self) -> dict[str, Any]:
        variants = self.report.variants_json()
        return {"run_dir": str(self.run_dir), "dataset_hash": self.dataset_hash, "resolved": self.resolved,
                "accuracy": self.report.accuracy_score,
                **({"accuracy_on_variants": variants["accuracy_score_on_variants"],
                    "memorization_gap": variants["memorization_gap"]} if variants else {})}


@dataclass(kw_only=True, frozen=True)
class RunComparison:
    a: Side
    b: Side
    common_ids: tuple[str, ...]
    only_in_a: tuple[str, ...]
    only_in_b: tuple[str, ...]
    newly_resolved: tuple[str, ...]     # b: not resolved in A, resolved in B
    regressed: tuple[str, ...]          # c: resolved in A, not in B
    both_resolved: int
    neither_resolved: int
    excluded: tuple[Excluded, ...]      # incomplete/error in either run
    notes: tuple[str, ...]
    languages: Mapping[str, str]        # common instance id -> its language (A's result; "?" if unset)
    paired: PairedComparison | None = None  # per-instance success rates; None: no counted instance

    @property
    def attempts(self) -> dict[str, int]:
        """Attempts per instance in each run (1 without --attempts)."""
        return {"a": self.a.report.attempts_per_instance, "b": self.b.report.attempts_per_instance}

    def paired_json(self) -> dict[str, Any] | None:
        if self.paired is None:
            return None
        return {"instances": self.paired.instances, "mean_difference": round(self.paired.mean_difference, 6),
                "p_value": self.paired.p_value, "exact": self.paired.exact,
                "instances_needed": self.paired.instances_needed, "attempts": self.attempts}

    @property
    def mcnemar_p(self) -> float:
        return mcnemar_exact_p(len(self.newly_resolved), len(self.regressed))

    def per_language(self) -> dict[str, dict[str, int]]:
        """language -> instances, resolved_a, resolved_b, delta, newly_resolved, regressed."""
        table: dict[str, dict[str, int]] = {}
        for language in sorted(set(self.a.report.per_language) | set(self.b.report.per_language)):
            row_a = self.a.report.per_language.get(language, {})
            row_b = self.b.report.per_language.get(language, {})
            resolved_a, resolved_b = row_a.get(Bucket.RESOLVED, 0), row_b.get(Bucket.RESOLVED, 0)
            table[language] = {"instances": row_a.get("total", 0), "resolved_a": resolved_a,
                               "resolved_b": resolved_b, "delta": resolved_b - resolved_a,
                               "newly_resolved": sum(self.languages[i] == language for i in self.newly_resolved),
                               "regressed": sum(self.languages[i] == language for i in self.regressed)}
        return table

    def reasons(self) -> dict[str, dict[str, int]]:
        """reason -> a, b, delta; the largest changes first."""
        rows = {reason: _delta(self.a.report.reasons.get(reason, 0), self.b.report.reasons.get(reason, 0))
                for reason in set(self.a.report.reasons) | set(self.b.report.reasons)}
        return dict(sorted(rows.items(), key=lambda item: (-abs(item[1]["delta"]), item[0])))

    def usage(self) -> dict[str, dict[str, int]]:
        """USAGE_KEYS summed over the common instances: a, b, delta."""
        return {key: _delta(self.a.report.agent_usage[key], self.b.report.agent_usage[key]) for key in USAGE_KEYS}

    def cost(self) -> dict[str, Any] | None:
        """USD over the common instances (unpriced instances left out, and counted); None without prices."""
        if self.a.cost is None or self.b.cost is None:
            return None
        usd_a, usd_b = round(self.a.cost.total_usd, 6), round(self.b.cost.total_usd, 6)
        return {"currency": "USD", "a": usd_a, "b": usd_b, "delta": round(usd_b - usd_a, 6),
                "unpriced_a": len(self.a.cost.unpriced_ids), "unpriced_b": len(self.b.cost.unpriced_ids)}

    def to_json(self) -> dict[str, Any]:
        """Every number of the comparison; the keys are those of the methods and fields above."""
        return {
            "run_a": self.a.to_json(), "run_b": self.b.to_json(),
            "common_instances": len(self.common_ids), "only_in_a": list(self.only_in_a),
            "only_in_b": list(self.only_in_b),
            "newly_resolved": list(self.newly_resolved), "regressed": list(self.regressed),
            "both_resolved": self.both_resolved, "neither_resolved": self.neither_resolved,
            "excluded": [{"instance_id": e.instance_id, "bucket_a": e.bucket_a, "bucket_b": e.bucket_b}
                         for e in self.excluded],
            "mcnemar": {"newly_resolved": len(self.newly_resolved), "regressed": len(self.regressed),
                        "p_value": self.mcnemar_p},
            "paired": self.paired_json(),
            "per_language": self.per_language(), "reasons": self.reasons(), "usage": self.usage(),
            "cost": self.cost(), "notes": list(self.notes),
        }


def _delta(a: int, b: int) -> dict[str, int]:
    return {"a": a, "b": b, "delta": b - a}


def compare_runs(run_a: str | Path | LoadedRun, run_b: str | Path | LoadedRun,
                 prices: PriceTable | None = None) -> RunComparison:
    """Run B against run A, each a run directory or a run loaded by load_run (the module
    docstring is the contract); CompareError when refused."""
    loaded_a, loaded_b = (run if isinstance(run, LoadedRun) else load_run(run) for run in (run_a, run_b))
    if loaded_a.dataset_hash and loaded_b.dataset_hash and loaded_a.dataset_hash != loaded_b.dataset_hash:
        raise CompareError(f"the runs were made on different datasets (dataset_hash {loaded_a.dataset_hash} in "
                           f"{loaded_a.source}, {loaded_b.dataset_hash} in {loaded_b.source}); refusing to compare")
    common = sorted(set(loaded_a.results) & set(loaded_b.results))
    if not common:
        raise CompareError(f"{loaded_a.source} and {loaded_b.source} have no instance in common")
    side_a, side_b = _side(loaded_a, common, prices), _side(loaded_b, common, prices)
    pairs = [(i, loaded_a.results[i].eval_result, loaded_b.results[i].eval_result) for i in common]
    counted = [(i, a, b) for i, a, b in pairs if a in FINISHED_BUCKETS and b in FINISHED_BUCKETS]
    return RunComparison(
        a=side_a, b=side_b, common_ids=tuple(common),
        only_in_a=tuple(sorted(set(loaded_a.results) - set(common))),
        only_in_b=tuple(sorted(set(loaded_b.results) - set(common))),
        newly_resolved=tuple(i for i, a, b in counted if a != Bucket.RESOLVED and b == Bucket.RESOLVED),
        regressed=tuple(i for i, a, b in counted if a == Bucket.RESOLVED and b != Bucket.RESOLVED),
        both_resolved=sum(a == b == Bucket.RESOLVED for _, a, b in counted),
        neither_resolved=sum(Bucket.RESOLVED not in (a, b) for _, a, b in counted),
        excluded=tuple(Excluded(i, str(a), str(b)) for i, a, b in pairs
                       if a not in FINISHED_BUCKETS or b not in FINISHED_BUCKETS),
        notes=tuple(_notes(loaded_a, loaded_b, len(common))),
        languages={i: loaded_a.results[i].language or "?" for i in common},
        paired=_paired([loaded_a.results[i] for i, _, _ in counted], [loaded_b.results[i] for i, _, _ in counted]),
    )


def _paired(results_a: list, results_b: list) -> PairedComparison | None:
    if not results_a:
        return None
    return paired_comparison([result.attempt_count.rate for result in results_a],
                             [result.attempt_count.rate for result in results_b])


def _side(loaded: LoadedRun, common: list[str], prices: PriceTable | None) -> Side:
    report = loaded.scored_over(common, loaded.source.name)
    cost = run_cost((loaded.results[instance_id] for instance_id in common), prices) if prices is not None else None
    return Side(loaded, report, cost)


def _notes(a: LoadedRun, b: LoadedRun, common: int) -> list[str]:
    notes = [f"run {label} has no dataset_hash in run_settings.json: the datasets could not be checked"
             for label, run in (("A", a), ("B", b)) if run.dataset_hash is None]
    only_a, only_b = len(a.results) - common, len(b.results) - common
    if only_a or only_b:
        notes.append(f"the instance sets differ: compared on the {common} instance(s) in both "
                     f"({only_a} only in A, {only_b} only in B)")
    return notes


def format_comparison(comparison: RunComparison) -> str:
    """The comparison as a readable text table (the same numbers as to_json)."""
    return "\n".join([*_summary_lines(comparison), "", *_language_lines(comparison), "",
                      *_reason_lines(comparison), "", *_usage_lines(comparison)])


def _variants_text(side) -> str:
    variants = side.report.variants_json()
    gap = variants["memorization_gap"]
    return (f"accuracy on variants {variants['accuracy_score_on_variants']:.4f}, memorization gap {gap['instances']} "
            f"of {gap['resolved']} ({gap['of_resolved']:.1%}, 95% interval {gap['interval_95'][0]:.1%}-"
            f"{gap['interval_95'][1]:.1%})")


def _summary_lines(c: RunComparison) -> list[str]:
    total = len(c.common_ids)
    lines = [f"A: {c.a.run_dir}", f"B: {c.b.run_dir}", *(f"note: {note}" for note in c.notes),
             f"accuracy over {total} common instance(s): A {c.a.report.accuracy_score:.4f} ({c.a.resolved}), "
             f"B {c.b.report.accuracy_score:.4f} ({c.b.resolved}), delta {c.b.resolved - c.a.resolved:+d}",
             f"flips: {len(c.newly_resolved)} newly resolved, {len(c.regressed)} regressed "
             f"({c.both_resolved} resolved in both, {c.neither_resolved} in neither); "
             f"exact McNemar p = {c.mcnemar_p:.4g}"]
    lines += _paired_lines(c)
    lines += [f"  {label}: {_variants_text(side)}" for label, side in (("A", c.a), ("B", c.b)) if side.report.variants_json()]
    lines += [f"  newly resolved: {', '.join(c.newly_resolved)}"] if c.newly_resolved else []
    lines += [f"  regressed: {', '.join(c.regressed)}"] if c.regressed else []
    if c.excluded:
        lines.append(f"excluded (incomplete/error in either run, not counted as flips): {len(c.excluded)}: "
                     + ", ".join(f"{e.instance_id} ({e.bucket_a} -> {e.bucket_b})" for e in c.excluded[:10]))
    return lines


def _paired_lines(c: RunComparison) -> list[str]:
    """The paired test on success rates, and how many instances would settle the difference."""
    paired = c.paired
    if paired is None:
        return []
    attempts = c.attempts
    each = (f"{attempts['a']} attempt(s) each" if attempts["a"] == attempts["b"]
            else f"{attempts['a']} attempt(s) in A, {attempts['b']} in B")
    lines = [f"paired on per-instance success rates ({paired.instances} instance(s), {each}): mean difference "
             f"{paired.mean_difference:+.4f}, {'exact' if paired.exact else 'Monte Carlo'} sign-flip p = "
             f"{paired.p_value:.4g}"]
    if paired.instances_needed is None:
        lines.append("instances needed: no difference (or no spread) to tell from noise")
    else:
        lines.append(f"instances needed to tell a difference of {paired.mean_difference:+.4f} from noise "
                     f"(alpha 0.05, power 0.8, {each}): about {paired.instances_needed} "
                     f"(compared: {paired.instances})")
    return lines


def _language_lines(c: RunComparison) -> list[str]:
    columns = ("instances", "resolved_a", "resolved_b", "delta", "newly_resolved", "regressed")
    lines = [f"{'language':<12}" + "".join(f"{column:>15}" for column in columns)]
    for language, row in c.per_language().items():
        lines.append(f"{language:<12}" + "".join(_cell(column, row[column]) for column in columns))
    return lines


def _reason_lines(c: RunComparison) -> list[str]:
    lines = [f"{'reason':<30}{'A':>8}{'B':>8}{'delta':>8}"]
    for reason, row in c.reasons().items():
        lines.append(f"{reason:<30}{row['a']:>8}{row['b']:>8}{row['delta']:>+8d}")
    return lines


def _usage_lines(c: RunComparison) -> list[str]:
    lines = [f"{'usage':<30}{'A':>14}{'B':>14}{'delta':>14}"]
    for key, row in c.usage().items():
        lines.append(f"{key:<30}{row['a']:>14}{row['b']:>14}{row['delta']:>+14d}")
    cost = c.cost()
    if cost is None:
        lines.append("cost: no price table (--prices FILE); tokens only")
    else:
        lines.append(f"{'cost_usd':<30}{cost['a']:>14.4f}{cost['b']:>14.4f}{cost['delta']:>+14.4f}")
        if cost["unpriced_a"] or cost["unpriced_b"]:
            lines.append(f"note: unpriced instances left out of the cost: {cost['unpriced_a']} in A, "
                         f"{cost['unpriced_b']} in B (their model is not in the price table)")
    return lines


def _cell(column: str, value: int) -> str:
    return f"{value:>+15d}" if column == "delta" else f"{value:>15}"
