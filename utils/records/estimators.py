"""Scores over repeated attempts, with their uncertainty (pure; no run files).

An instance attempted n times with c successes gives:
- pass@k, the chance that at least one of k attempts drawn from the n succeeds, estimated
  without bias as 1 - C(n-c, k) / C(n, k) (Chen et al., 2021, "Evaluating Large Language
  Models Trained on Code"); pass@1 is c / n.
- pass^k, the chance that all k drawn attempts succeed: C(c, k) / C(n, k).
A run's figure is the mean over its instances. Its 95 % interval comes from a nested bootstrap
(instances resampled, then each resampled instance's attempts), so it widens with few
instances AND with few attempts. Two runs are compared on the same instances with a paired
sign-flip permutation test on per-instance success rates (exact up to 2**16 sign patterns).
"""

from __future__ import annotations

import itertools
import math
import random
from dataclasses import dataclass
from statistics import NormalDist
from typing import Sequence

BOOTSTRAP_RESAMPLES = 4000
PERMUTATIONS = 20000
EXACT_PERMUTATION_LIMIT = 16  # instances with a non-zero difference; above it, Monte Carlo
SEED = 20211207  # every figure is reproducible: the same run gives the same interval


@dataclass(frozen=True)
class Attempts:
    """One instance's attempts: `successes` out of `attempts`."""
    successes: int
    attempts: int

    def __post_init__(self) -> None:
        if not 0 <= self.successes <= self.attempts or self.attempts < 1:
            raise ValueError(f"{self.successes} successes out of {self.attempts} attempts")

    @property
    def rate(self) -> float:
        return self.successes / self.attempts


@dataclass(frozen=True)
class Interval:
    estimate: float
    low: float
    high: float
    level: float = 0.95


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k for c successes out of n attempts (k <= n)."""
    _check_k(n, k)
    if n - c < k:
        return 1.0
    # 1 - prod_{i=n-c+1}^{n} (1 - k/i): the stable form of 1 - C(n-c, k) / C(n, k).
    return 1.0 - math.prod(1.0 - k / i for i in range(n - c + 1, n + 1))


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Unbiased pass^k (all k drawn attempts succeed) for c successes out of n."""
    _check_k(n, k)
    return math.comb(c, k) / math.comb(n, k)


def _check_k(n: int, k: int) -> None:
    if not 1 <= k <= n:
        raise ValueError(f"k must be between 1 and the number of attempts ({n}), not {k}")


def mean_pass_at_k(instances: Sequence[Attempts], k: int) -> float:
    return _mean([pass_at_k(item.attempts, item.successes, k) for item in instances])


def mean_pass_hat_k(instances: Sequence[Attempts], k: int) -> float:
    return _mean([pass_hat_k(item.attempts, item.successes, k) for item in instances])


def mean_score_interval(instances: Sequence[Attempts], level: float = 0.95,
                        resamples: int = BOOTSTRAP_RESAMPLES, seed: int = SEED) -> Interval:
    """The mean success rate (pass@1) with a nested-bootstrap percentile interval."""
    estimate = _mean([item.rate for item in instances])
    if not instances:
        return Interval(estimate, estimate, estimate, level)
    rng = random.Random(seed)
    means = sorted(_nested_resample(instances, rng) for _ in range(resamples))
    tail = (1.0 - level) / 2
    return Interval(estimate, _quantile(means, tail), _quantile(means, 1.0 - tail), level)


def _nested_resample(instances: Sequence[Attempts], rng: random.Random) -> float:
    total = 0.0
    for _ in instances:
        item = instances[rng.randrange(len(instances))]
        wins = sum(rng.random() < item.rate for _ in range(item.attempts))
        total += wins / item.attempts
    return total / len(instances)


def _quantile(ordered: Sequence[float], q: float) -> float:
    position = q * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


@dataclass(frozen=True)
class PairedComparison:
    """Run B against run A on the same instances, by per-instance success rate."""
    instances: int
    mean_difference: float  # B's mean rate minus A's
    p_value: float          # two-sided, sign-flip permutation test
    exact: bool             # every sign pattern enumerated (else Monte Carlo)
    # Instances that would tell the observed difference from noise (alpha 0.05, power 0.8),
    # at the observed spread of the per-instance differences; None when there is no
    # difference or no spread to go on.
    instances_needed: int | None


def paired_comparison(rates_a: Sequence[float], rates_b: Sequence[float], seed: int = SEED) -> PairedComparison:
    if len(rates_a) != len(rates_b):
        raise ValueError("a paired comparison needs the same instances on both sides")
    differences = [b - a for a, b in zip(rates_a, rates_b)]
    observed = abs(sum(differences))
    nonzero = [d for d in differences if d != 0]
    if not nonzero:
        return PairedComparison(len(differences), 0.0, 1.0, True, None)
    if len(nonzero) <= EXACT_PERMUTATION_LIMIT:
        sums = [abs(sum(sign * d for sign, d in zip(signs, nonzero)))
                for signs in itertools.product((1, -1), repeat=len(nonzero))]
        p_value, exact = sum(s >= observed - 1e-12 for s in sums) / len(sums), True
    else:
        rng = random.Random(seed)
        hits = sum(abs(sum(d if rng.random() < 0.5 else -d for d in nonzero)) >= observed - 1e-12
                   for _ in range(PERMUTATIONS))
        p_value, exact = (hits + 1) / (PERMUTATIONS + 1), False
    mean = sum(differences) / len(differences)
    return PairedComparison(len(differences), mean, min(1.0, p_value), exact, instances_needed(differences))


def instances_needed(differences: Sequence[float], alpha: float = 0.05, power: float = 0.8) -> int | None:
    """Paired-design sample size n = ((z_{1-alpha/2} + z_power) * sd / mean)^2, rounded up."""
    if len(differences) < 2:
        return None
    mean = sum(differences) / len(differences)
    spread = math.sqrt(sum((d - mean) ** 2 for d in differences) / (len(differences) - 1))
    if mean == 0 or spread == 0:
        return None
    z = NormalDist().inv_cdf(1 - alpha / 2) + NormalDist().inv_cdf(power)
    return math.ceil((z * spread / mean) ** 2)
