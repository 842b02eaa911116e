"""DGM's loop runs this harness unchanged. DGM's code is not on this machine, so the host here is a
repository built from what its self_improve_step.run_harness_polyglot does (issue 26): this
checkout at polyglot/, the DGM agent layout (coding_agent_polyglot.py, run as coding_agent.py
without --model; requirements.txt, tools/, utils/, tests/, prompts/, llm.py, llm_withtools.py),
harness() called with DGM's keywords (no root_dir: the current directory), the return value
stored as `[str(d) for d in ...]`, and the run reports read by a get_all_performance written
from the description: it sums every *.json in results_dir whose name holds the keyword."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from polyglot_harness.utils.checkout import default_dataset_dir

from .hosts import (assert_full_strength, gate_recordings_reused, lineage_patch, place_checkout, reference_solutions,
                    run_python)

pytestmark = pytest.mark.docker

# robot-name: upstream keeps one of its tests `test.skip` on purpose (issue 33)
STAGE_1 = ["python__beer-song", "go__book-store", "rust__bowling", "javascript__robot-name"]
STAGE_2 = ["python__beer-song", "javascript__bottle-song", "go__dominoes"]  # DGM's second stage: its own list

# The initial DGM-shaped agent: it follows the contract's arguments strictly (an unknown one,
# such as --model, would end it with argparse's error) and changes nothing.
CODING_AGENT = '''import argparse
import os
import subprocess

parser = argparse.ArgumentParser()
for name in ("--problem_statement", "--git_dir", "--chat_history_file", "--base_commit", "--outdir",
             "--test_description", "--language"):
    parser.add_argument(name, required=name != "--language")
args = parser.parse_args()


def solve(args):
    return []


written = solve(args)
with open(args.chat_history_file, "w") as handle:
    handle.write("wrote: " + ", ".join(written) + "\\nAWS_REGION=" + os.environ.get("AWS_REGION", "") + "\\n")
diff = subprocess.run(["git", "-C", args.git_dir, "diff", args.base_commit], capture_output=True, text=True).stdout
with open(os.path.join(args.outdir, "model_patch.diff"), "w") as handle:
    handle.write(diff)
'''

ORACLE_SOLVE = '''def solve(args):
    import hashlib, json
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "utils", "oracle_solutions.json")) as handle:
        solutions = json.load(handle)
    files = solutions.get(hashlib.sha256(args.problem_statement.encode("utf-8")).hexdigest(), {})
    for path, text in files.items():
        with open(os.path.join(args.git_dir, path), "w") as handle:
            handle.write(text)
    return list(files)
'''

DGM_STEP = """
import json, os, sys
sys.path.insert(0, os.getcwd())
from polyglot.harness import harness as polyglot_harness

out, run_id, patch = sys.argv[1], sys.argv[2], sys.argv[3]
stage_1, stage_2 = json.loads(sys.argv[4]), json.loads(sys.argv[5])
os.makedirs(out, exist_ok=True)


def get_all_performance(run_keyword, results_dir):
    matching = [f for f in os.listdir(results_dir) if f.endswith(".json") and run_keyword in f]
    if not matching:
        return None, None
    total_resolved = total_submitted = 0
    unresolved, resolved, empty = [], [], []
    for name in matching:
        with open(os.path.join(results_dir, name)) as handle:
            results = json.load(handle)
        total_resolved += results.get("resolved_instances", 0)
        total_submitted += results.get("submitted_instances", 0)
        unresolved += results.get("unresolved_ids", [])
        empty += results.get("empty_patch_ids", [])
        resolved += results.get("resolved_ids", [])
    return None, {"accuracy_score": total_resolved / total_submitted if total_submitted else 0,
                  "total_resolved_instances": total_resolved, "total_submitted_instances": total_submitted,
                  "files": matching, "total_unresolved_ids": unresolved, "total_emptypatch_ids": empty,
                  "total_resolved_ids": resolved}


with open("polyglot/polyglot_benchmark_metadata.json") as f:  # as self_improve(polyglot=True) reads it
    dataset = json.loads(f.read())
entry = next(e for e in dataset if e["instance_id"] == stage_1[0])  # get_diagnose_prompt_polyglot's keys
metadata = {"entry_keys": [key for key in ("problem_statement", "reference_answers", "reference_tests")
                           if entry.get(key)]}
for key, task_list in (("overall_performance", stage_1), ("overall_performance_deep", stage_2)):
    dnames = polyglot_harness(test_task_list=task_list, num_samples=-1, max_workers=min(10, len(task_list)),
                              model_name_or_path=run_id, model_patch_paths=[patch], num_evals=1,
                              num_evals_parallel=min(5, 1), pred_dname=os.path.join(out, "predictions"),
                              output_dir=out)
    metadata.setdefault("swe_dnames", [str(dn) for dn in dnames])
    metadata[key] = get_all_performance(run_id, results_dir=out)[1]
