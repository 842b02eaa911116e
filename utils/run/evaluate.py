"""One patch at a time, for agent frameworks that drive their own agents.

    from polyglot_harness.harness import evaluate, tasks     # in a host repository: from <its path>.harness
    for task in tasks(subset="small", languages=["python"], limit=3):
        patch = my_agent(task.prompt, task.repo)              # a diff against task.base_commit
        verdict = evaluate(task, patch)                       # or evaluate("python__dominoes", patch)
        print(task.id, bool(verdict), verdict.reason, verdict.seconds)

`evaluate()` grades exactly as harness() grades a `--predictions` patch: the same patch filter,
canaries, guard, grading image and fresh network-less container (utils/pipeline/instance.py),
with no agent phase. Its `Verdict` is truthy when resolved and carries the reason, the per-test
outcomes and the result's JSON keys (utils/records/results.py). Calls with the same dataset
and settings share one `Evaluator` (engine prepared once, each language's image found once, one
run id for its containers), so only the first call of a language pays for set-up; it is safe
to call from many threads. `Evaluator` is the same thing as an object, for callers that want
to close it themselves (each call's container is removed before the call returns).

Bad input (an unknown instance, a patch that is not text, a bad setting, a missing dataset) is
one `EvaluateError` (a HarnessError) with one line, before any container starts.
"""

from __future__ import annotations

import atexit
import json
import os
import secrets
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..checkout import DEFAULT_DATASET_DIR
from ..languages import LANGUAGES
from ..outcomes import Bucket
from ..pipeline.agent_phase import AgentRunSettings
from ..pipeline.instance import InstanceJob, run_instance
from ..pipeline.pools import Sandboxes
from ..records.dataset import SUBSETS_DIR, DatasetError, Instance, load_dataset, select_instances
from ..records.results import InstanceResult
from ..records.run_dir import RunDirectory
from ..seam.agent import PreparedAgent
from ..seam.image_settings import ImageSettings
from ..seam.protocol import Limits, SandboxProvider
from ..seam.registry import open_provider
from .plan import check_recorded
from .provision import default_limits
from .settings import HarnessError, checked, run_config

# The settings of harness() that grading reads; evaluate() takes these keywords and no others.
GRADING_SETTINGS = ("test_timeout", "cpus", "memory", "pids_limit", "disk", "ca_bundle", "backend",
                    "backend_options", "max_workers", "strict")
_PREDICTIONS = PreparedAgent(name="predictions", tree=None, agent_hash="predictions")


class EvaluateError(HarnessError):
    """Input evaluate() or tasks() cannot grade: one line, nothing started."""


@dataclass(frozen=True)
class Task:
    """One instance as an agent framework sees it: `prompt` (the problem statement), `repo`
    (the starting tree: a git repository at `base_commit`, tests absent; copy it, never edit
    it) and the files a solution should change."""
    id: str
    language: str
    prompt: str
    repo: Path
    base_commit: str
    solution_files: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "language": self.language, "prompt": self.prompt, "repo": str(self.repo),
                "base_commit": self.base_commit, "solution_files": list(self.solution_files)}


@dataclass(kw_only=True, frozen=True)
class Verdict:
    """The grading of one patch: `bool(verdict)` is `resolved`; `result` holds every key of a
    harness run's result JSON."""
    instance_id: str
    resolved: bool
    bucket: str                     # resolved | unresolved | empty_patch | incomplete | error
    reason: str
    detail: str
    tests: dict[str, str]           # test name -> "passed" | "failed" (the runner's, real tests only)
    seconds: float
    test_output: str = ""           # the runner's output, as <id>_eval.md keeps it
    result: dict[str, Any] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return self.resolved


def _verdict(result: InstanceResult, test_output: str) -> Verdict:
    failed = set(result.failed_tests)
    tests = {name: "failed" if name in failed else "passed" for name in result.test_names}
    return Verdict(instance_id=result.instance_id, resolved=result.eval_result == Bucket.RESOLVED, bucket=str(result.eval_result),
                   reason=str(result.reason),
                   detail=result.detail or "", tests=tests, seconds=float(result.seconds.total or 0.0), test_output=test_output,
                   result=json.loads(result.to_json()))


