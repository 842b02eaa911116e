"""Per-instance result JSON and the run report: every key is documented here, once.

Where each file lives (`<id>.json`, `<name>_0.0.json`, report.json, the transcripts, logs and
try files) is utils/records/run_dir.py's, the one owner of the run directory; loading a run
and scoring it once is utils/records/loaded_run.py's.
A run with --tries 2 (Aider's two-try protocol, utils/pipeline/instance.py) keeps each earlier
try's files under try names (run_dir.try_files); the plain names hold the last try's.
A run with --attempts K > 1 (independent agent runs of each instance, utils/run/attempts.py) keeps each
attempt's own result and files (run_dir.RunDirectory.attempt); the instance's result file keeps
attempt 1's keys at its top level and lists every attempt under `attempt_results`, and the
run report adds the estimators of utils/records/estimators.py (RunReport.attempts_json).
A staged run (--stages) adds `stages`, `ended_at_stage` and `ended_because` to the run report:
utils/run/stages.py documents them.
Buckets and reasons: utils/outcomes.py.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from fractions import Fraction
from functools import cached_property
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence, TypeVar

from ..outcomes import BUCKETS, FINISHED_BUCKETS, Bucket, GradingMode, Reason
from ..judging.patches import SuspiciousLine, TamperRecord
from .estimators import Attempts, Interval, clopper_pearson, mean_pass_at_k, mean_pass_hat_k, mean_score_interval
from .run_dir import RunDirectory, try_files

# A failed try gets another (up to --tries): the buckets that count as failed tries. Aider
# retries every failure; an empty patch is one too. incomplete / error end the instance.
RETRIED_BUCKETS: tuple[Bucket, ...] = (Bucket.UNRESOLVED, Bucket.EMPTY_PATCH)

# In result files: `tamper` is a list of {"path", "why"} (TamperRecord), `suspicious` a list of
# {"path", "kind", "line"} (SuspiciousLine), `seconds` an object of PhaseSeconds' set fields.


@dataclass
class PhaseSeconds:
    """Wall-clock seconds per phase; a phase that did not run is None and absent from JSON."""

    agent: float | None = None    # the agent's run
    grading: float | None = None  # all of grading (apply, un-skip, container, tests)
    tests: float | None = None    # the test command alone
    total: float | None = None    # the instance end to end

    def to_dict(self) -> dict[str, float]:
        return {name: value for name, value in asdict(self).items() if value is not None}

    @staticmethod
    def from_dict(data: Any) -> "PhaseSeconds":
        """From `to_dict`'s shape; keys it does not know, and values that are not numbers, are dropped."""
        if not isinstance(data, dict):
            return PhaseSeconds()
        return PhaseSeconds(**{declared.name: data[declared.name] for declared in fields(PhaseSeconds)
                               if isinstance(data.get(declared.name), (int, float))})


