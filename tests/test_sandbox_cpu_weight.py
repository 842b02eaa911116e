"""POLYGLOT_SANDBOX_CPU_SHARES: the CPU weight of a process's sandboxes (the suite runs the gate's
preparation in the background with a low one, tests/conftest.py: BackgroundGate)."""

from __future__ import annotations

import pytest

from polyglot_harness.utils.backends.docker.provider import CPU_SHARES_VARIABLE, sandbox_cpu_shares
from polyglot_harness.utils.seam.errors import SandboxError
from polyglot_harness.utils.seam.protocol import SandboxSpec


@pytest.mark.parametrize("value, expected", [("", None), ("128", 128), (" 2 ", 2)])
def test_the_weight_is_the_engines_default_or_the_number_given(monkeypatch, value, expected):
    monkeypatch.setenv(CPU_SHARES_VARIABLE, value)
    assert sandbox_cpu_shares() == expected


@pytest.mark.parametrize("value", ["1", "0", "-5", "low", "1.5"])
def test_a_weight_that_is_not_a_whole_number_of_at_least_2_is_one_clear_error(monkeypatch, value):
    monkeypatch.setenv(CPU_SHARES_VARIABLE, value)
    with pytest.raises(SandboxError, match=f"{CPU_SHARES_VARIABLE}=.*a whole number >= 2"):
        sandbox_cpu_shares()


@pytest.mark.docker
def test_a_sandbox_gets_the_weight_and_without_it_the_engines_default(provider, language_images, monkeypatch):
    spec = SandboxSpec(image=language_images["python"], role="grading")
    weights = []
    for value in ("128", ""):
        monkeypatch.setenv(CPU_SHARES_VARIABLE, value)
        box = provider.sandbox(spec, "pytest-cpu-weight", "python__weight").start()
        try:
            box.container.reload()
            weights.append(box.container.attrs["HostConfig"]["CpuShares"])
        finally:
            box.close()
    assert weights == [128, 0], "0: the engine's default weight (1024)"
