"""One instance end to end: agent phase ▶ grading phase ▶ InstanceResult and its files.

Bucket rules: infrastructure failures before the agent ran are `incomplete` (after
INFRA_RETRIES retries); a patch with nothing left after filtering is `empty_patch` (not
tested); otherwise the verdict decides `resolved` / `unresolved`; anything unexpected is
`error`. A timed-out or crashed agent's work is still graded.

Tries (`--tries 2`, Aider's protocol): a try that ends `unresolved` or `empty_patch` (both
failed tries, as in Aider, which retries every failure) is followed by another, up to
job.tries. It starts in a fresh agent container from the base repo plus the previous try's
patch as the agent left it (unfiltered: its working tree), and gets utils/feedback.py's text
as a file. Its patch is a diff against the base commit, filtered and graded exactly like a
first try's, with fresh canaries. `incomplete` and `error` tries end the instance (a resume
runs it again from try 1). The result's top-level keys are the last try's verdict;
utils.results.combine_tries documents the rest.

Attempts (`--attempts K`): a job is one attempt, run exactly like the only one (from the base
repo, fresh containers, fresh canaries, its own tries); the agent reads its number in
POLYGLOT_ATTEMPT. Its files are RunDirectory.attempt(instance_id, number)'s; the run
(utils/run/attempts.py AttemptCollector) combines the attempts once all are in.
"""

from __future__ import annotations

import dataclasses
import tempfile
import threading
import time
import traceback
from dataclasses import dataclass
from typing import Callable
from pathlib import Path

from ..seam.agent import PreparedAgent
from .agent_phase import (MAX_PATCH_BYTES, AgentInterrupted, AgentPhaseOutcome, AgentRunSettings, TryStart,
                          agent_sandbox_spec, run_agent)
from ..records.dataset import Instance
from ..judging.feedback import TryVerdict, try_feedback
from .grading import GradingOutcome, GradingRequest, grade, grading_sandbox_spec
from ..records.instance_repo import checkout_commit
from ..languages import LANGUAGES, suspicious_patterns
from ..judging.patches import PatchError, audit_patch, filter_patch
from ..outcomes import Bucket, Reason
from ..records.results import RETRIED_BUCKETS, InstanceResult, combine_tries
from ..records.run_dir import InstanceFiles, RunDirectory, write_atomic
from ..seam.protocol import Limits
from ..seam.errors import SandboxError
from .pools import QueuedInstance, Sandboxes

INFRA_RETRIES = 2


class RunCancelled(Exception):
    """The run is stopping (Ctrl-C / SIGTERM); this instance is left unfinished."""


@dataclass(kw_only=True, frozen=True)
class InstanceJob:
    instance: Instance
    agent: PreparedAgent
    agent_image: str
    grading_image: str
    agent_settings: AgentRunSettings
    test_timeout: int
    grading_limits: Limits
    run_id: str
    model_name_or_path: str
    output_dir: Path  # the run directory, <output_dir>/<model_name_or_path>_0 (RunDirectory)
    predicted_patch: str | None = None  # --predictions: grade this patch, run no agent
    tries: int = 1  # --tries: a failed try is followed by another, up to this many
    attempt: int = 1  # --attempts: which independent attempt of the instance this job runs (1 .. K)
    variants: bool = False  # --variants: plant the instance's fresh variants (utils/judging/variants.py)


def queued(job: InstanceJob) -> QueuedInstance:
    """What the pre-start policy (pools.Prestart) needs of the job: its language and the
    sandboxes it will ask for (no agent for a predicted patch, no grading for an empty one)."""
    runs_agent = job.predicted_patch is None
    graded = runs_agent or bool(job.predicted_patch.strip())
    language = job.instance.language
    return QueuedInstance(
        language,
        agent_sandbox_spec(job.agent_image, job.agent, job.agent_settings) if runs_agent else None,
        grading_sandbox_spec(job.grading_image, job.grading_limits, LANGUAGES[language]) if graded else None)


