"""Comparing two runs (utils/compare.py, report.py --compare) and pricing tokens (utils/pricing.py,
report.py --prices): flips, per-language and reason deltas, the exact McNemar p-value, the
intersection of instance sets, refused dataset mismatches, price tables good and bad, and cost
in report.json and the comparison. Pure, no Docker: run directories are result files in tmp_path."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from polyglot_harness.utils.views import report as report_module
from .test_report import PROJECT_ROOT, REPORT_JSON_KEYS, tree_state
from polyglot_harness.utils.views.compare import CompareError, compare_runs, format_comparison, mcnemar_exact_p
from polyglot_harness.utils.outcomes import Bucket, Reason
from polyglot_harness.utils.views.pricing import PriceTableError, load_price_table, parse_price_table
from polyglot_harness.utils.records.results import InstanceResult

PRICES = {"model-a": {"input": 1.0, "output": 10.0}, "model-b": {"input": 0.5, "output": 2.0}}
PASSED = (Bucket.RESOLVED, Reason.TESTS_PASSED)
FAILED = (Bucket.UNRESOLVED, Reason.TESTS_FAILED)
TIMEOUT = (Bucket.UNRESOLVED, Reason.TEST_TIMEOUT)
# instance -> (run A's outcome, run B's outcome); None: not in that run
OUTCOMES = {
    "python__pig": (PASSED, PASSED),
    "python__leap": (FAILED, PASSED),                                    # newly resolved
    "go__leap": (PASSED, TIMEOUT),                                       # regressed, by a timeout
    "go__bob": (FAILED, PASSED),                                         # newly resolved
    "java__bank": ((Bucket.EMPTY_PATCH, Reason.EMPTY_PATCH), PASSED),    # newly resolved
    "rust__poker": ((Bucket.INCOMPLETE, Reason.INFRASTRUCTURE_FAILED), PASSED),  # excluded
    "cpp__only_a": (PASSED, None),
    "javascript__only_b": (None, FAILED),
}


def result(instance_id: str, outcome: tuple[Bucket, Reason], model: str, prompt: int, completion: int) -> InstanceResult:
    bucket, reason = outcome
    usage = {"model": model, "prompt_tokens": prompt, "completion_tokens": completion,
             "total_tokens": prompt + completion, "calls": 2}
    return InstanceResult(instance_id=instance_id, model_name_or_path=model, eval_result=bucket, success=bucket == Bucket.RESOLVED,
                          language=instance_id.split("__")[0], reason=reason, agent_usage=usage)


def write_run(run_dir: Path, results: list[InstanceResult], dataset_hash: str | None = "d1") -> Path:
    run_dir.mkdir(parents=True, exist_ok=True)
    for instance_result in results:
        (run_dir / f"{instance_result.instance_id}.json").write_text(instance_result.to_json())
    settings = {"agent": "agent"} | ({"dataset_hash": dataset_hash} if dataset_hash else {})
    (run_dir / "run_settings.json").write_text(json.dumps(settings) + "\n")
    return run_dir


@pytest.fixture
def runs(tmp_path: Path) -> tuple[Path, Path]:
    run_a = write_run(tmp_path / "runs" / "gen_1_0", [result(i, a, "model-a", 1000, 100)
                                                      for i, (a, _) in OUTCOMES.items() if a])
    run_b = write_run(tmp_path / "runs" / "gen_2_0", [result(i, b, "model-b", 2000, 50)
                                                      for i, (_, b) in OUTCOMES.items() if b])
    return run_a, run_b


def write_prices(path: Path, table: object = PRICES) -> Path:
    path.write_text(json.dumps(table))
    return path


# --- McNemar ---------------------------------------------------------------------------------

@pytest.mark.parametrize("newly_resolved, regressed, p_value", [
    (0, 5, 0.0625), (5, 0, 0.0625), (1, 9, 0.021484375), (9, 1, 0.021484375),
    (3, 3, 1.0), (7, 7, 1.0), (0, 0, 1.0), (3, 1, 0.625), (0, 1, 1.0), (2, 3, 1.0),
])
def test_mcnemar_exact_p_matches_hand_computed_values(newly_resolved: int, regressed: int, p_value: float):
    assert mcnemar_exact_p(newly_resolved, regressed) == p_value


def test_mcnemar_is_the_two_sided_binomial_tail_and_survives_many_pairs():
    for b in range(12):
        for c in range(12):
            n, k = b + c, min(b, c)
            expected = min(1.0, 2 * sum(math.comb(n, i) for i in range(k + 1)) / 2 ** n)
            assert mcnemar_exact_p(b, c) == pytest.approx(expected, rel=1e-12)
    assert 0.0 <= mcnemar_exact_p(0, 3000) < 1e-300  # no OverflowError on 2 ** 3000
    with pytest.raises(ValueError):
        mcnemar_exact_p(-1, 2)


# --- compare_runs ----------------------------------------------------------------------------

def test_flips_are_newly_resolved_and_regressed_and_incomplete_is_excluded(runs):
    comparison = compare_runs(*runs)
    assert comparison.newly_resolved == ("go__bob", "java__bank", "python__leap")
    assert comparison.regressed == ("go__leap",)
    assert (comparison.both_resolved, comparison.neither_resolved) == (1, 0)
    assert [(e.instance_id, e.bucket_a, e.bucket_b) for e in comparison.excluded] == [
        ("rust__poker", "incomplete", "resolved")]
    assert comparison.mcnemar_p == 0.625  # b=3, c=1
    assert (comparison.a.resolved, comparison.b.resolved) == (2, 5)


def test_per_language_resolved_counts_and_deltas(runs):
    table = compare_runs(*runs).per_language()
    assert list(table) == ["go", "java", "python", "rust"]  # the intersection's languages only
    assert table["go"] == {"instances": 2, "resolved_a": 1, "resolved_b": 1, "delta": 0,
                           "newly_resolved": 1, "regressed": 1}
    assert table["python"] == {"instances": 2, "resolved_a": 1, "resolved_b": 2, "delta": 1,
                               "newly_resolved": 1, "regressed": 0}
    assert table["rust"]["delta"] == 1 and table["rust"]["newly_resolved"] == 0  # excluded, not a flip


def test_reason_deltas_show_more_timeouts(runs):
    reasons = compare_runs(*runs).reasons()
    assert reasons["test_timeout"] == {"a": 0, "b": 1, "delta": 1}
    assert reasons["tests_passed"] == {"a": 2, "b": 5, "delta": 3}
    assert reasons["tests_failed"] == {"a": 2, "b": 0, "delta": -2}
    assert list(reasons)[0] == "tests_passed"  # largest change first


def test_token_deltas_sum_over_the_common_instances(runs):
    usage = compare_runs(*runs).usage()
    assert usage["prompt_tokens"] == {"a": 6000, "b": 12000, "delta": 6000}
    assert usage["completion_tokens"] == {"a": 600, "b": 300, "delta": -300}
    assert usage["calls"] == {"a": 12, "b": 12, "delta": 0}


def test_different_instance_sets_are_compared_on_the_intersection_and_say_so(runs):
    comparison = compare_runs(*runs)
    assert (comparison.only_in_a, comparison.only_in_b) == (("cpp__only_a",), ("javascript__only_b",))
    assert len(comparison.common_ids) == 6
    assert "compared on the 6 instance(s) in both (1 only in A, 1 only in B)" in " ".join(comparison.notes)
    data = comparison.to_json()
    assert (data["common_instances"], data["only_in_a"], data["only_in_b"]) == (6, ["cpp__only_a"],
                                                                                 ["javascript__only_b"])
    assert "only in A" in format_comparison(comparison)


def test_a_run_compared_with_itself_has_no_flips_and_p_1(runs):
    comparison = compare_runs(runs[0], runs[0])
    assert (comparison.newly_resolved, comparison.regressed, comparison.mcnemar_p) == ((), (), 1.0)
    assert comparison.notes == ()


def test_missing_dataset_hash_is_compared_with_a_note(tmp_path: Path):
    run_a = write_run(tmp_path / "a_0", [result("go__bob", PASSED, "m", 1, 1)], dataset_hash=None)
    run_b = write_run(tmp_path / "b_0", [result("go__bob", FAILED, "m", 1, 1)])
    comparison = compare_runs(run_a, run_b)
    assert comparison.regressed == ("go__bob",)
    assert any("run A has no dataset_hash" in note for note in comparison.notes)


@pytest.mark.parametrize("setup, message", [
    ("other_dataset", "the runs were made on different datasets (dataset_hash d1 in"),
    ("missing", "does not exist"),
    ("empty", "holds no instance results"),
    ("disjoint", "have no instance in common"),
])
def test_refused_comparisons_raise_compare_error(runs, tmp_path: Path, setup: str, message: str):
    other = {"other_dataset": lambda: write_run(tmp_path / "c_0", [result("go__bob", PASSED, "m", 1, 1)], "d2"),
             "missing": lambda: tmp_path / "nowhere_0",
             "empty": lambda: write_run(tmp_path / "e_0", []),
             "disjoint": lambda: write_run(tmp_path / "f_0", [result("go__other", PASSED, "m", 1, 1)])}[setup]()
    with pytest.raises(CompareError, match=message.replace("(", r"\(")):
        compare_runs(runs[0], other)


# --- the CLI ---------------------------------------------------------------------------------

def run_cli(*arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(PROJECT_ROOT / "report.py"), *arguments],
                          capture_output=True, text=True, cwd=PROJECT_ROOT, timeout=60)


def test_cli_compare_prints_the_table_and_writes_json(runs, tmp_path: Path):
    before = tree_state(runs[0].parent)
    json_path = tmp_path / "out" / "comparison.json"
    completed = run_cli("--compare", str(runs[0]), str(runs[1]), "--json", str(json_path))
    assert completed.returncode == 0, completed.stderr
    out = completed.stdout
    assert "flips: 3 newly resolved, 1 regressed (1 resolved in both, 0 in neither); exact McNemar p = 0.625" in out
    assert "  newly resolved: go__bob, java__bank, python__leap" in out and "  regressed: go__leap" in out
    assert "excluded (incomplete/error in either run, not counted as flips): 1: rust__poker (incomplete -> resolved)" in out
    assert any(line.split() == ["python", "2", "1", "2", "+1", "1", "0"] for line in out.splitlines())
    assert any(line.split() == ["test_timeout", "0", "1", "+1"] for line in out.splitlines())
    assert "cost: no price table" in out
    data = json.loads(json_path.read_text())
    assert data == json.loads(json.dumps(compare_runs(*runs).to_json()))
    assert data["mcnemar"] == {"newly_resolved": 3, "regressed": 1, "p_value": 0.625}
    assert data["cost"] is None
    assert tree_state(runs[0].parent) == before  # the runs are read, never written


def test_cli_compare_json_dash_prints_only_json(runs):
    completed = run_cli("--compare", str(runs[0]), str(runs[1]), "--json", "-")
    assert completed.returncode == 0, completed.stderr
    assert json.loads(completed.stdout)["regressed"] == ["go__leap"]


def test_dataset_mismatch_is_one_line_exit_2_and_touches_nothing(runs, tmp_path: Path, capsys):
    other = write_run(tmp_path / "runs" / "other_0", [result("go__bob", PASSED, "m", 1, 1)], dataset_hash="d2")
    before = tree_state(tmp_path)
    json_path = tmp_path / "comparison.json"
    assert report_module.main(["--compare", str(runs[0]), str(other), "--json", str(json_path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (f"error: the runs were made on different datasets (dataset_hash d1 in {runs[0]}, "
                            f"d2 in {other}); refusing to compare\n")
    assert tree_state(tmp_path) == before and not json_path.exists()


@pytest.mark.parametrize("arguments, message", [
    (["--expected_num_tasks", "5"], "error: --expected_num_tasks applies to --output_dir, not --compare"),
    (["--prices", "/nonexistent/prices.json"], "error: price table /nonexistent/prices.json does not exist"),
])
def test_bad_compare_settings_are_one_line_exit_2(runs, capsys, arguments, message):
    assert report_module.main(["--compare", str(runs[0]), str(runs[1]), *arguments]) == 2
    assert capsys.readouterr() == ("", message + "\n")


def test_json_flag_without_compare_is_refused(runs, capsys):
    before = tree_state(runs[0].parent)
    assert report_module.main(["--output_dir", str(runs[0].parent), "--json", "x.json"]) == 2
    assert capsys.readouterr() == ("", "error: --json applies to --compare (--output_dir writes report.json)\n")
    assert tree_state(runs[0].parent) == before


# --- prices and cost -------------------------------------------------------------------------

def test_a_good_price_table_loads(tmp_path: Path):
    table = load_price_table(write_prices(tmp_path / "prices.json", PRICES | {"free": {"input": 0, "output": 0}}))
    assert table.models["model-a"].usd(1_000_000, 100_000) == 2.0
    assert table.models["free"].usd(5, 5) == 0.0


@pytest.mark.parametrize("content, fault", [
    ("not json", "is not readable JSON"),
    ("[]", "expected a non-empty object"),
    ("{}", "expected a non-empty object"),
    ('{"m": {"input": 1}}', "'m' must be an object with exactly the keys"),
    ('{"m": {"input": 1, "output": 2, "cached": 0.1}}', "'m' must be an object with exactly the keys"),
    ('{"m": {"inptu": 1, "output": 2}}', "'m' must be an object with exactly the keys"),
    ('{"m": [1, 2]}', "'m' must be an object with exactly the keys"),
    ('{"m": {"input": -1, "output": 2}}', "'m' input must be a non-negative number, not -1"),
    ('{"m": {"input": "1.5", "output": 2}}', "'m' input must be a non-negative number, not '1.5'"),
    ('{"m": {"input": 1, "output": true}}', "'m' output must be a non-negative number, not True"),
    ('{"m": {"input": NaN, "output": 2}}', "'m' input must be a non-negative number, not nan"),
    ('{" ": {"input": 1, "output": 2}}', "a model name is empty"),
])
def test_a_bad_price_table_is_refused_in_one_line(tmp_path: Path, content: str, fault: str):
    path = tmp_path / "prices.json"
    path.write_text(content)
    with pytest.raises(PriceTableError) as raised:
        load_price_table(path)
    assert fault in str(raised.value) and str(path) in str(raised.value) and "\n" not in str(raised.value)


def test_a_bad_price_table_on_the_cli_is_one_line_exit_2_and_writes_no_report(runs, tmp_path: Path, capsys):
    prices = write_prices(tmp_path / "prices.json", {"model-a": {"input": 1}})
    before = tree_state(runs[0].parent)
    assert report_module.main(["--output_dir", str(runs[0].parent), "--prices", str(prices)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1 and captured.err.startswith(f"error: {prices}: ")
    assert tree_state(runs[0].parent) == before


def test_without_prices_report_json_keeps_its_keys_and_cost_is_null(runs):
    data = report_module.report(runs[0].parent)
    assert list(data) == REPORT_JSON_KEYS and REPORT_JSON_KEYS[-1] == "cost"
    assert data["cost"] is None


def test_cost_appears_in_report_json_total_per_language_and_per_instance(tmp_path: Path):
    output_dir = tmp_path / "runs"
    write_run(output_dir / "gen_0", [
        result("go__bob", PASSED, "model-a", 1_000_000, 100_000),       # 1 + 1 = 2 USD
        result("go__leap", FAILED, "model-a", 500_000, 0),              # 0.5 USD
        result("python__pig", PASSED, "model-b", 2_000_000, 1_000_000),  # 1 + 2 = 3 USD
        result("rust__poker", FAILED, "unknown-model", 10, 10),         # unpriced
        result("java__bank", PASSED, "", 0, 0),                         # no tokens: 0 USD
    ])
    data = report_module.report(output_dir, prices=parse_price_table(PRICES))
    assert list(data) == REPORT_JSON_KEYS
    cost = data["cost"]
    assert (cost["currency"], cost["total_usd"]) == ("USD", 5.5)
    assert cost["per_language_usd"] == {"go": 2.5, "java": 0.0, "python": 3.0, "rust": 0.0}
    assert cost["per_instance"][0] == {"instance_id": "go__bob", "language": "go", "model": "model-a",
                                       "prompt_tokens": 1_000_000, "completion_tokens": 100_000, "usd": 2.0}
    assert [entry["usd"] for entry in cost["per_instance"]] == [2.0, 0.5, 0.0, 3.0, None]
    assert (cost["unpriced_ids"], cost["unpriced_models"]) == (["rust__poker"], ["unknown-model"])
    assert json.loads((output_dir / "report.json").read_text())["cost"] == cost


def test_cli_report_prints_the_cost(runs, tmp_path: Path):
    prices = write_prices(tmp_path / "prices.json")
    completed = run_cli("--output_dir", str(runs[0].parent), "--prices", str(prices))
    assert completed.returncode == 0, completed.stderr
    # A: 7 instances x 0.002 USD, B: 7 x 0.0011 USD (the report counts each instance once: the latest file)
    assert "cost_usd " in completed.stdout
    assert json.loads((runs[0].parent / "report.json").read_text())["cost"]["unpriced_ids"] == []


def test_cost_deltas_appear_in_the_comparison(runs, tmp_path: Path):
    comparison = compare_runs(*runs, prices=parse_price_table(PRICES))
    # A: 6 common x (1000 x 1.0 + 100 x 10.0) / 1e6 = 0.012; B: 6 x (2000 x 0.5 + 50 x 2.0) / 1e6 = 0.0066
    assert comparison.cost() == {"currency": "USD", "a": 0.012, "b": 0.0066, "delta": -0.0054,
                                 "unpriced_a": 0, "unpriced_b": 0}
    completed = run_cli("--compare", str(runs[0]), str(runs[1]), "--prices", str(write_prices(tmp_path / "p.json")))
    assert completed.returncode == 0, completed.stderr
    assert any(line.split() == ["cost_usd", "0.0120", "0.0066", "-0.0054"] for line in completed.stdout.splitlines())


def test_unpriced_models_are_left_out_of_the_comparison_cost_and_counted(runs):
    comparison = compare_runs(*runs, prices=parse_price_table({"model-a": PRICES["model-a"]}))
    assert comparison.cost() == {"currency": "USD", "a": 0.012, "b": 0.0, "delta": -0.012,
                                 "unpriced_a": 0, "unpriced_b": 6}
    assert "unpriced instances left out of the cost: 0 in A, 6 in B" in format_comparison(comparison)
