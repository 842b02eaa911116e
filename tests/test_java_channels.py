"""Java: the solution builds and loads without the hidden tests (issue 31, item 3).

The runner (docker/java/PolyglotJavaTest.java) compiles src/main alone, then the tests against
those classes; the test classes are read into memory, their files deleted, and defined by a
loader whose resources are the solution's directory only. The attack it must beat (issue 31):
a generic engine (tests/fixtures/java_channels/engine/, no per-exercise code) that finds the
test method calling the solution in a stack trace printed into a string, reads that test's
class file as a resource and answers with the String constant its bytecode loads nearest to
the call. The attack is the exercise's stub with every `throw new UnsupportedOperationException(..)`
replaced by `return Oracle.answer();`. Against the runner before this change (its
PolyglotJavaTest run on a JDK 17 with the image's jars, tests un-skipped, no canaries) it passed
every test of java__food-chain, java__house and java__twelve-days (10/10, 14/14, 15/15), the
policy_clean engine reading the test's class file through its own class's getResourceAsStream;
now every way finds no class bytes.

`policy_clean` reads through names the source policy let by when it was written (printStackTrace,
its own class's getResourceAsStream/getResource); since red team 10 (2026-11-29) the policy
refuses its `java.net.URL` stream too (the last test), so it is graded with the policy off, to
reach the runner's own defence; `any_loader` also tries
Class.forName, the context and system class loaders, the caller class's own loader and the
files near the solution's classes and in the temporary directory, graded with the policy off
(the policy refuses it, as the last test shows). The control: the same files without the trick
(the stub) fail the same tests as before, and the engine does answer from a class file it can
read (tests/test_java_runner.py: a solution's own test class).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from .fixtures.forgers.check import grade_forger, graded_ahead, once, selected
from polyglot_harness.utils.languages import get_language
from polyglot_harness.utils.outcomes import Reason
from polyglot_harness.utils.records.dataset import load_dataset

ENGINE = Path(__file__).resolve().parent / "fixtures" / "java_channels" / "engine"
ATTACKED = ("java__food-chain", "java__house", "java__twelve-days")
_THROW = re.compile(r"throw new UnsupportedOperationException\([^;]*\);")


@pytest.mark.parametrize("source, declares", [
    ("package org.assertj.core.api;\npublic class A {}\n", True),
    ("/**/package org.assertj.core.api;\npublic class A {}\n", True),
    ("/* why */ package/**/org.assertj\n.core.api ;\nclass A {}\n", True),
    ("\\u0070ackage org.assertj.core.api;\nclass A {}\n", True),
    ("// package org.assertj.core.api;\nclass A {}\n", False),
    ('class A { String s = "package x;"; int packages; }\n', False),
    ("/* package x; */ class Packaged {}\n", False),
])
def test_java_guard_reads_a_package_declaration_as_javac_does(source: str, declares: bool):
    """The guard restores a kept file declaring a package; a comment before or inside the
    declaration (which javac skips) used to hide it from the guard's line regex."""
    why = get_language("java").guard("src/main/java/A.java", source.encode())
    assert why == ("declares_a_package" if declares else None)


def attacker(tmp: Path, dataset: Path, instance_id: str, variant: str | None) -> Path:
    """A forger directory (tests/fixtures/forgers/check.py's layout): the instance's stub with
    every throw answered by the engine (variant None: the stub unchanged, the control)."""
    instance = {i.instance_id: i for i in load_dataset(dataset)}[instance_id]
    forger = tmp / f"{instance_id}-{variant}"
    main = forger / "files" / "src" / "main" / "java"
    main.mkdir(parents=True)
    for path in instance.solution_paths:
        stub = (instance.agent_repo_dir / path).read_text()
        (forger / "files" / path).write_text(stub if variant is None else _THROW.sub("return Oracle.answer();", stub))
    if variant is not None:
        shutil.copy(ENGINE / "Oracle.java", main)
        shutil.copy(ENGINE / variant / "Sources.java", main)
    (forger / "forger.json").write_text(json.dumps({"instance_id": instance_id}))
    return forger


def _attacker(made: Path, dataset: Path, instance_id: str, variant: str | None) -> Path:
    """`attacker`'s forger, made once in the module-scoped directory: the module's `ahead` may
    be grading it already."""
    return once(made / f"{instance_id}-{variant}", lambda d: attacker(d.parent, dataset, instance_id, variant))


@pytest.fixture(scope="module")
def ahead(request, provider, real_dataset, made):
    with graded_ahead(provider, real_dataset, selected(request, {
        "test_the_caller_class_file_attack_finds_no_test_bytes": lambda p: [
            (_attacker(made, real_dataset, p["instance_id"], p["variant"]), {"source_policy": p["policy"]})],
        "test_control_the_stub_without_the_trick_fails_as_before": lambda p: [
            (_attacker(made, real_dataset, p["instance_id"], None), {"source_policy": True})],
        "test_the_source_policy_refuses_the_engines": lambda p: [
            (_attacker(made, real_dataset, ATTACKED[0], p["variant"]), {"source_policy": True})],
    })):
        yield


def _test_class(instance_id: str) -> str:
    return "".join(part.capitalize() for part in instance_id.split("__")[1].split("-")) + "Test"


@pytest.mark.docker
@pytest.mark.parametrize("variant, policy", [("policy_clean", False), ("any_loader", False)])
@pytest.mark.parametrize("instance_id", ATTACKED)
def test_the_caller_class_file_attack_finds_no_test_bytes(instance_id: str, variant: str, policy: bool, provider,
                                                           real_dataset, made, ahead):
    forger = _attacker(made, real_dataset, instance_id, variant)
    outcome = grade_forger(provider, real_dataset, forger, source_policy=policy)
    assert not outcome.verdict.resolved, outcome.verdict
    assert outcome.verdict.reason == Reason.TESTS_FAILED, outcome.verdict
    output = outcome.exec_result.output if outcome.exec_result else ""
    # What caught it: every way of reading the caller's class file found nothing.
    assert f"oracle: no class bytes for {_test_class(instance_id)}" in output, output[-3000:]
    assert "from its class file" not in output and " read " not in output, output[-3000:]
    assert outcome.results.summary(), outcome.verdict


@pytest.mark.docker
@pytest.mark.parametrize("instance_id", ATTACKED)
def test_control_the_stub_without_the_trick_fails_as_before(instance_id: str, provider, real_dataset, made, ahead):
    outcome = grade_forger(provider, real_dataset, _attacker(made, real_dataset, instance_id, None),
                           source_policy=True)
    assert not outcome.verdict.resolved and outcome.verdict.reason == Reason.TESTS_FAILED, outcome.verdict


@pytest.mark.docker
@pytest.mark.parametrize("variant, names", [("any_loader", ("forName", "getContextClassLoader")),
                                            ("policy_clean", ("openStream",))])
def test_the_source_policy_refuses_the_engines(variant: str, names: tuple, provider, real_dataset, made, ahead):
    outcome = grade_forger(provider, real_dataset, _attacker(made, real_dataset, ATTACKED[0], variant),
                           source_policy=True)
    assert outcome.verdict.reason == Reason.FORBIDDEN_CONSTRUCT, outcome.verdict
    assert all(name in outcome.verdict.detail for name in names), outcome.verdict.detail