class InstanceLog:
    """Timestamped per-instance log file (<id>_docker.log); never writes to the terminal."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lock = threading.Lock()
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")

    def __call__(self, message: str) -> None:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
        with self.lock, open(self.path, "a", encoding="utf-8") as handle:
            handle.write(f"{stamp} {message}\n")


def run_instance(sandboxes: Sandboxes, job: InstanceJob, stop: threading.Event,
                 after_agent: Callable[[], None] = lambda: None) -> InstanceResult:
    log = InstanceLog(_files(job).log)
    if job.attempt > 1:
        log(f"attempt {job.attempt}")
    started = time.monotonic()
    tries: list[InstanceResult] = []
    start: TryStart | None = None
    while True:
        result, feedback = _run_try(job, start, log, stop, sandboxes, after_agent if start is None else lambda: None)
        tries.append(result)
        if len(tries) >= job.tries or result.eval_result not in RETRIED_BUCKETS:
            break
        start = _next_try(job, result, len(tries), feedback, log)
    return _finish(job, combine_tries(tries), started)


def _run_try(job: InstanceJob, start: TryStart | None, log, stop: threading.Event, sandboxes: Sandboxes,
             after_agent: Callable[[], None]) -> tuple[InstanceResult, str | None]:
    """One try: (its result, the feedback for a next try when its tests ran and one may follow)."""
    instance = job.instance
    number = start.number if start is not None else 1
    result = InstanceResult(instance_id=instance.instance_id, model_name_or_path=job.model_name_or_path,
                            language=instance.language, agent=job.agent.name, agent_hash=job.agent.agent_hash,
                            agent_image=job.agent_image, grading_image=job.grading_image,
                            grading_mode=instance.grading_mode, stub_passes=instance.stub_passes,
                            checks_off=list(instance.checks_off))
    started = time.monotonic()
    feedback = None
    if job.tries > 1:
        log(f"try {number} of at most {job.tries}")
    try:
        agent_run = _agent_phase(job, result, log, stop, sandboxes, start)
        after_agent()
        if agent_run is not None:
            feedback = _grading_phase(job, result, agent_run.patch, log, stop, sandboxes,
                                      number if number < job.tries else None)
    except RunCancelled:
        raise
    except Exception as error:  # noqa: BLE001 - any surprise becomes an `error` result
        if stop.is_set():
            raise RunCancelled() from error
        log(traceback.format_exc())
        result.eval_result, result.reason = Bucket.ERROR, Reason.UNEXPECTED_ERROR
        result.error = f"{type(error).__name__}: {error}"
        result.detail = result.error
    result.seconds.total = round(time.monotonic() - started, 3)
    return result, feedback


def _next_try(job: InstanceJob, result: InstanceResult, number: int, feedback: str | None, log) -> TryStart:
    """Keep try `number`'s files under their try names, write the feedback the next try gets."""
    files = _files(job)
    files.keep_try(number)
    text = feedback if feedback is not None else try_feedback(_verdict_of(result, number), None, (), {}, None)
    write_atomic(files.feedback(number + 1), text)
    log(f"try {number} {result.eval_result} ({result.reason}): try {number + 1} starts from its patch "
        f"with {len(text)} characters of feedback")
    return TryStart(number + 1, result.model_patch, text)


def _verdict_of(result: InstanceResult, number: int) -> TryVerdict:
    return TryVerdict(number, str(result.eval_result), str(result.reason), result.detail, tuple(result.failed_tests),
                      result.tests.get("total", 0))


def _agent_phase(job: InstanceJob, result: InstanceResult, log, stop, sandboxes: Sandboxes,
                 start: TryStart | None = None) -> AgentPhaseOutcome | None:
    """The agent's run, or None when the instance is decided without grading."""
    if job.predicted_patch is not None:
        result.model_patch, result.patch_source = job.predicted_patch, "predictions"
        return AgentPhaseOutcome(patch=job.predicted_patch, patch_source="predictions", exit_code=None, timed_out=False, seconds=0.0, chat_history="", usage={}, output_tail="")
    language = job.instance.language_spec
    for attempt in range(1, INFRA_RETRIES + 2):
        _check_stop(stop)
        result.attempts = attempt
        try:
            agent_run = run_agent(sandboxes, job.agent_image, job.agent, job.instance, language, job.agent_settings, log,
                                  start, job.attempt)
            break
        except AgentInterrupted as error:
            _check_stop(stop)
            log(f"infrastructure failure while the agent ran (not retried: it costs model money): {error}")
            result.eval_result, result.reason = Bucket.INCOMPLETE, Reason.AGENT_INTERRUPTED
            result.error = result.detail = f"{type(error).__name__}: {error}"
            return None
        except SandboxError as error:
            _check_stop(stop)
            log(f"infrastructure failure (attempt {attempt}): {error}")
            if attempt > INFRA_RETRIES:
                result.eval_result, result.reason = Bucket.INCOMPLETE, Reason.INFRASTRUCTURE_FAILED
                result.error = result.detail = f"{type(error).__name__}: {error}"
                return None
            time.sleep(1.0 * attempt)
    result.model_patch, result.patch_source = agent_run.patch, agent_run.patch_source
    result.agent_exit_code, result.agent_timed_out = agent_run.exit_code, agent_run.timed_out
    result.agent_stopped = "disk_limit" if agent_run.disk_limited else ""
    if agent_run.patch_bytes is not None:
        result.eval_result, result.reason = Bucket.UNRESOLVED, Reason.PATCH_TOO_LARGE
        result.detail = f"the patch holds {agent_run.patch_bytes} bytes, over the {MAX_PATCH_BYTES}-byte limit"
    result.agent_usage = agent_run.usage
    result.seconds.agent = round(agent_run.seconds, 3)
    _files(job).transcript.write_text(agent_run.chat_history or "", encoding="utf-8")
    if agent_run.output_tail:
        log("agent output (tail):\n" + agent_run.output_tail)
    return None if agent_run.patch_bytes is not None else agent_run  # too large: nothing to grade