@dataclass(kw_only=True)
class InstanceResult:
    # --- HyperAgents' keys -------------------------------------------------------------------
    instance_id: str                      # "<language>__<slug>"
    model_name_or_path: str               # the run's name
    model_patch: str = ""                 # the agent's patch as produced (before filtering)
    eval_result: Bucket = Bucket.ERROR    # the bucket (utils/outcomes.py)
    success: bool = False                 # eval_result == "resolved"
    # --- ours ---------------------------------------------------------------------------------
    language: str = ""
    reason: Reason | str = ""             # machine-readable why (a Reason: tests_passed, tests_failed,
                                          # test_timeout, patch_apply_failed, empty_patch,
                                          # infrastructure_failed, unexpected_error, ...; with
                                          # grading_isolation "trusted_process", tests_failed may be
                                          # named after what the test process refused, e.g.
                                          # handle_compared_with_value, bridge_broken,
                                          # handles_without_data)
    detail: str = ""                      # one human line expanding `reason`
    agent: str = ""                       # agent name: oracle | null | the agent directory
    agent_hash: str = ""                  # content hash of the agent tree + applied patches
    agent_image: str = ""                 # image tag the agent ran in
    grading_image: str = ""               # language image tag grading ran in
    agent_exit_code: int | None = None    # the agent process's exit code (124/137: timeout)
    agent_timed_out: bool = False
    agent_stopped: str = ""               # "disk_limit": the harness stopped the agent for outgrowing
                                          # the disk cap (--disk); its work is still graded
    agent_usage: dict[str, Any] = field(default_factory=dict)  # the agent's agent_usage.json
    patch_source: str = ""                # "agent" (model_patch.diff) | "harness" (computed diff)
    kept_paths: list[str] = field(default_factory=list)        # patch paths graded
    tamper: list[TamperRecord] = field(default_factory=list)  # [{path, why}] dropped, left pristine
    suspicious: list[SuspiciousLine] = field(default_factory=list)  # [{path, kind, line}] kept lines that
                                          # look like verdict forging (early exit, fake runner output,
                                          # test-framework access); informational, for audits
    patch_apply_method: str | None = None  # which fallback applied the patch
    test_exit_code: int | None = None
    test_timed_out: bool = False
    tests: dict[str, int] = field(default_factory=dict)  # total/passed/failed/errored/skipped
    failed_tests: list[str] = field(default_factory=list)  # names (first 50) not passing
    test_names: list[str] = field(default_factory=list)   # every test the runner reported
    seconds: PhaseSeconds = field(default_factory=PhaseSeconds)  # {agent, grading, tests, total}
    canaries: list[str] = field(default_factory=list)  # tests planted as canaries in this grading
                                          # (utils/canaries.py); their own results are not in `tests`
    grading_mode: GradingMode | str = GradingMode.TESTS  # "tests" | "build_only" (test-writing exercise: the build
                                          # decides, as upstream; listed in reports)
    stub_passes: bool | None = None       # the untouched stub resolves this instance (refactoring
                                          # exercises, build-only ones); None: not known
    checks_off: list[str] = field(default_factory=list)  # grading checks not made for this instance
                                          # because its dataset lacks what they need (a --fast
                                          # preparation: no reference runs): "expected_tests" (every
                                          # test the reference ran must run and pass), "canaries"
                                          # (mutated copies of real tests planted, each must fail);
                                          # [] when every check ran (utils/records/dataset.py CHECKS)
    grading_isolation: str | None = None  # how the solution ran beside the tests: "trusted_process"
                                          # (a separate process as another uid, answering the test
                                          # process over a socket; python, javascript) | "in_process"
                                          # (one process: the runner's); None: nothing was graded
    # --- variants (--variants; utils/judging/variants.py): fresh copies of real tests, one input
    # changed, the reference's answer expected; None when none was planted (off, or none recorded)
    variants_passed: int | None = None
    variants_failed: int | None = None    # failed, errored or missing from the report
    failed_variants: list[str] = field(default_factory=list)  # their source tests (first 50)
    resolved_on_variants: bool | None = None  # resolved (the verdict above) AND every variant passed
    attempts: int = 1                     # infrastructure retries included
    error: str = ""                       # exception text for incomplete / error
    # --- tries (--tries, Aider's two-try protocol) ----------------------------------------------
    # Every key above is the LAST try's (the final verdict), except `agent_usage` (the numeric
    # USAGE_KEYS summed over the tries, the other keys the last try's) and `seconds` (agent,
    # grading and tests summed over the tries; total: the instance end to end).
    tries: list["TryRecord"] = field(default_factory=list)  # every try run, in order (TryRecord)
    resolved_at_try: int | None = None    # the try whose verdict was resolved (1, 2); None: none was
    # --- attempts (--attempts K > 1: independent agent runs, each graded on its own) --------------
    # Every key above is attempt 1's. `attempt_results` lists every attempt (AttemptRecord), in
    # order; absent from the file with one attempt. Attempt k's own result file and files are
    # RunDirectory.attempt(instance_id, k)'s (attempt<k>/<id>.json, ...).
    attempt_results: list["AttemptRecord"] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The result file's object: the fields above, in order, as JSON types (no
        `attempt_results` key for a single attempt: such files read as they always did)."""
        data = asdict(self) | {"seconds": self.seconds.to_dict()}
        if not self.attempt_results:
            del data["attempt_results"]
        return data

    @property
    def attempt_count(self) -> Attempts:
        """Successes (resolved attempts) out of the attempts run; a single attempt is its verdict."""
        if not self.attempt_results:
            return Attempts(int(self.eval_result == Bucket.RESOLVED), 1)
        return Attempts(sum(record.eval_result == Bucket.RESOLVED for record in self.attempt_results),
                        len(self.attempt_results))

    @property
    def usage_over_attempts(self) -> dict[str, Any]:
        """agent_usage with its numeric USAGE_KEYS summed over every attempt (what the instance
        cost); attempt 1's other keys (its model)."""
        usage = self.agent_usage if isinstance(self.agent_usage, dict) else {}
        if not self.attempt_results:
            return usage
        return usage | _summed_usage(record.agent_usage for record in self.attempt_results)

    def without_attempts(self) -> "InstanceResult":
        """Attempt 1's own result (this result without `attempt_results`)."""
        single = InstanceResult.from_dict(self.to_dict())
        single.attempt_results = []
        return single

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=False) + "\n"

    @staticmethod
    def from_dict(data: dict[str, Any]) -> "InstanceResult":
        """From a result file's object, written by this version or an older one: keys it does not
        know are ignored, missing ones take their defaults, and a bucket or reason string this
        vocabulary does not hold is kept as it is."""
        known = {key: value for key, value in data.items() if key in InstanceResult.__dataclass_fields__}
        known["eval_result"] = _member(Bucket, known.get("eval_result", Bucket.ERROR))
        known["reason"] = _member(Reason, known.get("reason", ""))
        known["grading_mode"] = _member(GradingMode, known.get("grading_mode", GradingMode.TESTS))
        known["tamper"] = _records(TamperRecord, known.get("tamper"))
        known["suspicious"] = _records(SuspiciousLine, known.get("suspicious"))
        known["seconds"] = PhaseSeconds.from_dict(known.get("seconds"))
        known["tries"] = [TryRecord.from_dict(entry) for entry in known.get("tries") or [] if isinstance(entry, dict)]
        if not isinstance(known.get("resolved_at_try"), int):
            known["resolved_at_try"] = None
        known["attempt_results"] = [AttemptRecord.from_dict(entry) for entry in known.get("attempt_results") or []
                                    if isinstance(entry, dict)]
        return InstanceResult(**known)

    @property
    def resolved_within(self) -> int | None:
        """The try that resolved it; a result without tries (an older file) resolved at try 1."""
        if self.eval_result != Bucket.RESOLVED:
            return None
        return self.resolved_at_try or 1


