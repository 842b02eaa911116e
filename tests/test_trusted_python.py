"""Python graded in a trusted process (issue 24): attackers that change ONLY solution files,
on real exercises of ../shared/data, graded through the project's grading code with Docker.

Each attacker under tests/fixtures/trusted_attackers/python/<name>/ (attacker.json says how
it wins when the solution shares the test process) must end unresolved, with the reason
named after what the trusted side caught where it can tell. No canary is planted here (the
dataset records no expected tests) and the source policy is off: the trusted process alone
must hold.

Our own school-roster exercise (tests/fixtures/shared_containers/) pins that containers are
shared as in one process: a solution that hands out its own lists, or sorts the caller's, is
graded exactly as in process (unresolved), the reference resolves.
"""

from __future__ import annotations

import dataclasses
import json
import tempfile
from pathlib import Path

import pytest

from polyglot_harness.utils.backends.docker.images import ensure_language_image
from polyglot_harness.utils.languages import LANGUAGES
from polyglot_harness.utils.pipeline.expected_tests import patch_writing, reference_patch
from polyglot_harness.utils.outcomes import Isolation
from polyglot_harness.utils.pipeline.grading import GradingRequest, grade
from polyglot_harness.utils.prepare.dataset import prepare_dataset
from polyglot_harness.utils.records.dataset import Instance, load_dataset
from polyglot_harness.utils.records.instance_repo import checkout_commit
from polyglot_harness.utils.seam.image_settings import ImageSettings

pytestmark = [pytest.mark.docker, pytest.mark.beside_gate]  # its own python instances, repositories only

ATTACKERS_DIR = Path(__file__).resolve().parent / "fixtures" / "trusted_attackers" / "python"
ATTACKERS = sorted(path.parent for path in ATTACKERS_DIR.glob("*/attacker.json"))


def attacker_meta(attacker: Path) -> dict:
    return json.loads((attacker / "attacker.json").read_text())


@pytest.fixture(scope="module")
def attacked_instances(benchmark_checkout, tmp_path_factory) -> dict[str, Instance]:
    """Only the python instances the attackers (and the reference check) need."""
    wanted = sorted({attacker_meta(attacker)["instance_id"] for attacker in ATTACKERS})
    output = tmp_path_factory.mktemp("trusted-python") / "polyglot"
    prepare_dataset(benchmark_checkout, output, languages=["python"], instance_ids=wanted, log=lambda message: None,
                    record_expected=False)
    return {instance.instance_id: instance for instance in load_dataset(output)}


@pytest.fixture(scope="module")
def python_image(docker_client) -> str:
    return ensure_language_image(docker_client, LANGUAGES["python"], ImageSettings.from_env(), log=lambda m: None).tag


def grade_patch(sandboxes, image: str, instance: Instance, patch: str, test_timeout: int = 120, language=None):
    with tempfile.TemporaryDirectory() as workdir:
        tree = Path(workdir) / "tree"
        checkout_commit(instance.grading_repo_dir, instance.test_commit, tree)
        # The source policy off: the trusted process must hold on its own (the policy refuses
        # most of these attackers before anything runs: tests/test_source_policy.py).
        request = GradingRequest(language=language or instance.language_spec, instance_id=instance.instance_id, test_tree=tree, patch_text=patch, solution_paths=instance.solution_paths,
                                 hidden_paths=instance.hidden_paths, test_timeout=test_timeout, source_policy=False)
        return grade(sandboxes, image, request)


def attacker_files(attacker: Path) -> dict[str, bytes]:
    return files_under(attacker / "files")


def files_under(root: Path) -> dict[str, bytes]:
    return {path.relative_to(root).as_posix(): path.read_bytes() for path in sorted(root.rglob("*")) if path.is_file()}