def _grading_phase(job: InstanceJob, result: InstanceResult, patch: str, log, stop, sandboxes: Sandboxes,
                   feedback_of_try: int | None = None) -> str | None:
    """Grade `patch` into `result`; with `feedback_of_try` (this try's number, when another may
    follow), returns the feedback the next try gets if the tests ran (utils/feedback.py)."""
    instance = job.instance
    language = instance.language_spec
    try:
        filtered = filter_patch(patch, language, instance.solution_paths, instance.hidden_paths)
    except PatchError as error:
        result.eval_result, result.reason, result.detail = Bucket.UNRESOLVED, Reason.PATCH_UNPARSEABLE, str(error)
        return None
    result.kept_paths = list(filtered.kept_paths)
    result.suspicious = list(audit_patch(filtered.text, suspicious_patterns()))
    result.tamper = list(filtered.tamper)
    if filtered.not_regular:
        # Before anything reads the tree: a link or a submodule is a channel to the host.
        result.eval_result, result.reason = Bucket.UNRESOLVED, Reason.NOT_A_REGULAR_FILE
        result.detail = (f"the patch holds {len(filtered.not_regular)} entr"
                         f"{'y' if len(filtered.not_regular) == 1 else 'ies'} that "
                         f"{'is' if len(filtered.not_regular) == 1 else 'are'} not a regular file: "
                         + ", ".join(filtered.not_regular[:10]))
        return None
    if filtered.is_empty:
        result.eval_result, result.reason = Bucket.EMPTY_PATCH, Reason.EMPTY_PATCH
        result.detail = "nothing left to grade after filtering" + (
            f" ({len(filtered.tamper)} path(s) dropped as tamper)" if filtered.tamper else "")
        return None
    with tempfile.TemporaryDirectory(prefix="polyglot-tests-") as workdir:
        test_tree = Path(workdir) / "tree"
        checkout_commit(instance.grading_repo_dir, instance.test_commit, test_tree)
        request = GradingRequest(language=language, instance_id=instance.instance_id, test_tree=test_tree, patch_text=patch, solution_paths=instance.solution_paths,
                                 hidden_paths=instance.hidden_paths, expected_tests=instance.expected_tests, test_timeout=job.test_timeout,
                                 expected_skips=instance.expected_skips or (), grading_mode=instance.grading_mode,
                                 canary_sources=instance.canary_sources, filtered=filtered,
                                 reference_dir=instance.reference_dir, variants=_variants(job),
                                 observation_key=instance.observation_key)
        try:
            outcome = _grade_with_retries(job, request, log, stop, sandboxes)
        except SandboxError as error:
            result.eval_result, result.reason = Bucket.INCOMPLETE, Reason.GRADING_INFRASTRUCTURE_FAILED
            result.error = result.detail = f"{type(error).__name__}: {error}"
            return None
        _record_grading(job, result, outcome)
        if feedback_of_try is None or outcome.exec_result is None or result.eval_result == Bucket.RESOLVED:
            return None
        shown = _shown_grading(job, request, outcome, log, stop, sandboxes)
        hidden = {path: (test_tree / path).read_text(encoding="utf-8", errors="replace")
                  for path in instance.hidden_paths if (test_tree / path).is_file()}
        return try_feedback(_verdict_of(result, feedback_of_try), shown.exec_result.output if shown.exec_result else None,
                            shown.canaries, hidden, language.canaries)