@dataclass(kw_only=True)
class TryRecord:
    """One try of an instance (`tries` in the result file): its own verdict and work."""

    try_number: int                       # 1, 2
    eval_result: Bucket | str             # this try's bucket
    reason: Reason | str
    detail: str = ""
    model_patch: str = ""                 # this try's patch as produced (a diff against the base commit)
    patch_source: str = ""
    kept_paths: list[str] = field(default_factory=list)
    tamper: list[dict[str, str]] = field(default_factory=list)
    agent_exit_code: int | None = None
    agent_timed_out: bool = False
    agent_usage: dict[str, Any] = field(default_factory=dict)  # this try's agent_usage.json
    tests: dict[str, int] = field(default_factory=dict)
    failed_tests: list[str] = field(default_factory=list)
    canaries: list[str] = field(default_factory=list)  # planted in this try's grading (fresh each try)
    seconds: dict[str, float] = field(default_factory=dict)  # this try's PhaseSeconds (total: the try)
    transcript: str = ""                  # file name in the run directory: <id>.md (last try) / <id>.try1.md
    eval_output: str = ""                 # the test run's output file (absent when nothing was tested)
    feedback_file: str = ""               # the feedback this try was given (<id>.try2_feedback.md); "" for try 1

    @staticmethod
    def of(number: int, result: InstanceResult, last: bool) -> "TryRecord":
        names = try_files(result.instance_id, number, last)
        return TryRecord(try_number=number, eval_result=result.eval_result, reason=result.reason, detail=result.detail, model_patch=result.model_patch,
                         patch_source=result.patch_source, kept_paths=list(result.kept_paths), tamper=[asdict(record) for record in result.tamper],
                         agent_exit_code=result.agent_exit_code, agent_timed_out=result.agent_timed_out, agent_usage=dict(result.agent_usage), tests=dict(result.tests),
                         failed_tests=list(result.failed_tests), canaries=list(result.canaries), seconds=result.seconds.to_dict(),
                         transcript=names.transcript, eval_output=names.eval_output, feedback_file=names.feedback if number > 1 else "")

    @staticmethod
    def from_dict(data: dict[str, Any]) -> "TryRecord":
        known = {key: value for key, value in data.items() if key in TryRecord.__dataclass_fields__}
        known.setdefault("try_number", 0)
        known["eval_result"] = _member(Bucket, known.get("eval_result", Bucket.ERROR))
        known["reason"] = _member(Reason, known.get("reason", ""))
        return TryRecord(**known)


