"""Per-instance result JSON and the run report: every key is documented here, once.

Layout of a run (HyperAgents-compatible):
    <output_dir>/<model_name_or_path>_0/<instance_id>.json      InstanceResult (below)
    <output_dir>/<model_name_or_path>_0/<instance_id>.md        the agent's chat history
    <output_dir>/<model_name_or_path>_0/<instance_id>_docker.log  timestamped log: every
                                                                 container command run
    <output_dir>/<model_name_or_path>_0/<instance_id>_eval.sh   the grading script
    <output_dir>/<model_name_or_path>_0/<instance_id>_eval.md   the test run's output
    <output_dir>/<model_name_or_path>_0/run_settings.json       what resume compares
    <output_dir>/<model_name_or_path>_0.0.json                  RunReport (below)
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from utils.verdict import GRADING_BUILD_ONLY, GRADING_TESTS

# Buckets: every instance lands in exactly one.
RESOLVED = "resolved"          # tests ran and the verdict is resolved
UNRESOLVED = "unresolved"      # graded, not resolved (failed, timed out, no results, patch did not apply)
EMPTY_PATCH = "empty_patch"    # nothing left to grade after filtering the patch
INCOMPLETE = "incomplete"      # the infrastructure failed (image, container, copy, the engine going away):
                               # reasons infrastructure_failed (before the agent ran, after retries),
                               # agent_interrupted (while it ran: not retried, model money),
                               # grading_infrastructure_failed; a resume runs these again
ERROR = "error"                # an unexpected exception
BUCKETS = (RESOLVED, UNRESOLVED, EMPTY_PATCH, INCOMPLETE, ERROR)
FINISHED_BUCKETS = (RESOLVED, UNRESOLVED, EMPTY_PATCH)  # reused on resume


@dataclass
class InstanceResult:
    # --- HyperAgents' keys -------------------------------------------------------------------
    instance_id: str                      # "<language>__<slug>"
    model_name_or_path: str               # the run's name
    model_patch: str = ""                 # the agent's patch as produced (before filtering)
    eval_result: str = ERROR              # the bucket (one of BUCKETS)
    success: bool = False                 # eval_result == "resolved"
    # --- ours ---------------------------------------------------------------------------------
    language: str = ""
    reason: str = ""                      # machine-readable why, e.g. tests_passed, tests_failed,
                                          # no_test_results, test_timeout, patch_apply_failed,
                                          # empty_patch, infrastructure_failed, unexpected_error
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
    tamper: list[dict[str, str]] = field(default_factory=list)  # [{path, why}] dropped, left pristine
    suspicious: list[dict[str, str]] = field(default_factory=list)  # [{path, kind, line}] kept lines that
                                          # look like verdict forging (early exit, fake runner output,
                                          # test-framework access); informational, for audits
    patch_apply_method: str | None = None  # which fallback applied the patch
    test_exit_code: int | None = None
    test_timed_out: bool = False
    tests: dict[str, int] = field(default_factory=dict)  # total/passed/failed/errored/skipped
    failed_tests: list[str] = field(default_factory=list)  # names (first 50) not passing
    test_names: list[str] = field(default_factory=list)   # every test the runner reported
    seconds: dict[str, float] = field(default_factory=dict)  # agent, grading, total
    canaries: list[str] = field(default_factory=list)  # tests planted as canaries in this grading
                                          # (utils/canaries.py); their own results are not in `tests`
    grading_mode: str = GRADING_TESTS     # "tests" | "build_only" (test-writing exercise: the build
                                          # decides, as upstream; listed in reports)
    stub_passes: bool | None = None       # the untouched stub resolves this instance (refactoring
                                          # exercises, build-only ones); None: not known
    attempts: int = 1                     # infrastructure retries included
    error: str = ""                       # exception text for incomplete / error

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2, sort_keys=False) + "\n"

    @staticmethod
    def from_dict(data: dict[str, Any]) -> "InstanceResult":
        known = {key: value for key, value in data.items() if key in InstanceResult.__dataclass_fields__}
        return InstanceResult(**known)


@dataclass
class RunReport:
    total_instances: int                  # instances selected for the run
    submitted_instances: int              # instances with a result file
    completed_instances: int              # graded or empty (resolved + unresolved + empty_patch)
    resolved_instances: int
    unresolved_instances: int
    empty_patch_instances: int
    error_instances: int                  # error + incomplete
    completed_ids: list[str]
    resolved_ids: list[str]
    unresolved_ids: list[str]
    empty_patch_ids: list[str]
    error_ids: list[str]
    incomplete_ids: list[str]
    unfinished_ids: list[str]             # selected but without a result (e.g. interrupted)
    reasons: dict[str, int]               # histogram of `reason`
    model_name_or_path: str
    build_only_ids: list[str] = field(default_factory=list)   # graded by the build alone (test-writing)
    stub_passes_ids: list[str] = field(default_factory=list)  # the untouched stub resolves these
    schema_version: int = 1


def build_run_report(model_name_or_path: str, selected_ids: list[str],
                     results: dict[str, InstanceResult]) -> RunReport:
    def ids(bucket: str) -> list[str]:
        return sorted(i for i, r in results.items() if r.eval_result == bucket)

    reasons: dict[str, int] = {}
    for result in results.values():
        reasons[result.reason] = reasons.get(result.reason, 0) + 1
    completed = sorted(i for i, r in results.items() if r.eval_result in FINISHED_BUCKETS)
    return RunReport(
        total_instances=len(selected_ids), submitted_instances=len(results),
        completed_instances=len(completed), resolved_instances=len(ids(RESOLVED)),
        unresolved_instances=len(ids(UNRESOLVED)), empty_patch_instances=len(ids(EMPTY_PATCH)),
        error_instances=len(ids(ERROR)) + len(ids(INCOMPLETE)), completed_ids=completed,
        resolved_ids=ids(RESOLVED), unresolved_ids=ids(UNRESOLVED), empty_patch_ids=ids(EMPTY_PATCH),
        error_ids=ids(ERROR), incomplete_ids=ids(INCOMPLETE),
        unfinished_ids=sorted(set(selected_ids) - set(results)), reasons=dict(sorted(reasons.items())),
        model_name_or_path=model_name_or_path,
        build_only_ids=sorted(i for i, r in results.items() if r.grading_mode == GRADING_BUILD_ONLY),
        stub_passes_ids=sorted(i for i, r in results.items() if r.stub_passes),
    )


def write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile("w", dir=path.parent, prefix=f".{path.name}.", delete=False,
                                     encoding="utf-8") as handle:
        handle.write(text)
        temporary = handle.name
    os.replace(temporary, path)


def write_json(path: Path, data: Any) -> None:
    write_atomic(path, json.dumps(data, indent=2) + "\n")


def load_instance_results(run_dir: Path) -> dict[str, InstanceResult]:
    results: dict[str, InstanceResult] = {}
    if not run_dir.is_dir():
        return results
    for path in sorted(run_dir.glob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and "instance_id" in data and "eval_result" in data:
            results[data["instance_id"]] = InstanceResult.from_dict(data)
    return results
