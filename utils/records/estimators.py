"""Scores over repeated attempts, with their uncertainty (pure; no run files).

An instance attempted n times with c successes gives:
- pass@k, the chance that at least one of k attempts drawn from the n succeeds, estimated
  without bias as 1 - C(n-c, k) / C(n, k) (Chen et al., 2021, "Evaluating Large Language
  Models Trained on Code"); pass@1 is c / n.
- pass^k, the chance that all k drawn attempts succeed: C(c, k) / C(n, k).
A run's figure is the mean over its instances. Its 95 % interval is Clopper and Pearson's exact
binomial interval (never below its nominal coverage, at the edges included, where Wilson's dips
to 85 % for 8 instances near 1) whose sample size is the run's EFFECTIVE number of independent trials (Korn and Graubard's
design-effect form for clustered data): the attempts of one instance are correlated, so
n_eff = p(1-p) / Var(mean of the per-instance rates), estimated from the rates' spread and
kept between the number of instances (every instance all-or-nothing: a rate in [0, 1] has a
variance of at most p(1-p)) and the number of attempts (all independent). Where the spread says
nothing (every rate 0, or every rate 1) n_eff is the number of instances, the conservative end.
Unlike a percentile bootstrap, the interval leaves the boundary: 8 instances that all succeed
give [0.63, 1.00], not [1, 1]; its coverage is checked by simulation (tests/test_estimators.py).
Two runs are compared on the same instances with a paired
sign-flip permutation test on per-instance success rates (exact up to 2**16 sign patterns).
"""

from __future__ import annotations

import functools
import itertools
import math
import random
from dataclasses import dataclass
from statistics import NormalDist
from typing import Sequence

PERMUTATIONS = 20000
EXACT_PERMUTATION_LIMIT = 16  # instances with a non-zero difference; above it, Monte Carlo
SEED = 20211207  # the Monte Carlo permutation test is reproducible: the same runs give the same p-value


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


def mean_score_interval(instances: Sequence[Attempts], level: float = 0.95) -> Interval:
    """The mean success rate (pass@1) with a cluster-aware exact interval (the module says how)."""
    estimate = _mean([item.rate for item in instances])
    if not instances:
        return Interval(estimate, estimate, estimate, level)
    low, high = clopper_pearson(estimate, effective_trials(instances), level)
    return Interval(estimate, low, high, level)


def effective_trials(instances: Sequence[Attempts]) -> float:
    """n_eff = p(1-p) / Var(mean rate), between the number of instances and of attempts."""
    count, attempts = len(instances), sum(item.attempts for item in instances)
    p = _mean([item.rate for item in instances])
    if count < 2 or p in (0.0, 1.0):
        return float(count)
    spread = sum((item.rate - p) ** 2 for item in instances) / (count - 1)
    if spread == 0:
        return float(attempts)
    return min(float(attempts), max(float(count), p * (1 - p) * count / spread))


@functools.lru_cache(maxsize=4096)
def clopper_pearson(p: float, trials: float, level: float = 0.95) -> tuple[float, float]:
    """The exact interval for a proportion `p` over `trials` (both may be fractional: the
    successes are p * trials), from the beta distribution's quantiles."""
    successes, tail = p * trials, (1 - level) / 2
    low = 0.0 if successes <= 0 else _beta_quantile(tail, successes, trials - successes + 1)
    high = 1.0 if successes >= trials else _beta_quantile(1 - tail, successes + 1, trials - successes)
    return low, high


def _beta_quantile(q: float, a: float, b: float) -> float:
    """x with I_x(a, b) = q, by bisection (I is increasing in x)."""
    low, high = 0.0, 1.0
    for _ in range(44):  # 2**-44: far below any printed digit
        middle = (low + high) / 2
        low, high = (middle, high) if _regularized_beta(middle, a, b) < q else (low, middle)
    return (low + high) / 2


def _regularized_beta(x: float, a: float, b: float) -> float:
    """I_x(a, b) by Lentz's continued fraction (Numerical Recipes' betacf), on the side where it
    converges fast."""
    if x <= 0.0 or x >= 1.0:
        return 0.0 if x <= 0.0 else 1.0
    if x > (a + 1) / (a + b + 2):
        return 1.0 - _regularized_beta(1.0 - x, b, a)
    log_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    return math.exp(log_front) * _beta_fraction(x, a, b) / a


def _beta_fraction(x: float, a: float, b: float) -> float:
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    result = d
    for m in range(1, 300):
        for numerator in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                          -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            result *= d * c
        if abs(d * c - 1.0) < 1e-13:
            break
    return result


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