@dataclass(kw_only=True)
class AttemptRecord:
    """One attempt of an instance (`attempt_results` in the result file): its verdict, patch,
    usage and timings; its full result and files are RunDirectory.attempt(instance_id, attempt)'s."""

    attempt: int                          # 1 .. K
    eval_result: Bucket | str
    reason: Reason | str
    detail: str = ""
    model_patch: str = ""                 # this attempt's patch as produced
    agent_usage: dict[str, Any] = field(default_factory=dict)  # its agent_usage (tries summed)
    seconds: dict[str, float] = field(default_factory=dict)    # its PhaseSeconds
    tests: dict[str, int] = field(default_factory=dict)
    failed_tests: list[str] = field(default_factory=list)
    canaries: list[str] = field(default_factory=list)  # planted in this attempt's grading (fresh each)
    tries: int = 1                        # tries this attempt ran (--tries)
    resolved_at_try: int | None = None
    error: str = ""

    @staticmethod
    def of(number: int, result: InstanceResult) -> "AttemptRecord":
        return AttemptRecord(attempt=number, eval_result=result.eval_result, reason=result.reason, detail=result.detail, model_patch=result.model_patch,
                             agent_usage=dict(result.agent_usage), seconds=result.seconds.to_dict(), tests=dict(result.tests),
                             failed_tests=list(result.failed_tests), canaries=list(result.canaries), tries=max(1, len(result.tries)),
                             resolved_at_try=result.resolved_at_try, error=result.error)

    @staticmethod
    def from_dict(data: dict[str, Any]) -> "AttemptRecord":
        known = {key: value for key, value in data.items() if key in AttemptRecord.__dataclass_fields__}
        known.setdefault("attempt", 0)
        known["eval_result"] = _member(Bucket, known.get("eval_result", Bucket.ERROR))
        known["reason"] = _member(Reason, known.get("reason", ""))
        return AttemptRecord(**known)


def combine_attempts(attempts: Sequence[InstanceResult]) -> InstanceResult:
    """The instance's result over its attempts (1, 2, ... in order): attempt 1's, unchanged
    when it is the only one, else with every attempt listed in `attempt_results`."""
    first = attempts[0].without_attempts()
    if len(attempts) == 1:
        return first
    first.attempt_results = [AttemptRecord.of(number, result) for number, result in enumerate(attempts, 1)]
    return first


def combine_tries(tries: Sequence[InstanceResult]) -> InstanceResult:
    """The instance's result: the last try's verdict, every try in `tries`, usage and phase
    seconds summed (InstanceResult documents each key)."""
    final = InstanceResult.from_dict(tries[-1].to_dict())
    final.tries = [TryRecord.of(number, result, number == len(tries)) for number, result in enumerate(tries, 1)]
    final.resolved_at_try = next((number for number, result in enumerate(tries, 1)
                                  if result.eval_result == Bucket.RESOLVED), None)
    final.agent_usage = dict(tries[-1].agent_usage) | _summed_usage(result.agent_usage for result in tries) if len(tries) > 1 else final.agent_usage
    final.seconds = PhaseSeconds(**{name: _sum_or_none(getattr(result.seconds, name) for result in tries)
                                    for name in ("agent", "grading", "tests")})
    return final


def _sum_or_none(values: Iterable[float | None]) -> float | None:
    present = [value for value in values if value is not None]
    return round(sum(present), 3) if present else None


Vocabulary = TypeVar("Vocabulary", Bucket, Reason, GradingMode)
Record = TypeVar("Record", TamperRecord, SuspiciousLine)


def _member(vocabulary: type[Vocabulary], value: Any) -> Vocabulary | Any:
    """`value` as a member of `vocabulary` when it is one of its strings, else unchanged."""
    return vocabulary(value) if value in vocabulary.__members__.values() else value


def _records(record_type: type[Record], entries: Any) -> list[Record]:
    """Records from their JSON objects; a field an entry lacks reads as ''."""
    if not isinstance(entries, list):
        return []
    return [record_type(**{declared.name: str(entry.get(declared.name, "")) for declared in fields(record_type)})
            for entry in entries if isinstance(entry, dict)]