print(json.dumps(metadata))
"""


def dgm_root(tmp_path: Path) -> Path:
    root = tmp_path / "dgm"
    for folder in ("tools", "utils", "tests", "prompts"):
        (root / folder).mkdir(parents=True)
        (root / folder / "__init__.py").write_text(f"OWNER = 'dgm {folder}'\n")
    (root / "coding_agent_polyglot.py").write_text(CODING_AGENT)
    (root / "coding_agent.py").write_text("raise SystemExit('the SWE-bench agent, never the polyglot one')\n")
    for name in ("llm.py", "llm_withtools.py"):
        (root / name).write_text("")
    (root / "requirements.txt").write_text("")
    (root / "pytest.ini").write_text("[pytest]\n")
    place_checkout(root / "polyglot")
    return root


def test_dgm_self_improve_step_calls_and_reads_the_run_reports_unchanged(tmp_path, benchmark_checkout,
                                                                          language_images, real_dataset, monkeypatch,
                                                                          no_leftover_containers):
    """Its preparation records by default; the gate's preparation (`real_dataset`) ran first, so
    every reference run is taken from its recordings (same inputs, same code)."""
    root = dgm_root(tmp_path)
    ids = list(dict.fromkeys(STAGE_1 + STAGE_2))
    completed = run_python(root, "-m", "polyglot.prepare_polyglot_dataset", "--benchmark_dir", str(benchmark_checkout),
                           "--instance_ids", ",".join(ids))
    assert completed.returncode == 0, completed.stderr[-2000:]
    if gate_recordings_reused():
        assert f"recording what grading needs: all {len(ids)} taken from earlier recordings" in completed.stdout
    solutions = reference_solutions(default_dataset_dir(root / "polyglot"), ids)  # where it prepared by default
    # DGM's patches are diffs of its /dgm tree, where coding_agent_polyglot.py is coding_agent.py.
    (root / "coding_agent.py").rename(tmp_path / "swe_agent.py")
    (root / "coding_agent.py").write_text(CODING_AGENT)
    patch = lineage_patch(root, {
        "coding_agent.py": CODING_AGENT.replace("def solve(args):\n    return []\n", ORACLE_SOLVE),
        "utils/oracle_solutions.json": json.dumps(solutions),
        "polyglot/harness.py": (root / "polyglot/harness.py").read_text() + "\nRESOLVED = True\n",
    }, tmp_path / "self_improve" / "model_patch.diff")
    (root / "coding_agent.py").unlink()
    (tmp_path / "swe_agent.py").rename(root / "coding_agent.py")
    patch_sha = hashlib.sha256(patch.read_bytes()).hexdigest()
    monkeypatch.setenv("AWS_REGION", "region-for-the-agent")

    out, run_id = tmp_path / "output_dgm" / "20260101_000000_000000", "20260101_000000_000000"
    completed = run_python(root, "-c", DGM_STEP, str(out), run_id, str(patch), json.dumps(STAGE_1),
                           json.dumps(STAGE_2))
    assert completed.returncode == 0, completed.stderr[-3000:]
    metadata = json.loads(completed.stdout.strip().splitlines()[-1])

    assert metadata["entry_keys"] == ["problem_statement", "reference_answers", "reference_tests"]
    assert metadata["swe_dnames"] == [str(out / "predictions" / f"{run_id}_0")]
    first, deep = metadata["overall_performance"], metadata["overall_performance_deep"]
    assert first["files"] == [f"{run_id}_0.0.json"], "one run report, in output_dir"
    assert (first["accuracy_score"], first["total_resolved_instances"], first["total_submitted_instances"]) == (1.0, 4, 4)
    assert sorted(first["total_resolved_ids"]) == sorted(STAGE_1)
    assert first["total_unresolved_ids"] == first["total_emptypatch_ids"] == []
    # The second stage runs its own list into the same names: its report replaces the first's.
    assert (deep["accuracy_score"], deep["total_resolved_instances"], deep["total_submitted_instances"]) == (1.0, 3, 3)
    assert sorted(deep["total_resolved_ids"]) == sorted(STAGE_2)
    assert_full_strength(out / "predictions" / f"{run_id}_0", default_dataset_dir(root / "polyglot"), ids)
    assert "warning: the dataset" not in completed.stderr, "no check is off"
    assert hashlib.sha256(patch.read_bytes()).hexdigest() == patch_sha
    assert "left out the hunks for polyglot/harness.py" in completed.stderr
    transcript = (out / "predictions" / f"{run_id}_0" / f"{STAGE_1[0]}.md").read_text()
    assert "AWS_REGION=region-for-the-agent" in transcript and "wrote: " in transcript
