"""Estimators over repeated attempts (utils/records/estimators.py) against hand-computed values,
and the properties that must hold for any data. No Docker."""

from __future__ import annotations

import math
import random

import pytest

from polyglot_harness.utils.records.estimators import (Attempts, instances_needed, mean_pass_at_k, mean_pass_hat_k,
                                                       effective_trials, mean_score_interval, paired_comparison, pass_at_k, pass_hat_k)


@pytest.mark.parametrize("k, expected", [(1, 0.4), (2, 0.7), (3, 0.9), (4, 1.0), (5, 1.0)])
def test_pass_at_k_for_two_successes_out_of_five(k, expected):
    # 1 - C(3, k) / C(5, k): C(3,1)/C(5,1) = 3/5, C(3,2)/C(5,2) = 3/10, C(3,3)/C(5,3) = 1/10
    assert pass_at_k(5, 2, k) == pytest.approx(expected)


@pytest.mark.parametrize("k, expected", [(1, 0.4), (2, 0.1), (3, 0.0)])
def test_pass_hat_k_for_two_successes_out_of_five(k, expected):
    assert pass_hat_k(5, 2, k) == pytest.approx(expected)  # C(2, k) / C(5, k)


def test_k_outside_one_to_n_is_refused():
    with pytest.raises(ValueError, match="between 1 and the number of attempts"):
        pass_at_k(3, 1, 4)
    with pytest.raises(ValueError, match="successes out of"):
        Attempts(4, 3)


def _random_runs(seed: int, count: int = 200):
    rng = random.Random(seed)
    for _ in range(count):
        attempts = rng.randint(1, 8)
        yield [Attempts(rng.randint(0, attempts), attempts) for _ in range(rng.randint(1, 12))]


@pytest.mark.parametrize("seed", range(3))
def test_pass_at_1_and_pass_hat_1_are_the_mean_rate(seed):
    for run in _random_runs(seed):
        mean_rate = sum(item.successes / item.attempts for item in run) / len(run)
        assert mean_pass_at_k(run, 1) == pytest.approx(mean_rate)
        assert mean_pass_hat_k(run, 1) == pytest.approx(mean_rate)


@pytest.mark.parametrize("seed", range(3))
def test_pass_at_n_is_any_success_and_pass_hat_n_is_all_successes(seed):
    for run in _random_runs(seed):
        n = min(item.attempts for item in run)
        same = [item for item in run if item.attempts == n]
        assert mean_pass_at_k(same, n) == pytest.approx(sum(item.successes > 0 for item in same) / len(same))
        assert mean_pass_hat_k(same, n) == pytest.approx(sum(item.successes == n for item in same) / len(same))


@pytest.mark.parametrize("seed", range(3))
def test_pass_at_k_grows_and_pass_hat_k_shrinks_with_k(seed):
    for run in _random_runs(seed):
        n = min(item.attempts for item in run)
        at = [mean_pass_at_k(run, k) for k in range(1, n + 1)]
        hat = [mean_pass_hat_k(run, k) for k in range(1, n + 1)]
        assert at == sorted(at) and hat == sorted(hat, reverse=True)


def test_interval_of_a_known_set_brackets_the_mean_and_is_reproducible():
    run = [Attempts(1, 1)] * 5 + [Attempts(0, 1)] * 5
    interval = mean_score_interval(run)
    assert interval.estimate == 0.5
    # 10 Bernoulli(0.5) instances: the bootstrap interval is about 0.5 +- 1.96 * sqrt(0.025) = [0.19, 0.81]
    assert 0.1 <= interval.low <= 0.25 and 0.75 <= interval.high <= 0.9
    assert mean_score_interval(run) == interval


def test_more_instances_and_more_attempts_narrow_the_interval():
    few = mean_score_interval([Attempts(1, 2)] * 10)
    more_attempts = mean_score_interval([Attempts(4, 8)] * 10)
    more_instances = mean_score_interval([Attempts(1, 2)] * 60)
    width = lambda interval: interval.high - interval.low  # noqa: E731
    assert width(more_attempts) < width(few) and width(more_instances) < width(few)