@dataclass(kw_only=True, frozen=True)
class RunReport:
    """What a set of instance results adds up to: computed once (`build_run_report`), written two
    ways. `run_report_json()` is the harness's `<name>_0.0.json`; `score_json()` is report.py's
    `report.json`. Each method documents its keys."""

    model_name_or_path: str               # the run's name ("" for report.py over several runs)
    total_instances: int                  # the denominator: instances selected (or expected)
    submitted_instances: int              # instances with a result file
    ids: dict[Bucket, list[str]]          # bucket -> sorted instance ids
    unfinished_ids: list[str]             # selected but without a result (e.g. interrupted)
    reasons: dict[str, int]               # histogram of `reason`
    per_language: dict[str, dict[str, int]]  # language -> {bucket: count, ..., "total": count}
    agent_usage: dict[str, int]           # summed over the agents' agent_usage.json
    build_only_ids: list[str]             # graded by the build alone (test-writing)
    stub_passes_ids: list[str]            # the untouched stub resolves these
    checks_off: dict[str, list[str]]      # check -> ids graded without it (InstanceResult.checks_off)
    resolved_with_suspicious_lines: list[str]  # resolved, with kept lines that look like forging
    instances_in_several_result_files: list[str] = field(default_factory=list)  # counted once
    # language -> {resolved id: the try that resolved it} (pass rates)
    resolved_tries: dict[str, dict[str, int]] = field(default_factory=dict)
    # language -> {instance id: its successes out of its attempts} (--attempts; one attempt: its verdict)
    attempt_counts: dict[str, dict[str, Attempts]] = field(default_factory=dict)
    # language -> {instance id: (resolved, resolved_on_variants)} for instances graded with variants
    variant_verdicts: dict[str, dict[str, tuple[bool, bool]]] = field(default_factory=dict)
    schema_version: int = 1

    @property
    def attempts_per_instance(self) -> int:
        """The most attempts any instance ran (1 for a run without --attempts)."""
        return max([1, *(item.attempts for row in self.attempt_counts.values() for item in row.values())])

    @property
    def success_rate_sum(self) -> Fraction:
        """The instances' success rates (successes / attempts) summed, exactly: the numerator of
        accuracy_score, and of a stage's accuracy (utils/run/stages.py)."""
        return sum((Fraction(item.successes, item.attempts) for row in self.attempt_counts.values()
                    for item in row.values()), Fraction(0))

    @cached_property
    def attempt_scores(self) -> dict[str, Any]:
        """The estimators over the instances with a result, overall and per language
        (attempts_json's keys but the per-instance counts); computed once."""
        every = [item for row in self.attempt_counts.values() for item in row.values()]
        return {**_estimates(every), "per_language": {language: _estimates(list(row.values()))
                                                      for language, row in self.attempt_counts.items()}}

    def attempts_json(self) -> dict[str, Any]:
        """With more than one attempt per instance (--attempts K), else nothing:
        `attempts_per_instance` (K); `successes_out_of_attempts` ({id: [successes, attempts]});
        over the instances with a result, `pass_at_k` ({"1": .., "K": ..}: the unbiased pass@k
        of Chen et al., for k up to the fewest attempts any instance ran; pass_at_k["1"] is the
        mean success rate), `pass_hat_k` (all k drawn attempts succeed), `score_interval_95`
        ({estimate, low, high}: the mean success rate with a 95 % exact (Clopper-Pearson) interval
        over the run's effective number of trials); and `attempt_scores_per_language` ({language:
        those three}). utils/records/estimators.py defines each figure."""
        if self.attempts_per_instance == 1:
            return {}
        counts = {instance_id: [item.successes, item.attempts] for row in self.attempt_counts.values()
                  for instance_id, item in row.items()}
        scores = self.attempt_scores
        return {"attempts_per_instance": self.attempts_per_instance,
                "successes_out_of_attempts": dict(sorted(counts.items())),
                **{key: value for key, value in scores.items() if key != "per_language"},
                "attempt_scores_per_language": scores["per_language"]}

    def pass_rate(self, tries: int, language: str | None = None) -> float:
        """Aider's pass_rate_<tries>: instances resolved by try `tries` (at try 1; at try 1 or 2)
        over the instances (total_instances; for a language, its result count). With one try per
        instance pass_rate_2 equals pass_rate_1; pass_rate_2 always equals accuracy_score's count."""
        rows = self.resolved_tries.values() if language is None else [self.resolved_tries.get(language, {})]
        resolved = sum(1 for row in rows for number in row.values() if number <= tries)
        total = self.total_instances if language is None else self.per_language.get(language, {}).get("total", 0)
        return round(resolved / total, 6) if total else 0.0

    def pass_rates_json(self) -> dict[str, Any]:
        """pass_rate_1, pass_rate_2 and pass_rates_per_language ({language: {pass_rate_1, pass_rate_2}})."""
        return {"pass_rate_1": self.pass_rate(1), "pass_rate_2": self.pass_rate(2),
                "pass_rates_per_language": {language: {"pass_rate_1": self.pass_rate(1, language),
                                                       "pass_rate_2": self.pass_rate(2, language)}
                                            for language in self.per_language}}

    @property
    def completed_ids(self) -> list[str]:
        """Graded or empty (resolved + unresolved + empty_patch)."""
        return sorted(instance_id for bucket in FINISHED_BUCKETS for instance_id in self.ids[bucket])

    @property
    def accuracy_score(self) -> float:
        """The instances' success rates summed over total_instances: resolved / total_instances
        with one attempt each, the mean over attempts with --attempts K (an unfinished instance
        counts 0)."""
        score = float(self.success_rate_sum)
        return round(score / self.total_instances, 6) if self.total_instances else 0.0

    @property
    def resolved_stub_passes(self) -> int:
        return len(set(self.ids[Bucket.RESOLVED]) & set(self.stub_passes_ids))

    @property
    def accuracy_score_excluding_stub_passes(self) -> float:
        """The score over the instances a no-op cannot resolve."""
        rest = self.total_instances - len(self.stub_passes_ids)
        resolved_rest = len(self.ids[Bucket.RESOLVED]) - self.resolved_stub_passes
        return round(resolved_rest / rest, 6) if rest > 0 else 0.0

    def run_report_json(self) -> dict[str, Any]:
        """`<name>_0.0.json`: counts and ids per bucket (`error_instances` counts error +
        incomplete), completed/unfinished ids, reasons by name, the run's name, build-only and
        stub-passing ids, checks_off (check -> ids graded without it: their dataset was prepared
        with --fast; {} when every check ran), schema_version; then pass_rates_json's keys and attempts_json's."""
        ids = self.ids
        return {
            "total_instances": self.total_instances, "submitted_instances": self.submitted_instances,
            "completed_instances": len(self.completed_ids), "resolved_instances": len(ids[Bucket.RESOLVED]),
            "unresolved_instances": len(ids[Bucket.UNRESOLVED]), "empty_patch_instances": len(ids[Bucket.EMPTY_PATCH]),
            "error_instances": len(ids[Bucket.ERROR]) + len(ids[Bucket.INCOMPLETE]),
            "completed_ids": self.completed_ids, "resolved_ids": ids[Bucket.RESOLVED],
            "unresolved_ids": ids[Bucket.UNRESOLVED], "empty_patch_ids": ids[Bucket.EMPTY_PATCH],
            "error_ids": ids[Bucket.ERROR], "incomplete_ids": ids[Bucket.INCOMPLETE],
            "unfinished_ids": self.unfinished_ids, "reasons": dict(sorted(self.reasons.items())),
            "model_name_or_path": self.model_name_or_path, "build_only_ids": self.build_only_ids,
            "stub_passes_ids": self.stub_passes_ids, "checks_off": self.checks_off,
            "schema_version": self.schema_version,
        } | self.pass_rates_json() | self.attempts_json()

    def score_json(self) -> dict[str, Any]:
        """`report.json` (upstream-comparable names): accuracy_score = resolved / total_instances;
        total_* counts and ids per bucket; per_language; reasons, most frequent first;
        agent_usage; instances_in_several_result_files; resolved_with_suspicious_lines; graded_by
        (tests / build_only); stub_passes_ids, resolved_stub_passes and
        accuracy_score_excluding_stub_passes; checks_off (as in the run report); then pass_rates_json's keys (Aider's pass_rate_1,
        pass_rate_2, overall and per language); then attempts_json's keys (--attempts K > 1)."""
        ids = self.ids
        return {
            "accuracy_score": self.accuracy_score,
            "total_resolved_instances": len(ids[Bucket.RESOLVED]),
            "total_submitted_instances": self.submitted_instances,
            "total_instances": self.total_instances,
            "total_resolved_ids": ids[Bucket.RESOLVED],
            "total_unresolved_ids": ids[Bucket.UNRESOLVED],
            "total_emptypatch_ids": ids[Bucket.EMPTY_PATCH],
            "total_incomplete_ids": ids[Bucket.INCOMPLETE],
            "total_error_ids": ids[Bucket.ERROR],
            "per_language": self.per_language,
            "reasons": dict(sorted(self.reasons.items(), key=lambda item: (-item[1], item[0]))),
            "agent_usage": self.agent_usage,
            "instances_in_several_result_files": self.instances_in_several_result_files,
            "resolved_with_suspicious_lines": self.resolved_with_suspicious_lines,
            "graded_by": {GradingMode.TESTS: self.submitted_instances - len(self.build_only_ids),
                          GradingMode.BUILD_ONLY: len(self.build_only_ids), "build_only_ids": self.build_only_ids},
            "stub_passes_ids": self.stub_passes_ids,
            "resolved_stub_passes": self.resolved_stub_passes,
            "accuracy_score_excluding_stub_passes": self.accuracy_score_excluding_stub_passes,
            "checks_off": self.checks_off,
        } | self.pass_rates_json() | self.attempts_json() | self.variants_json()

    def variants_json(self) -> dict[str, Any]:
        """With --variants (some instance graded with variants), else nothing:
        `accuracy_score_on_variants` (instances resolved and not failing a variant, over
        total_instances: an instance without variants counts as resolved upstream); the
        `memorization_gap` ({instances: resolved upstream but not on variants, ids, of_resolved:
        their share of the resolved instances graded with variants, interval_95: its exact
        Clopper-Pearson interval}); and `variants_per_language` ({language: the same figures
        over its instances, graded_with_variants})."""
        if not any(self.variant_verdicts.values()):
            return {}
        failing = {i for row in self.variant_verdicts.values() for i, (_, on) in row.items() if not on}
        on_variants = len(set(self.ids[Bucket.RESOLVED]) - failing)
        return {"accuracy_score_on_variants": round(on_variants / self.total_instances, 6) if self.total_instances else 0.0,
                "memorization_gap": _gap(self.variant_verdicts.values()),
                "variants_per_language": {language: {"graded_with_variants": len(row), **_gap([row])}
                                          for language, row in self.variant_verdicts.items()}}


