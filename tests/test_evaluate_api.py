"""evaluate(task, patch) and tasks(...) used the way an agent framework's benchmark adapter uses
a benchmark (Chimera's adapters: `tasks()` as dicts with `id` and `prompt`, and
`evaluate(task, agent_output, env) -> bool`), on real instances, from many threads; its verdicts
are the ones harness() gives the same patches."""

from __future__ import annotations

import json
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from polyglot_harness.harness import EvaluateError, Evaluator, Task, evaluate, harness, tasks
from polyglot_harness.utils.prepare.dataset import prepare_dataset
from polyglot_harness.utils.records.dataset import load_dataset

pytestmark = [pytest.mark.docker, pytest.mark.beside_gate]  # its own three instances, not the gate's dataset

IDS = ["python__beer-song", "go__book-store", "javascript__bottle-song"]


@pytest.fixture(scope="module")
def dataset(benchmark_checkout, language_images, tmp_path_factory) -> Path:
    output = tmp_path_factory.mktemp("evaluate-dataset") / "polyglot"
    prepare_dataset(benchmark_checkout, output, workers=2, record_expected=True, instance_ids=IDS, log=lambda _: None)
    return output


class PolyglotAdapter:
    """A framework's adapter, written only against the documented API."""

    def __init__(self, dataset: Path) -> None:
        self.dataset = dataset

    def tasks(self) -> list[dict]:
        return [{"id": task.id, "prompt": task.prompt, "task": task}
                for task in tasks(dataset=self.dataset, instance_ids=IDS)]

    def evaluate(self, task: dict, agent_output: str, env: object = None) -> bool:
        return bool(evaluate(task, agent_output, dataset=self.dataset))


def _diff(task: Task, files: dict[str, str], tmp_path: Path) -> str:
    """What an agent leaves: its edits to a copy of the starting tree, as a diff against base_commit."""
    work = tmp_path / f"work-{task.id}"
    shutil.copytree(task.repo, work, symlinks=True)
    for path, text in files.items():
        (work / path).write_text(text, encoding="utf-8")
    return subprocess.run(["git", "-C", str(work), "diff", task.base_commit], capture_output=True, text=True,
                          check=True).stdout


def _reference(dataset: Path, instance_id: str) -> dict[str, str]:
    instance = next(i for i in load_dataset(dataset) if i.instance_id == instance_id)
    return {str(p.relative_to(instance.reference_dir)): p.read_text() for p in instance.reference_dir.rglob("*")
            if p.is_file()}


def test_an_adapter_grades_agent_outputs_one_at_a_time_from_many_threads(dataset, tmp_path, no_leftover_containers):
    adapter = PolyglotAdapter(dataset)
    listed = adapter.tasks()
    assert [task["id"] for task in listed] == IDS and all(task["prompt"].strip() for task in listed)
    outputs = []
    for task in listed:
        reference = _reference(dataset, task["id"])
        broken = {path: text[: len(text) // 2] for path, text in reference.items()}
        outputs += [(task, _diff(task["task"], reference, tmp_path / "ok"), True),
                    (task, _diff(task["task"], broken, tmp_path / "broken"), False),
                    (task, "", False)]
    with ThreadPoolExecutor(max_workers=4) as pool:
        verdicts = list(pool.map(lambda case: adapter.evaluate(case[0], case[1]), outputs))
    assert verdicts == [expected for _, _, expected in outputs]


def test_a_verdict_is_the_harness_verdict_with_its_result_keys(dataset, tmp_path, no_leftover_containers):
    task = tasks(dataset=dataset, instance_ids=[IDS[0]])[0]
    reference = _reference(dataset, task.id)
    wrong = {path: text.replace("bottles", "bottle") for path, text in reference.items()}
    with Evaluator(dataset, test_timeout=60) as evaluator:
        good, bad, empty = (evaluator.evaluate(task, _diff(task, files, tmp_path / name))
                            for name, files in (("good", reference), ("bad", wrong), ("empty", {})))
    assert (bool(good), good.bucket, good.reason) == (True, "resolved", "tests_passed")
    assert good.tests and set(good.tests.values()) == {"passed"} and good.seconds > 0
    assert (bad.bucket, bad.reason) == ("unresolved", "tests_failed") and "failed" in bad.tests.values()
    assert (empty.bucket, bool(empty)) == ("empty_patch", False)
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text("".join(json.dumps({"instance_id": task.id, "model_name_or_path": name,
                                               "model_patch": verdict.result["model_patch"]}) + "\n"
                                   for name, verdict in (("good", good),)))
    outcome = harness(dataset=dataset, predictions=predictions, output_dir=tmp_path / "runs",
                      model_name_or_path="graded", progress=False)
    through_harness = outcome.results[task.id]
    assert (str(through_harness.eval_result), str(through_harness.reason)) == (good.bucket, good.reason)
    assert set(json.loads(through_harness.to_json())) == set(good.result), "the same result keys"


def test_bad_input_is_one_clear_error_before_any_container(dataset):
    with pytest.raises(EvaluateError, match="unknown instance 'python__nope'"):
        evaluate("python__nope", "", dataset=dataset)
    with pytest.raises(EvaluateError, match="must be text"):
        evaluate(IDS[0], b"diff", dataset=dataset)
    with pytest.raises(EvaluateError, match="takes no setting 'model'"):
        Evaluator(dataset, model="gpt")
    with pytest.raises(EvaluateError, match="does not exist"):
        Evaluator(dataset / "missing")
