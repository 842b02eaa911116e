"""Estimators over repeated attempts (utils/records/estimators.py) against hand-computed values,
and the properties that must hold for any data. No Docker."""

from __future__ import annotations

import math
import random

import pytest

from polyglot_harness.utils.records.estimators import (Attempts, instances_needed, mean_pass_at_k, mean_pass_hat_k,
                                                       mean_score_interval, paired_comparison, pass_at_k, pass_hat_k)


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


def test_an_all_or_nothing_run_has_no_uncertainty_within_instances():
    interval = mean_score_interval([Attempts(3, 3)] * 4)
    assert (interval.low, interval.estimate, interval.high) == (1.0, 1.0, 1.0)


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