class Evaluator:
    """Grades patches against one prepared dataset with one set of grading settings; the
    engine, images and run id are set up on first use and shared by every call."""

    def __init__(self, dataset: str | os.PathLike = DEFAULT_DATASET_DIR, **settings: Any) -> None:
        unknown = sorted(set(settings) - set(GRADING_SETTINGS))
        if unknown:
            raise EvaluateError(f"evaluate() takes no setting {unknown[0]!r}; it takes {', '.join(GRADING_SETTINGS)}")
        try:
            self.config = run_config(checked({"dataset": dataset, **settings}))
            self.instances = {instance.instance_id: instance for instance in load_dataset(self.config.dataset)}
            check_recorded(list(self.instances.values()), self.config.dataset, self.config.strict,
                           self.config.variants)
        except (HarnessError, DatasetError) as error:
            raise EvaluateError(str(error)) from None
        self.run_id = f"eval{time.strftime('%m%d%H%M%S')}{secrets.token_hex(2)}"
        self._lock = threading.Lock()
        self._provider: SandboxProvider | None = None
        self._sandboxes: Sandboxes | None = None
        self._images: dict[str, str] = {}
        self._workdir = tempfile.TemporaryDirectory(prefix="polyglot-evaluate-")

    # --- the tasks ------------------------------------------------------------------------------

    def tasks(self, subset: str | Sequence[str] | None = None, instance_ids: Sequence[str] | None = None,
              languages: Sequence[str] | None = None, limit: int | None = None) -> list[Task]:
        subsets = [subset] if isinstance(subset, str) else list(subset or [])
        try:
            selection = select_instances(list(self.instances.values()), subsets or None, instance_ids, languages,
                                         -1 if limit is None else limit, SUBSETS_DIR)
        except DatasetError as error:
            raise EvaluateError(str(error)) from None
        return [_task(instance) for instance in selection.instances]

    # --- grading --------------------------------------------------------------------------------

    def evaluate(self, task: "Task | Mapping[str, Any] | str", patch: str) -> Verdict:
        instance = self._instance(task)
        if not isinstance(patch, str):
            raise EvaluateError(f"the patch must be text (a unified diff), got {type(patch).__name__}")
        image = self._grading_image(instance.language)
        with tempfile.TemporaryDirectory(prefix="polyglot-verdict-", dir=self._workdir.name) as scratch:
            run_dir = RunDirectory.of(scratch, "evaluate")
            job = InstanceJob(instance=instance, agent=_PREDICTIONS, agent_image="", grading_image=image, agent_settings=AgentRunSettings(), test_timeout=self.config.test_timeout,
                              grading_limits=self._limits(), run_id=self.run_id, model_name_or_path="evaluate", output_dir=run_dir.path, predicted_patch=patch, tries=1)
            result = run_instance(self._sandboxes, job, threading.Event())
            output = run_dir.instance(instance.instance_id).eval_output
            return _verdict(result, output.read_text(encoding="utf-8") if output.is_file() else "")

    def close(self) -> None:
        """Sweep what an interrupted call left (each call's container is removed as it ends)
        and remove the scratch folder."""
        with self._lock:
            if self._sandboxes is not None:
                self._sandboxes.close()
                self._provider.clean_up_run(self.run_id)
                self._sandboxes = None
            self._workdir.cleanup()

    def __enter__(self) -> "Evaluator":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _instance(self, task: "Task | Mapping[str, Any] | str") -> Instance:
        instance_id = task.id if isinstance(task, Task) else task.get("id") if isinstance(task, Mapping) else task
        if not isinstance(instance_id, str) or instance_id not in self.instances:
            raise EvaluateError(f"unknown instance {instance_id!r} (not in the dataset {self.config.dataset})")
        return self.instances[instance_id]

    def _grading_image(self, language: str) -> str:
        """The language's grading image; the first call opens the backend (one lock: the
        engine is prepared and each image found once, whatever the threads)."""
        with self._lock:
            if self._sandboxes is None:
                log = lambda message: print(message, file=sys.stderr)  # noqa: E731
                self._provider = open_provider(self.config.backend, **self.config.backend_options)
                self._provider.prepare(log)
                self._sandboxes = Sandboxes(self._provider, self.run_id)  # removed as each call ends
            if language not in self._images:
                images = self._provider.ensure_images([LANGUAGES[language]], None,
                                                      ImageSettings.from_env(ca_bundle=self.config.ca_bundle),
                                                      Path(self._workdir.name), lambda message: None)
                self._images[language] = images.grading[language]
            return self._images[language]

    def _limits(self) -> Limits:
        """The same per-container limits as a run's."""
        config = self.config
        return default_limits(config.max_workers, config.cpus, config.memory, config.pids_limit, config.disk)


def _task(instance: Instance) -> Task:
    return Task(instance.instance_id, instance.language, instance.problem_statement, instance.agent_repo_dir,
                instance.base_commit, tuple(instance.solution_paths))


# --- the shared evaluators behind evaluate() and tasks() ---------------------------------------

_SHARED: dict[tuple, Evaluator] = {}
_SHARED_LOCK = threading.Lock()


def shared_evaluator(dataset: str | os.PathLike = DEFAULT_DATASET_DIR, **settings: Any) -> Evaluator:
    """The one Evaluator of this dataset and these settings in this process (closed at exit)."""
    key = (str(Path(dataset).resolve()), tuple(sorted((name, repr(value)) for name, value in settings.items())))
    with _SHARED_LOCK:
        if key not in _SHARED:
            _SHARED[key] = Evaluator(dataset, **settings)
        return _SHARED[key]


def evaluate(task: "Task | Mapping[str, Any] | str", patch: str, *, dataset: str | os.PathLike = DEFAULT_DATASET_DIR,
             **settings: Any) -> Verdict:
    """Grade one patch (a unified diff against the task's base commit) for one instance (a
    Task, a dict with "id", or the instance id); keywords: GRADING_SETTINGS."""
    return shared_evaluator(dataset, **settings).evaluate(task, patch)


def tasks(*, dataset: str | os.PathLike = DEFAULT_DATASET_DIR, subset: str | Sequence[str] | None = None,
          instance_ids: Sequence[str] | None = None, languages: Sequence[str] | None = None,
          limit: int | None = None) -> list[Task]:
    """The tasks of a selection (subsets, ids, languages, the first `limit`), as harness() selects."""
    return shared_evaluator(dataset).tasks(subset, instance_ids, languages, limit)


@atexit.register
def _close_shared() -> None:
    with _SHARED_LOCK:
        for evaluator in _SHARED.values():
            evaluator.close()
        _SHARED.clear()