def test_a_run_that_always_succeeds_is_not_certain():
    """Issue 35: 8 instances x 3 attempts, every one succeeding, reported [1, 1] under the
    percentile bootstrap; the interval must not exclude 0.7."""
    interval = mean_score_interval([Attempts(3, 3)] * 8)
    assert interval.estimate == interval.high == 1.0 and interval.low < 0.7
    assert mean_score_interval([Attempts(1, 1)] * 8).low == pytest.approx(0.025 ** (1 / 8), abs=1e-6)  # exact, n = 8
    nothing = mean_score_interval([Attempts(0, 3)] * 8)
    assert nothing.low == nothing.estimate == 0.0 and nothing.high > 0.3


def test_effective_trials_lie_between_instances_and_attempts():
    assert effective_trials([Attempts(3, 3)] * 8) == 8  # no spread to go on: the conservative end
    assert effective_trials([Attempts(1, 2)] * 10) == 20  # identical rates: attempts independent
    all_or_nothing = [Attempts(3, 3)] * 5 + [Attempts(0, 3)] * 5
    assert effective_trials(all_or_nothing) == 10  # perfectly correlated within instances


def _simulated_coverage(true_rates: list[float], attempts: int, runs: int, rng: random.Random) -> float:
    mean = sum(true_rates) / len(true_rates)
    covered = 0
    for _ in range(runs):
        run = [Attempts(sum(rng.random() < rate for _ in range(attempts)), attempts) for rate in true_rates]
        interval = mean_score_interval(run)
        covered += interval.low - 1e-9 <= mean <= interval.high + 1e-9
    return covered / runs


@pytest.mark.parametrize("instances, attempts, rates", [
    (8, 1, "near_one"), (8, 3, "near_one"), (30, 1, "half"), (30, 3, "all_or_nothing"), (20, 5, "spread"),
    (10, 3, "near_zero"),
])
def test_the_interval_covers_the_true_mean_at_least_nominally_by_simulation(instances, attempts, rates):
    """Coverage over 1500 simulated runs per design, at the edges and inside, with the instances'
    true rates drawn once (heterogeneous, as real benchmarks are). Nominal 95 %; 93 % allows the
    simulation's own error (+-0.6 % at 1500 runs)."""
    rng = random.Random(7)
    make = {"near_one": lambda: rng.choice([1.0, 1.0, 0.97, 0.9]), "half": lambda: 0.5,
            "all_or_nothing": lambda: rng.choice([0.0, 1.0]), "spread": lambda: rng.random(),
            "near_zero": lambda: rng.choice([0.0, 0.0, 0.05])}[rates]
    true_rates = [make() for _ in range(instances)]
    assert _simulated_coverage(true_rates, attempts, 1500, rng) >= 0.93


def test_paired_permutation_test_by_hand():
    # Differences +1, +1, +1, 0: 8 sign patterns over the 3 non-zero ones; |sum| >= 3 for 2 of them.
    comparison = paired_comparison([0, 0, 0, 1], [1, 1, 1, 1])
    assert comparison.exact and comparison.p_value == pytest.approx(2 / 8)
    assert comparison.mean_difference == pytest.approx(0.75)


def test_identical_runs_are_not_different():
    comparison = paired_comparison([0.5, 1.0, 0.0], [0.5, 1.0, 0.0])
    assert comparison.p_value == 1.0 and comparison.instances_needed is None


def test_a_large_consistent_difference_is_significant_by_monte_carlo():
    comparison = paired_comparison([0.0] * 30, [1.0] * 25 + [0.0] * 5)
    assert not comparison.exact and comparison.p_value < 0.001


def test_instances_needed_follows_the_paired_sample_size_formula():
    differences = [1, 0, 0, 1, -1, 0, 1, 0]
    mean = sum(differences) / 8
    sd = math.sqrt(sum((d - mean) ** 2 for d in differences) / 7)
    assert instances_needed(differences) == math.ceil(((1.959964 + 0.841621) * sd / mean) ** 2)


def test_the_exact_interval_matches_known_values():
    from polyglot_harness.utils.records.estimators import clopper_pearson

    # Clopper-Pearson for 5 of 10 (R's binom.test): [0.187086, 0.812914]; 0 of 10: [0, 0.308497].
    assert clopper_pearson(0.5, 10) == pytest.approx((0.187086, 0.812914), abs=1e-6)
    assert clopper_pearson(0.0, 10) == pytest.approx((0.0, 0.308497), abs=1e-6)
    assert clopper_pearson(1.0, 10) == pytest.approx((1 - 0.308497, 1.0), abs=1e-6)