def _gap(rows: Iterable[Mapping[str, tuple[bool, bool]]]) -> dict[str, Any]:
    """Instances resolved upstream but not on their variants, over those resolved upstream."""
    pairs = {i: pair for row in rows for i, pair in row.items()}
    resolved = [i for i, (upstream, _) in pairs.items() if upstream]
    gap = sorted(i for i in resolved if not pairs[i][1])
    share = len(gap) / len(resolved) if resolved else 0.0
    low, high = clopper_pearson(share, len(resolved)) if resolved else (0.0, 1.0)
    return {"instances": len(gap), "ids": gap, "resolved": len(resolved),
            "resolved_on_variants": len(resolved) - len(gap), "of_resolved": round(share, 6),
            "interval_95": [round(low, 6), round(high, 6)]}


USAGE_KEYS = ("prompt_tokens", "completion_tokens", "total_tokens", "calls")


def build_run_report(model_name_or_path: str, selected_ids: Sequence[str], results: Mapping[str, InstanceResult],
                     total_instances: int | None = None,
                     instances_in_several_result_files: Sequence[str] = ()) -> RunReport:
    """The report of `results` over `selected_ids` (those without a result are unfinished). The
    denominator is len(selected_ids) unless `total_instances` is given (report.py's
    --expected_num_tasks)."""
    by_id = dict(sorted(results.items()))
    return RunReport(
        model_name_or_path=model_name_or_path,
        total_instances=len(selected_ids) if total_instances is None else total_instances,
        submitted_instances=len(by_id),
        ids={bucket: [i for i, r in by_id.items() if r.eval_result == bucket] for bucket in BUCKETS},
        unfinished_ids=sorted(set(selected_ids) - set(by_id)),
        reasons=_count(result.reason for result in by_id.values()),
        per_language=_per_language(by_id.values()),
        agent_usage=_summed_usage(result.usage_over_attempts for result in by_id.values()),
        build_only_ids=[i for i, r in by_id.items() if r.grading_mode == GradingMode.BUILD_ONLY],
        stub_passes_ids=[i for i, r in by_id.items() if r.stub_passes],
        checks_off=_checks_off(by_id),
        resolved_with_suspicious_lines=[i for i, r in by_id.items() if r.eval_result == Bucket.RESOLVED and r.suspicious],
        instances_in_several_result_files=sorted(instances_in_several_result_files),
        resolved_tries=_resolved_tries(by_id.values()),
        attempt_counts=_attempt_counts(by_id.values()),
        variant_verdicts=_variant_verdicts(by_id.values()),
    )


