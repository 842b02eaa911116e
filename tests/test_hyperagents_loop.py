"""HyperAgents runs this harness unchanged: its real tree (../shared/data/hyperagents-59a68f6.tar.gz)
with this checkout at domains/polyglot/, its documented commands from its root, and its own
`generate_loop.run_harness_polyglot` + `utils.gl_utils.get_score`, unmodified.

The agent is HyperAgents' own task agent (the hyperagents layout), turned into an oracle by a
generation's lineage patch that also trims its requirements and edits the evaluator
(domains/polyglot/harness.py): that hunk must be left out and the patch file left byte-identical.
The loop's subsets are fixed (10 small, 50 medium); its `num_samples` argument (stage 2's) keeps
the run to the 10 small instances plus 3 medium ones, which is how the loop itself trims it.
Every test prepares with HyperAgents' own documented command, which records what grading needs by
default (issue 33); each asks for the real-benchmark gate's preparation first (`real_dataset`,
shared with tests/test_real_benchmark.py), so the command takes every reference run from the
recordings that preparation left (same inputs, same code) instead of grading 225 references
again. Here, with it prepared: about 55 s for the loop, 30 s for the commands, 20 s for the
generation that stops after stage 1."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from polyglot_harness.utils.checkout import default_dataset_dir

from .hosts import (assert_full_strength, gate_recordings_reused, hyperagents_oracle_patch, hyperagents_root,
                    run_python)

pytestmark = pytest.mark.docker

STAGE_2_SAMPLES = 13  # the 10 small instances (reused from stage 1) + 3 medium ones
LEFT_OUT = "left out the hunks for domains/polyglot/harness.py"

LOOP = """
import json, os, sys
sys.path.insert(0, os.getcwd())
import domains.polyglot.harness as polyglot_entry
import generate_loop
from utils.gl_utils import get_score

out, genid, samples = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
run_dir = os.path.join(out, f"gen_{genid}", "polyglot_eval", "eval_run_0")
calls = []
harness = polyglot_entry.harness
def observed(**keywords):  # the test's probe: which result files exist when each call starts
    files = sorted(os.listdir(run_dir)) if os.path.isdir(run_dir) else []
    calls.append({f: os.stat(os.path.join(run_dir, f)).st_mtime_ns for f in files if f.endswith(".json")})
    return harness(**keywords)
