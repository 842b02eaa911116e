"""The jobs run in parallel over the pre-started sandboxes: the progress bar, the signals that
stop a run, and an exception nothing expected recorded as an `error` result."""

from __future__ import annotations

import signal
import sys
import threading
import traceback
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait

from tqdm import tqdm

from ..outcomes import BUCKETS, Bucket, Reason
from ..pipeline.instance import InstanceJob, RunCancelled, queued, run_instance
from ..pipeline.pools import Prestart, Sandboxes
from ..records.results import InstanceResult
from ..records.run_dir import RunDirectory, write_atomic
from ..seam.protocol import SandboxProvider
from .attempts import AttemptCollector, AttemptGate
from .plan import RunPlan
from .provision import Provisioned


def execute(plan: RunPlan, provisioned: Provisioned) -> tuple[dict[str, InstanceResult], bool]:
    """Every job run; (results, interrupted) with the reused results included."""
    run_dir = plan.config.run_dir
    run_dir.mkdir(parents=True, exist_ok=True)
    RunDirectory(run_dir).write_settings(plan.resume_key)
    results = dict(plan.previous)
    attempts = AttemptCollector(plan.config.attempts, run_dir, plan.finished_attempts)
    reused = len(plan.previous) * plan.config.attempts + attempts.finished_count
    interrupted = _execute(provisioned.provider, list(provisioned.jobs), results, max(1, plan.config.max_workers),
                           provisioned.run_id, plan.config.progress, reused, attempts,
                           plan.config.num_evals_parallel)
    return results, interrupted


def _run_queued(job: InstanceJob, index: int, stop: threading.Event, sandboxes: Sandboxes,
                prestart: Prestart, gate: AttemptGate) -> InstanceResult:
    with gate.of(job.instance.instance_id):
        if stop.is_set():
            raise RunCancelled()
        prestart.starting(index)
        return run_instance(sandboxes, job, stop, after_agent=lambda: prestart.agent_done(index))


def _execute(provider: SandboxProvider, jobs: list[InstanceJob], results: dict[str, InstanceResult], workers: int,
             run_id: str, progress: bool, reused: int, attempts: AttemptCollector, parallel: int = 1) -> bool:
    """Every job (one attempt of one instance) run; the progress bar counts attempts."""
    stop = threading.Event()
    previous_handlers = _install_signal_handlers(stop)
    unit = "attempt" if attempts.attempts > 1 else "inst"
    bar = tqdm(total=len(jobs) + reused, initial=reused, disable=not progress, unit=unit, dynamic_ncols=True)
    _update_bar(bar, results)
    sandboxes = Sandboxes(provider, run_id, background_removal=True)
    prestart = Prestart(sandboxes, [queued(job) for job in jobs], workers)
    gate = AttemptGate(parallel)
    try:
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="instance") as executor:
            pending: dict[Future, InstanceJob] = {
                executor.submit(_run_queued, job, index, stop, sandboxes, prestart, gate): job
                for index, job in enumerate(jobs)}
            while pending:
                done, _ = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
                if stop.is_set():
                    for future in pending:
                        future.cancel()
                    provider.clean_up_run(run_id)
                for future in done:
                    job = pending.pop(future)
                    try:
                        result = future.result()
                    except RunCancelled:  # the run is stopping: left unfinished, a resume runs it
                        continue
                    except Exception as error:  # noqa: BLE001 - recorded, never dropped
                        if stop.is_set():
                            continue
                        result = record_unexpected(job, error)
                    combined = attempts.add(job.instance.instance_id, job.attempt, result)
                    if combined is not None:
                        results[job.instance.instance_id] = combined
                    bar.update(1)
                    _update_bar(bar, results)
                pending = {future: job for future, job in pending.items() if not future.cancelled()}
    finally:
        bar.close()
        sandboxes.close()  # the run's leftovers go in _clean_up_run, once the engine answers
        _restore_signal_handlers(previous_handlers)
    return stop.is_set()


def record_unexpected(job: InstanceJob, error: Exception) -> InstanceResult:
    """An exception that escaped the instance's own handling: an `error` result with the
    traceback, in the result file and on stderr."""
    trace = "".join(traceback.format_exception(error))
    print(f"error: {job.instance.instance_id}: unexpected {type(error).__name__}: {error}", file=sys.stderr)
    result = InstanceResult(instance_id=job.instance.instance_id, model_name_or_path=job.model_name_or_path,
                            language=job.instance.language, agent=job.agent.name, agent_hash=job.agent.agent_hash,
                            eval_result=Bucket.ERROR, reason=Reason.UNEXPECTED_ERROR,
                            error=f"{type(error).__name__}: {error}", detail=trace[-4000:])
    try:
        write_atomic(RunDirectory(job.output_dir).attempt(job.instance.instance_id, job.attempt).result,
                     result.to_json())
    except OSError as write_error:
        print(f"error: cannot write {job.instance.instance_id}'s result: {write_error}", file=sys.stderr)
    return result


def _update_bar(bar: tqdm, results: dict[str, InstanceResult]) -> None:
    counts = {bucket: 0 for bucket in BUCKETS}
    for result in results.values():
        counts[result.eval_result] = counts.get(result.eval_result, 0) + 1
    bar.set_postfix({bucket: count for bucket, count in counts.items()}, refresh=True)


def _install_signal_handlers(stop: threading.Event):
    if threading.current_thread() is not threading.main_thread():
        return None

    def handler(signum, frame):
        if not stop.is_set():
            print(f"\n{signal.Signals(signum).name}: stopping; removing this run's containers", file=sys.stderr)
        stop.set()

    return {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}


def _restore_signal_handlers(previous) -> None:
    for sig, handler in (previous or {}).items():
        signal.signal(sig, handler)