def _variant_verdicts(results: Iterable[InstanceResult]) -> dict[str, dict[str, tuple[bool, bool]]]:
    table: dict[str, dict[str, tuple[bool, bool]]] = {}
    for result in results:
        if result.resolved_on_variants is not None:
            table.setdefault(result.language or "?", {})[result.instance_id] = (
                result.eval_result == Bucket.RESOLVED, bool(result.resolved_on_variants))
    return dict(sorted(table.items()))


def _checks_off(by_id: Mapping[str, InstanceResult]) -> dict[str, list[str]]:
    off: dict[str, list[str]] = {}
    for instance_id, result in by_id.items():
        for check in result.checks_off if isinstance(result.checks_off, list) else ():
            off.setdefault(str(check), []).append(instance_id)
    return dict(sorted(off.items()))


def _attempt_counts(results: Iterable[InstanceResult]) -> dict[str, dict[str, Attempts]]:
    table: dict[str, dict[str, Attempts]] = {}
    for result in results:
        table.setdefault(result.language or "?", {})[result.instance_id] = result.attempt_count
    return dict(sorted(table.items()))


def _estimates(instances: list[Attempts]) -> dict[str, Any]:
    """pass_at_k, pass_hat_k (k up to the fewest attempts) and score_interval_95 of `instances`."""
    fewest = min((item.attempts for item in instances), default=0)
    interval = mean_score_interval(instances)
    return {"pass_at_k": {str(k): round(mean_pass_at_k(instances, k), 6) for k in range(1, fewest + 1)},
            "pass_hat_k": {str(k): round(mean_pass_hat_k(instances, k), 6) for k in range(1, fewest + 1)},
            "score_interval_95": _interval_json(interval)}


