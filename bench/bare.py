"""The floor: the harness's own test commands on the reference solutions, and nothing else.

One long-lived container per language (a labelled `Sandbox`, so the usual clean-up finds
it) receives every selected instance's grading tree in ONE copy, before the clock starts:
the test commit, the reference files over it, tests un-skipped with
`utils.grading.unskip_tree` — the tree the oracle's grading runs its tests on. Then a pool
of `workers` threads runs each instance's test command (the language spec's, written the
way grading writes it) as one `docker exec` in its language's container: at most `workers`
tests at once, as in the harness. Only those execs are timed. Reports are read back and
judged with `utils.judging.verdict.decide_separated` (no canaries planted) after the clock stops, so a floor measured on failing
tests is visible as such.
"""

from __future__ import annotations

import dataclasses
import os
import secrets
import shutil
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

import docker

import _standalone  # noqa: F401,E402 - the checkout as the package polyglot_harness
from polyglot_harness.utils.records.dataset import Instance
from polyglot_harness.utils.pipeline.grading import unskip_tree
from polyglot_harness.utils.records.instance_repo import checkout_commit
from polyglot_harness.utils.languages import LANGUAGES
from polyglot_harness.utils.backends.docker.provider import DockerSandbox as Sandbox
from polyglot_harness.utils.seam.protocol import SOLUTION_UID, ExecResult, Limits, SandboxSpec
from polyglot_harness.utils.judging.verdict import decide_separated

BARE_ROOT = "/bench"  # instance trees live at /bench/<instance_id> in the language container

Log = Callable[[str], None]


@dataclass(frozen=True)
class BareInstance:
    instance_id: str
    language: str
    seconds: float          # the test command's exec, as Sandbox.exec measured it
    exit_code: int | None
    timed_out: bool
    resolved: bool
    reason: str             # utils.verdict reason, e.g. tests_passed


@dataclass(frozen=True)
class BareRun:
    wall_seconds: float     # first exec started -> last exec ended
    setup_seconds: float    # trees, containers and copies (not timed as floor)
    instances: tuple[BareInstance, ...]


def grading_tree(instance: Instance, destination: Path) -> Path:
    """What the oracle's grading tests: test commit + reference files, tests un-skipped."""
    checkout_commit(instance.grading_repo_dir, instance.test_commit, destination)
    shutil.copytree(instance.reference_dir, destination, dirs_exist_ok=True, symlinks=True)
    unskip_tree(destination, LANGUAGES[instance.language])
    return destination


def bare_limits(workers: int) -> Limits:
    """One container hosts up to `workers` tests: the harness's per-container memory times that."""
    total_gib = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // (1 << 30)
    per_container = max(1, min(8, total_gib // max(1, workers)))
    return Limits(cpus=float(os.cpu_count() or 1), memory=f"{max(1, min(total_gib, per_container * workers))}g",
                  pids=2048 * max(1, workers))


def run_bare(client: docker.DockerClient, instances: list[Instance], images: dict[str, str], workers: int,
             test_timeout: int, run_id: str, log: Log) -> BareRun:
    setup_started = time.monotonic()
    boxes: dict[str, Sandbox] = {}
    try:
        with tempfile.TemporaryDirectory(prefix="polyglot-bench-bare-") as workdir:
            for language in sorted({instance.language for instance in instances}):
                members = [instance for instance in instances if instance.language == language]
                root = Path(workdir) / language
                for instance in members:
                    grading_tree(instance, root / instance.instance_id)
                box = Sandbox(client, SandboxSpec(image=images[language], role="bench-bare", network="none",
                                                  limits=bare_limits(workers)), run_id, f"bare-{language}")
                boxes[language] = box.start()
                box.put_directory(root, BARE_ROOT)
                # Page in the toolchain once, outside the clock: the floor is the tests, not a cold disk.
                box.exec(LANGUAGES[language].version_command, 60, workdir="/")
                log(f"bare: {language}: {len(members)} tree(s) copied into one container")
        setup_seconds = time.monotonic() - setup_started
        report_dirs = {instance.instance_id: f"/tmp/report-{secrets.token_hex(8)}" for instance in instances}

        def run_one(instance: Instance) -> ExecResult:
            spec = LANGUAGES[instance.language]
            workdir = f"{BARE_ROOT}/{instance.instance_id}"
            report_dir = report_dirs[instance.instance_id]
            script = f"mkdir -p {report_dir} && cd {workdir} && {spec.test_command.format(report_dir=report_dir)}"
            # One build directory per instance: several share this container. No shared
            # compiler cache here (the harness's C++ grading has one): this is the naive floor.
            built = boxes[instance.language].exec(script, test_timeout, workdir=workdir,
                                                  environment={"POLYGLOT_BUILD_DIR": f"/tmp/build-{instance.instance_id}"})
            if not spec.run_command or built.exit_code != 0:
                return built
            # Go: the binary runs as another uid (LanguageSpec.run_command), as grading runs it.
            run = (f"mkdir -p {report_dir}-run && cd {workdir} && "
                   + spec.run_command.format(report_dir=f"{report_dir}-run", build_report_dir=report_dir))
            ran = boxes[instance.language].exec(run, test_timeout, workdir=workdir, uid=SOLUTION_UID)
            return dataclasses.replace(ran, seconds=built.seconds + ran.seconds)

        started = time.monotonic()
        exec_results = run_parallel(run_one, instances, workers)
        wall = time.monotonic() - started
        return BareRun(wall, setup_seconds, tuple(_judge(boxes[instance.language], instance, result,
                                                         report_dirs[instance.instance_id])
                                                  for instance, result in zip(instances, exec_results)))
    finally:
        for box in boxes.values():
            box.close()


def _judge(box: Sandbox, instance: Instance, result: ExecResult, report_dir: str) -> BareInstance:
    spec = LANGUAGES[instance.language]
    report = {name: content.decode("utf-8", errors="replace") for directory in (report_dir, f"{report_dir}-run")
              for name, content in box.get_files(directory).items()}
    verdict = decide_separated(result.exit_code, result.timed_out, spec.parse_results(report), {},
                               expected_tests=instance.expected_tests)
    return BareInstance(instance.instance_id, instance.language, round(result.seconds, 3), result.exit_code,
                        result.timed_out, verdict.resolved, verdict.reason)


def run_parallel(function: Callable, items: Iterable, workers: int) -> list:
    """`function` over `items` on `workers` threads, results in order. On an exception or
    Ctrl-C, queued items are cancelled and running ones are left to the caller's clean-up
    (removing the containers ends their execs) instead of being waited for."""
    executor = ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="bench")
    futures = [executor.submit(function, item) for item in items]
    try:
        results = [future.result() for future in futures]
    except BaseException:
        executor.shutdown(wait=False, cancel_futures=True)
        raise
    executor.shutdown(wait=True)
    return results
