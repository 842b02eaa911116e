"""The loops' own task agents (utils/agents/layouts.py) and their keywords, without Docker:
what a layout copies, how a lineage patch is applied to it, which layout `auto` picks, and the
keywords and return value HyperAgents and DGM rely on (the end-to-end runs:
tests/test_hyperagents_loop.py, tests/test_dgm_loop.py)."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from polyglot_harness.utils.run import flow as run_module
from polyglot_harness.utils.prepare.dataset import prepare_dataset
from polyglot_harness.utils.pipeline.agent_phase import AgentRunSettings, agent_command
from polyglot_harness.utils.records.dataset import load_dataset
from polyglot_harness.utils.run import RunOutcome, harness
from polyglot_harness.utils.run.plan import agent_layout_of
from polyglot_harness.utils.agents.prepare import AgentPatchError, prepare_layout_agent
from polyglot_harness.utils.agents.layouts import DGM, HYPERAGENTS
from polyglot_harness.utils.run.settings import HarnessError, checked, run_config
from polyglot_harness.utils.views.report import ReportError, report

from .conftest import SAMPLES_DIR
from .hosts import lineage_patch


@pytest.fixture(scope="module")
def sample_dataset_dir(tmp_path_factory) -> Path:
    output = tmp_path_factory.mktemp("samples") / "dataset"
    prepare_dataset(SAMPLES_DIR, output, log=lambda _: None, record_expected=False)
    return output


def hyperagents_like(root: Path) -> Path:
    for name in ("task_agent.py", "run_task_agent.py", "meta_agent.py", "run_meta_agent.py", "README.md",
                 "generate_loop.py", "requirements.txt"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(f"# {name}\n")
    for folder in ("agent", "utils", "domains/polyglot", "analysis"):
        (root / folder).mkdir(parents=True, exist_ok=True)
        (root / folder / "__init__.py").write_text(f"# {folder}\n")
    return root


def test_hyperagents_layout_copies_its_files_and_leaves_out_hunks_outside_them(tmp_path):
    root = hyperagents_like(tmp_path / "host")
    patch = lineage_patch(root, {"task_agent.py": "# better\n", "agent/tools.py": "TOOLS = []\n",
                                 "generate_loop.py": "# the loop, edited\n",
                                 "domains/polyglot/harness.py": "RESOLVE = True\n"}, tmp_path / "gen.diff")
    before = hashlib.sha256(patch.read_bytes()).hexdigest()
    agent = prepare_layout_agent(HYPERAGENTS, root, [patch], tmp_path / "work")
    tree = agent.tree
    assert (tree / "task_agent.py").read_text() == "# better\n" and (tree / "agent/tools.py").is_file()
    assert not (tree / "generate_loop.py").exists() and not (tree / "domains").exists()
    assert not (tree / "analysis").exists(), "only the layout's files"
    assert agent.warnings == (f"{patch}: left out the hunks for domains/polyglot/harness.py, generate_loop.py "
                              f"(outside the hyperagents agent's files)",)
    assert hashlib.sha256(patch.read_bytes()).hexdigest() == before
    assert (root / "task_agent.py").read_text() == "# task_agent.py\n", "the host repository is never patched"
    assert (agent.entry_point, agent.passes_model) == ("run_task_agent.py", True)
    assert "METAGEN_ACCESS_TOKEN" in agent.environment


def test_a_lineage_patch_only_outside_the_layout_is_a_warning_not_a_failure(tmp_path):
    root = hyperagents_like(tmp_path / "host")
    patch = lineage_patch(root, {"generate_loop.py": "# edited\n"}, tmp_path / "gen.diff")
    agent = prepare_layout_agent(HYPERAGENTS, root, [patch], tmp_path / "work")
    assert len(agent.warnings) == 1 and "generate_loop.py" in agent.warnings[0]


def test_an_empty_or_missing_lineage_patch_is_one_clear_error(tmp_path):
    root = hyperagents_like(tmp_path / "host")
    empty = tmp_path / "empty.diff"
    empty.write_text("")
    with pytest.raises(AgentPatchError, match="holds no diff"):
        prepare_layout_agent(HYPERAGENTS, root, [empty], tmp_path / "work")
    with pytest.raises(HarnessError, match="does not exist"):
        harness(root_dir=root, model_patch_paths=[tmp_path / "missing.diff"], output_dir=tmp_path / "runs")


def test_dgm_layout_runs_its_polyglot_agent_as_coding_agent_without_model(tmp_path, sample_dataset_dir):
    root = tmp_path / "dgm"
    root.mkdir()
    (root / "coding_agent_polyglot.py").write_text("# polyglot agent\n")
    (root / "coding_agent.py").write_text("# the SWE-bench agent\n")
    agent = prepare_layout_agent(DGM, root, [], tmp_path / "work")
    assert (agent.tree / "coding_agent.py").read_text() == "# polyglot agent\n"
    assert not (agent.tree / "coding_agent_polyglot.py").exists()
    instance = load_dataset(sample_dataset_dir)[0]
    command = agent_command(instance, instance.language_spec, AgentRunSettings(model="gpt-x"), False, agent)
    assert command.startswith("python /agent/coding_agent.py ") and "--model" not in command
    assert {"AWS_REGION", "AWS_SECRET_ACCESS_KEY"} <= set(agent.environment)


def _config(**given):
    return run_config(checked(given))


def test_auto_layout_follows_the_repository_at_root_dir_or_the_current_directory(tmp_path, monkeypatch):
    hyper = hyperagents_like(tmp_path / "hyper")
    dgm = tmp_path / "dgm"
    dgm.mkdir()
    (dgm / "coding_agent_polyglot.py").write_text("")
    assert agent_layout_of(_config(root_dir=hyper)) is HYPERAGENTS
    assert agent_layout_of(_config(root_dir=dgm)) is DGM
    monkeypatch.chdir(dgm)
    assert agent_layout_of(_config()) is DGM, "DGM passes no root_dir: the current directory"
    assert agent_layout_of(_config(agent="oracle")) is None, "an explicit --agent is this project's contract"
    assert agent_layout_of(_config(agent_layout="own")) is None
    monkeypatch.chdir(tmp_path)
    assert agent_layout_of(_config()) is None
    with pytest.raises(HarnessError, match="holds no HyperAgents"):
        agent_layout_of(_config(root_dir=tmp_path))
    with pytest.raises(HarnessError, match="--agent_layout must be one of auto, dgm, hyperagents, own"):
        _config(agent_layout="swe")


def test_the_loops_keywords_mean_what_they_mean_upstream(tmp_path):
    config = _config(test_task_list=["go__a"], dataset_path=tmp_path / "ds" / "polyglot_benchmark_metadata.json",
                     pred_dname=tmp_path / "preds", output_dir=tmp_path / "out", model_name_or_path="gen_1")
    assert config.instance_ids == ("go__a",) and config.dataset == tmp_path / "ds"
    assert config.run_dir == tmp_path / "preds" / "gen_1_0"
    assert config.report_path == tmp_path / "out" / "gen_1_0.0.json"
    with pytest.raises(HarnessError, match="polyglot_benchmark_metadata.json"):
        _config(dataset_path=tmp_path / "other.json")
    assert _config(num_evals=3, num_evals_parallel=2).attempts == 3, "num_evals is --attempts"
    with pytest.raises(HarnessError, match="--num_evals must be a whole number >= 1"):
        harness(num_evals=0, agent="oracle", output_dir=tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_the_outcome_iterates_over_the_run_folders_as_upstream_s_list():
    outcome = RunOutcome(run_dir=Path("/out/preds/gen_1_0"), report_path=Path("/out/gen_1_0.0.json"), results={}, report={})
    assert [str(folder) for folder in outcome] == ["/out/preds/gen_1_0"] and len(outcome) == 1


def test_report_with_a_run_keyword_scores_the_named_runs_only(tmp_path):
    demo = Path(__file__).parent / "fixtures" / "runs" / "demo" / "demo_oracle_0"
    output = tmp_path / "out"
    shutil.copytree(demo, output / "eval_run_0")
    shutil.copytree(demo, output / "other_0")
    kept = sorted(path for path in (output / "eval_run_0").glob("*__*.json"))
    for path in kept[2:]:
        path.unlink()
    data = report(output_dir=output, run_keyword="eval_run", expected_num_tasks=60)
    assert data["total_submitted_instances"] == 2 and data["total_instances"] == 60
    assert data["accuracy_score"] == pytest.approx(data["total_resolved_instances"] / 60, abs=1e-6)
    assert json.loads((output / "report.json").read_text())["accuracy_score"] == data["accuracy_score"]
    assert report(output)["instances_in_several_result_files"], "no keyword: every run below"
    with pytest.raises(ReportError, match="holds no instance results of a run named like 'nobody'"):
        report(output, "nobody")
    with pytest.raises(ReportError, match="run_keyword must be a run's name, got 60"):
        report(output, 60)


def test_harness_signature_takes_every_keyword_the_loops_pass():
    import inspect

    parameters = inspect.signature(run_module.harness).parameters
    hyperagents = {"test_task_list", "num_samples", "max_workers", "model_name_or_path", "model_patch_paths",
                   "num_evals", "num_evals_parallel", "pred_dname", "output_dir", "root_dir", "dataset_path"}
    assert hyperagents <= set(parameters)