def _interval_json(interval: Interval) -> dict[str, float]:
    return {"estimate": round(interval.estimate, 6), "low": round(interval.low, 6), "high": round(interval.high, 6)}


def _resolved_tries(results: Iterable[InstanceResult]) -> dict[str, dict[str, int]]:
    table: dict[str, dict[str, int]] = {}
    for result in results:
        if result.resolved_within is not None:
            table.setdefault(result.language or "?", {})[result.instance_id] = result.resolved_within
    return dict(sorted(table.items()))


def _count(values: Iterable[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for value in values:
        counts[value] = counts.get(value, 0) + 1
    return counts


def _per_language(results: Iterable[InstanceResult]) -> dict[str, dict[str, int]]:
    table: dict[str, dict[str, int]] = {}
    for result in results:
        row = table.setdefault(result.language or "?", {bucket: 0 for bucket in BUCKETS} | {"total": 0})
        row[result.eval_result] = row.get(result.eval_result, 0) + 1
        row["total"] += 1
    return dict(sorted(table.items()))


def _summed_usage(usages: Iterable[Any]) -> dict[str, int]:
    """USAGE_KEYS summed over the agent_usage objects that hold them as numbers."""
    usage = {key: 0 for key in USAGE_KEYS}
    for agent_usage in usages:
        for key in USAGE_KEYS:
            value = agent_usage.get(key) if isinstance(agent_usage, dict) else None
            if isinstance(value, (int, float)):
                usage[key] += int(value)
    return usage


@dataclass(frozen=True)
class LoadedResults:
    results: dict[str, InstanceResult]   # instance id -> its latest result, sorted by id
    in_several_files: list[str]          # ids found in more than one result file (latest counted)
    files: dict[str, Path] = field(default_factory=dict)  # instance id -> the file counted


def read_instance_result(path: Path) -> InstanceResult | None:
    """The result a file holds; None for any other file (run_settings.json, unreadable JSON, an
    object whose instance_id or eval_result is not a string)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if isinstance(data, dict) and isinstance(data.get("instance_id"), str) and isinstance(data.get("eval_result"), str):
        return InstanceResult.from_dict(data)
    return None


def load_results(paths: Iterable[Path]) -> LoadedResults:
    """The results in `paths`; an instance found in several files counts once, from the most
    recently written one (on equal times, the later path in `paths`' order)."""
    latest: dict[str, tuple[float, Path, InstanceResult]] = {}
    several: set[str] = set()
    for path in paths:
        result = read_instance_result(path)
        if result is None:
            continue
        written = path.stat().st_mtime
        if result.instance_id in latest:
            several.add(result.instance_id)
            if latest[result.instance_id][0] > written:
                continue
        latest[result.instance_id] = (written, path, result)
    counted = dict(sorted(latest.items()))
    return LoadedResults({i: entry[2] for i, entry in counted.items()}, sorted(several),
                         {i: entry[1] for i, entry in counted.items()})


def load_instance_results(run_dir: Path) -> dict[str, InstanceResult]:
    """One run directory's results (none when it does not exist)."""
    return load_results(RunDirectory(run_dir).result_paths()).results