def _shown_grading(job: InstanceJob, request: GradingRequest, outcome: GradingOutcome, log, stop,
                   sandboxes: Sandboxes) -> GradingOutcome:
    """The grading whose output the next try is shown: never one in which variants ran (a
    failing variant's traceback shows its fresh input and the reference's answer, and a next
    try that copies them passes every variant: red team 13 read python__wordy's 10 of 10 so,
    memorization gap 0). When they ran, the same tree is graded again without them for the
    feedback alone; the try's verdict stays the first grading's. Without an output (the second
    grading failed for the infrastructure), the next try gets the header only."""
    if not outcome.variants_planted:
        return outcome
    log("grading again without variants: the feedback for the next try")
    try:
        return _grade_with_retries(job, dataclasses.replace(request, variants=()), log, stop, sandboxes)
    except SandboxError as error:
        log(f"no feedback output ({type(error).__name__}: {error})")
        return dataclasses.replace(outcome, exec_result=None, canaries=())


def _grade_with_retries(job: InstanceJob, request: GradingRequest, log, stop, sandboxes: Sandboxes) -> GradingOutcome:
    for attempt in range(1, INFRA_RETRIES + 2):
        _check_stop(stop)
        try:
            return grade(sandboxes, job.grading_image, request, job.grading_limits, log)
        except SandboxError as error:
            _check_stop(stop)
            log(f"grading infrastructure failure (attempt {attempt}): {error}")
            if attempt > INFRA_RETRIES:
                raise
            time.sleep(1.0 * attempt)
    raise AssertionError("unreachable")


def _variants(job: InstanceJob) -> tuple:
    """The instance's variants when the run asks for them, and only beside canaries: those make
    the exit status non-zero in every honest run, so a failed variant cannot change it."""
    return job.instance.variants if job.variants and job.instance.canary_sources else ()


def _record_variants(result: InstanceResult, outcome: GradingOutcome) -> None:
    if not outcome.variants_planted:
        return
    failed = sorted(ident for ident, case in outcome.variant_cases.items() if case.outcome != "passed")
    missing = outcome.variants_planted - len(outcome.variant_cases)
    result.variants_passed = len(outcome.variant_cases) - len(failed)
    result.variants_failed = len(failed) + missing
    result.failed_variants = failed[:50]
    result.resolved_on_variants = result.eval_result == Bucket.RESOLVED and result.variants_failed == 0


def _record_grading(job: InstanceJob, result: InstanceResult, outcome: GradingOutcome) -> None:
    verdict = outcome.verdict
    result.eval_result = Bucket.RESOLVED if verdict.resolved else Bucket.UNRESOLVED
    result.reason, result.detail = verdict.reason, verdict.detail
    result.patch_apply_method = outcome.apply_method
    for record in outcome.guarded:
        result.tamper.append(record)
        if record.path in result.kept_paths:
            result.kept_paths.remove(record.path)
    results = outcome.real_results
    result.canaries = [canary.source for canary in outcome.canaries]
    result.tests = results.summary()
    result.test_names = list(results.names())
    result.failed_tests = [case.name for case in results.cases if case.outcome != "passed"][:50]
    result.seconds.grading = round(outcome.seconds, 3)
    result.grading_isolation = outcome.isolation
    _record_variants(result, outcome)
    instance_id, files = job.instance.instance_id, _files(job)
    if outcome.exec_result is not None:
        result.test_exit_code = outcome.exec_result.exit_code
        result.test_timed_out = outcome.exec_result.timed_out
        result.seconds.tests = round(outcome.exec_result.seconds, 3)
        write_atomic(files.eval_output,
                     f"# {instance_id}: {verdict.reason}\n\n{verdict.detail}\n\n```\n{outcome.exec_result.output}\n```\n")
    write_atomic(files.eval_script, f"#!/bin/sh\n{outcome.eval_script}\n")


def _finish(job: InstanceJob, result: InstanceResult, started: float) -> InstanceResult:
    result.success = result.eval_result == Bucket.RESOLVED
    result.seconds.total = round(time.monotonic() - started, 3)
    write_atomic(_files(job).result, result.to_json())
    return result


def _files(job: InstanceJob) -> InstanceFiles:
    """The files of the job's attempt in its run directory (utils/records/run_dir.py names them all)."""
    return RunDirectory(job.output_dir).attempt(job.instance.instance_id, job.attempt)


def _check_stop(stop: threading.Event) -> None:
    if stop.is_set():
        raise RunCancelled()