polyglot_entry.harness = observed
generate_loop.run_harness_polyglot(os.getcwd(), out, genid, num_samples=samples)
print(json.dumps({"score": get_score("polyglot", out, genid), "calls": calls}))
"""


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _subset(root: Path, name: str) -> list[str]:
    return json.loads((root / "domains/polyglot/subsets" / f"{name}.json").read_text())


def _generation(out: Path, genid: int, patch: Path) -> Path:
    """A generation's metadata as HyperAgents' loop leaves it before evaluating: its lineage."""
    metadata = out / f"gen_{genid}" / "metadata.json"
    metadata.parent.mkdir(parents=True, exist_ok=True)
    metadata.write_text(json.dumps({"prev_patch_files": [], "curr_patch_files": [str(patch)]}))
    return metadata


def _prepare(root: Path, benchmark_checkout: Path, *extra: str) -> str:
    """HyperAgents' documented command; every reference run is taken from the gate's recordings."""
    completed = run_python(root, "-m", "domains.polyglot.prepare_polyglot_dataset", "--benchmark_dir",
                           str(benchmark_checkout), *extra)
    assert completed.returncode == 0, completed.stderr[-3000:]
    if gate_recordings_reused():
        assert "recording what grading needs: all " in completed.stdout, completed.stdout[-2000:]
    return completed.stdout


def test_hyperagents_documented_commands_run_from_its_root(tmp_path, benchmark_checkout, language_images,
                                                           real_dataset, no_leftover_containers):
    root = hyperagents_root(tmp_path)
    printed = _prepare(root, benchmark_checkout)  # offline: --benchmark_dir; every instance
    assert "Prepared 225 instances" in printed
    dataset = default_dataset_dir(root / "domains/polyglot")
    patch = hyperagents_oracle_patch(root, dataset, _subset(root, "small")[:2], tmp_path / "oracle.diff")
    completed = run_python(root, "-m", "domains.polyglot.harness", "--subset", "small", "--output_dir",
                           "./outputs/initial_polyglot_0", "--model_name_or_path", "eval_run",
                           "--num_samples", "2", "--model_patch_paths", str(patch), "--no_progress")
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert "2/2 resolved" in completed.stdout
    run_report = json.loads((root / "outputs/initial_polyglot_0/eval_run_0.0.json").read_text())
    assert run_report["resolved_ids"] == sorted(_subset(root, "small")[:2])
    completed = run_python(root, "-m", "domains.polyglot.report", "--output_dir", "./outputs/initial_polyglot_0",
                           "--model_name_or_path", "eval_run")
    assert completed.returncode == 0, completed.stderr
    report = json.loads((root / "outputs/initial_polyglot_0/report.json").read_text())
    assert (report["accuracy_score"], report["total_resolved_instances"]) == (1.0, 2)
    assert report["checks_off"] == {} and "warning: the dataset" not in completed.stderr
    assert_full_strength(root / "outputs/initial_polyglot_0/eval_run_0", dataset, _subset(root, "small")[:2])
    (root / "outputs/empty").mkdir()
    completed = run_python(root, "-m", "domains.polyglot.report", "--output_dir", "./outputs/empty",
                           "--model_name_or_path", "eval_run")
    assert completed.returncode == 2 and len(completed.stderr.strip().splitlines()) == 1, completed.stderr
    assert not (root / "outputs/empty/report.json").exists()


def test_hyperagents_generate_loop_stages_scores_and_reuses_verdicts_unchanged(tmp_path, benchmark_checkout,
                                                                               real_dataset, monkeypatch,
                                                                               no_leftover_containers):
    root = hyperagents_root(tmp_path)
    small, medium = _subset(root, "small"), _subset(root, "medium")
    selection = list(dict.fromkeys(small + medium))
    # HyperAgents' documented preparation, where the harness looks by default: the checkout's data
    # folder (under this session's POLYGLOT_HARNESS_HOME, outside the checkout), recorded by default.
    _prepare(root, benchmark_checkout)
    dataset = default_dataset_dir(root / "domains/polyglot")
    out = tmp_path / "outputs"
    patch = hyperagents_oracle_patch(root, dataset, selection,
                                     out / "gen_1" / "agent_output" / "model_patch.diff")
    patch_sha, evaluator_sha = _sha(patch), _sha(root / "domains/polyglot/harness.py")
    metadata = _generation(out, 1, patch)
    monkeypatch.setenv("METAGEN_ACCESS_TOKEN", "token-for-the-agent")

    completed = run_python(root, "-c", LOOP, str(out), "1", str(STAGE_2_SAMPLES))
    assert completed.returncode == 0, completed.stderr[-3000:]
    probe = json.loads(completed.stdout.strip().splitlines()[-1])

    covered = selection[:STAGE_2_SAMPLES]
    assert probe["score"] == pytest.approx(len(covered) / 60, abs=1e-6), "HyperAgents' denominator: small + medium"
    run_report = json.loads((out / "gen_1/polyglot_eval/eval_run_0.0.json").read_text())
    assert run_report["resolved_ids"] == sorted(covered), "every covered instance resolved"
    assert "javascript__robot-name" in covered and run_report["checks_off"] == {}
    assert_full_strength(out / "gen_1/polyglot_eval/eval_run_0", dataset, covered)
    assert json.loads(metadata.read_text())["run_full_eval"] is True, "stage 1 reached 0.4: stage 2 ran"
    stage_1, stage_2 = probe["calls"]
    assert stage_1 == {} and set(stage_2) >= {f"{instance_id}.json" for instance_id in small}
    run_dir = out / "gen_1/polyglot_eval/eval_run_0"
    for instance_id in small:  # stage 2 reused every stage-1 verdict: no result file rewritten
        assert (run_dir / f"{instance_id}.json").stat().st_mtime_ns == stage_2[f"{instance_id}.json"]
    assert _sha(patch) == patch_sha, "the loop's patch file is never modified"
    assert _sha(root / "domains/polyglot/harness.py") == evaluator_sha
    assert completed.stderr.count(LEFT_OUT) == 2, "one line per harness call for the evaluator's hunk"
    assert "METAGEN_ACCESS_TOKEN=token-for-the-agent" in (run_dir / f"{small[0]}.md").read_text()


def test_hyperagents_generation_below_the_threshold_stops_after_stage_1(tmp_path, benchmark_checkout,
                                                                        language_images, real_dataset,
                                                                        no_leftover_containers):
    root = hyperagents_root(tmp_path)
    _prepare(root, benchmark_checkout, "--instance_ids", ",".join(_subset(root, "small")))
    out = tmp_path / "outputs"
    # An oracle that knows no exercise: every instance ends empty_patch.
    patch = hyperagents_oracle_patch(root, default_dataset_dir(root / "domains/polyglot"), [],
                                     out / "gen_2" / "agent_output" / "model_patch.diff")
    metadata = _generation(out, 2, patch)
    completed = run_python(root, "-c", LOOP, str(out), "2", "-1")
    assert completed.returncode == 0, completed.stderr[-3000:]
    probe = json.loads(completed.stdout.strip().splitlines()[-1])
    assert probe["score"] == 0.0 and len(probe["calls"]) == 1
    assert json.loads(metadata.read_text())["run_full_eval"] is False
    report = json.loads((out / "gen_2/polyglot_eval/report.json").read_text())
    assert sorted(report["total_emptypatch_ids"]) == sorted(_subset(root, "small"))