@pytest.mark.parametrize("attacker", ATTACKERS, ids=[path.name for path in ATTACKERS])
def test_attacker_is_unresolved_under_trusted_grading(attacker: Path, attacked_instances, sandboxes, python_image):
    meta = attacker_meta(attacker)
    instance = attacked_instances[meta["instance_id"]]
    outcome = grade_patch(sandboxes, python_image, instance, patch_writing(instance, attacker_files(attacker)),
                          meta.get("test_timeout", 120))
    assert outcome.isolation == Isolation.TRUSTED_PROCESS
    assert not outcome.verdict.resolved, f"{attacker.name} ({meta['description']}) was graded resolved"
    assert outcome.verdict.reason in meta["reasons"], (attacker.name, outcome.verdict,
                                                       (outcome.exec_result.output if outcome.exec_result else "")[-2000:])


IN_PROCESS_WINNERS = [attacker for attacker in ATTACKERS if attacker_meta(attacker).get("resolves_in_process")]


@pytest.mark.parametrize("attacker", IN_PROCESS_WINNERS, ids=[path.name for path in IN_PROCESS_WINNERS])
def test_attacker_resolves_when_the_solution_shares_the_test_process(attacker: Path, attacked_instances, sandboxes,
                                                                     python_image):
    """The attack has teeth: graded in-process (no trusted process, no canaries) it resolves."""
    meta = attacker_meta(attacker)
    instance = attacked_instances[meta["instance_id"]]
    in_process = dataclasses.replace(instance.language_spec, trusted=None)
    outcome = grade_patch(sandboxes, python_image, instance, patch_writing(instance, attacker_files(attacker)),
                          language=in_process)
    assert outcome.isolation == "in_process" and outcome.verdict.resolved, (attacker.name, outcome.verdict)


@pytest.mark.parametrize("instance_id", sorted({attacker_meta(a)["instance_id"] for a in ATTACKERS}))
def test_reference_of_an_attacked_exercise_resolves_under_trusted_grading(instance_id, attacked_instances, sandboxes,
                                                                          python_image):
    """The negative control: the same exercises, graded the same way, resolve when solved."""
    instance = attacked_instances[instance_id]
    outcome = grade_patch(sandboxes, python_image, instance, reference_patch(instance))
    assert outcome.isolation == Isolation.TRUSTED_PROCESS
    assert outcome.verdict.resolved, (outcome.verdict, (outcome.exec_result.output if outcome.exec_result else "")[-2000:])


SHARED_CONTAINERS = Path(__file__).resolve().parent / "fixtures" / "shared_containers"


@pytest.fixture(scope="module")
def school_roster(tmp_path_factory) -> Instance:
    output = tmp_path_factory.mktemp("shared-containers") / "polyglot"
    prepare_dataset(SHARED_CONTAINERS, output, languages=["python"], log=lambda message: None, record_expected=False)
    (instance,) = load_dataset(output)
    return instance


def _outcomes(outcome) -> dict[str, str]:
    return {case.name.rsplit("::", 1)[-1]: case.outcome for case in outcome.results.cases}


@pytest.mark.parametrize("solution", ["leaky", "mutating", "reference"])
def test_containers_are_shared_as_in_one_process(solution, school_roster, sandboxes, python_image):
    """leaky hands out its own roster and grade lists (the test's change is the school's),
    mutating sorts the list it is given: each fails, test by test, what it fails in process.
    With arguments and results crossing as copies both were graded resolved."""
    instance = school_roster
    if solution == "reference":
        patch = reference_patch(instance)
    else:
        patch = patch_writing(instance, files_under(SHARED_CONTAINERS / "solutions" / solution))
    trusted = grade_patch(sandboxes, python_image, instance, patch)
    in_process = grade_patch(sandboxes, python_image, instance, patch,
                             language=dataclasses.replace(instance.language_spec, trusted=None))
    assert trusted.isolation == Isolation.TRUSTED_PROCESS and in_process.isolation == "in_process"
    assert trusted.verdict.resolved is (solution == "reference"), (trusted.verdict, _outcomes(trusted))
    assert _outcomes(trusted) == _outcomes(in_process) and len(_outcomes(trusted)) == 6
