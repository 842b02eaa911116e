"""Hidden tests gone, no exec, nothing outlives the test binary (issue 25, layers 1 and 2).

In go, rust, java and cpp the grading runner (docker/<lang>/polyglot-*-test) compiles the
hidden tests, deletes their sources, and only then starts the test binary, through
polyglot-noexec (docker/shared/polyglot-noexec.c): a seccomp filter refuses exec (unless the
hidden tests start programs themselves), reaching other processes and leaving the process
group; the group is killed when the binary ends, and the runner writes the report only then.

The attackers under tests/fixtures/hidden_gone/<language>/<name>/ change solution files only,
on real exercises; each resolved against main's runners (see its forger.json). Graded by the
project's own pipeline each must end unresolved with the reason its forger.json names
(`tests_failed`: the tests ran for real and nothing forged reached the report; a forgery that
reached it would meet the canaries instead) and, where the runner shows the test process's
console, with the attacker's own line saying what stopped it.

In python and javascript the hidden tests never reach solution code (the trusted process of
issue 24); the solution process runs under the same launcher, and so does pytest for a python
exercise graded in process: `<language>/starts_program` computes correct answers in a program it
starts, and resolves only where the launcher is left out (the control below).
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest

from .fixtures.forgers.check import grade_forger, graded_ahead, selected
from polyglot_harness.utils.languages import LANGUAGES

pytestmark = pytest.mark.docker

ATTACKERS_DIR = Path(__file__).resolve().parent / "fixtures" / "hidden_gone"
ATTACKERS = sorted(path.parent for path in ATTACKERS_DIR.glob("*/*/forger.json"))
LAUNCHER_LANGUAGES = ("go", "rust", "java", "cpp", "python", "javascript")


IN_PROCESS = (("trusted", None),)
PLAIN_PYTEST = LANGUAGES["python"].test_command.replace("polyglot-python-test ", "python3 -m pytest ", 1)


@pytest.fixture(scope="module")
def ahead(request, provider, real_dataset):
    starts_program = ATTACKERS_DIR / "python" / "starts_program"
    with graded_ahead(provider, real_dataset, selected(request, {
        "test_attacker_finds_no_hidden_source_and_cannot_exec": lambda p: [(p["attacker"], {})],
        "test_python_in_process_runs_pytest_under_the_launcher": lambda p: [
            (starts_program, {"spec_changes": IN_PROCESS}),
            (starts_program, {"spec_changes": IN_PROCESS + (("test_command", PLAIN_PYTEST),)})],
    })):
        yield


@pytest.mark.parametrize("attacker", ATTACKERS, ids=[f"{p.parent.name}/{p.name}" for p in ATTACKERS])
def test_attacker_finds_no_hidden_source_and_cannot_exec(attacker: Path, provider, real_dataset, ahead):
    meta = json.loads((attacker / "forger.json").read_text())
    outcome = grade_forger(provider, real_dataset, attacker)
    key = f"{attacker.parent.name}/{attacker.name}"
    assert not outcome.verdict.resolved, f"{key} ({meta['description']}) was graded resolved"
    assert outcome.canaries, f"{key}: no canary was planted into {meta['instance_id']}"
    assert str(outcome.verdict.reason) in meta["reasons"], (key, outcome.verdict)
    output = outcome.exec_result.output if outcome.exec_result else ""
    for evidence in meta["evidence"]:
        assert evidence in output, (key, evidence, output[-2000:])


LAUNCHER_PROBE = r"""
cd /tmp
polyglot-noexec sh -c '/bin/true; echo "exec=$?"'
polyglot-noexec --allow-exec sh -c '/bin/true; echo "allowed exec=$?"'
polyglot-noexec sh -c 'kill -0 $PPID 2> /dev/null; echo "signal parent=$?"'
polyglot-noexec sh -c '(while :; do :; done) & echo "looping child $!"'
sleep 0.3
if ps -eo args | grep -q '^sh -c (while'; then echo "child survived"; else echo "child gone"; fi
"""


@pytest.mark.parametrize("language", LAUNCHER_LANGUAGES)
def test_test_binary_cannot_exec_signal_its_parent_or_outlive_itself(language: str, language_images, sandboxes):
    from polyglot_harness.utils.pipeline.grading import grading_sandbox_spec
    from polyglot_harness.utils.languages import LANGUAGES
    from polyglot_harness.utils.seam.protocol import Limits

    with sandboxes.start(grading_sandbox_spec(language_images[language], Limits(), LANGUAGES[language]),
                         f"launcher-{language}") as box:
        result = box.exec(LAUNCHER_PROBE, 60, workdir="/")
    output = result.output
    assert re.search(r"^exec=126$", output, re.M), output  # sh: /bin/true: Operation not permitted
    assert "Operation not permitted" in output, output
    assert re.search(r"^allowed exec=0$", output, re.M), output
    assert re.search(r"^signal parent=1$", output, re.M), output
    assert "looping child" in output and "child gone" in output, output


# The same solution processes started without the launcher: what the starts_program attackers
# would get without it.
WITHOUT_LAUNCHER = {
    "python": "python3 -I -m polyglot_bridge.solver {socket}",
    "javascript": "NODE_PATH=/opt/polyglot-js/node_modules node /opt/polyglot-js/polyglot-bridge/solver.js {socket}",
}


@pytest.mark.parametrize("language", sorted(WITHOUT_LAUNCHER))
def test_a_solution_that_starts_programs_resolves_only_without_the_launcher(language: str, provider, real_dataset,
                                                                            monkeypatch):
    """The control of `<language>/starts_program`: its answers are right, so it is the launcher
    (and nothing else) that makes it lose."""
    spec = LANGUAGES[language]
    monkeypatch.setitem(LANGUAGES, language, dataclasses.replace(
        spec, trusted=dataclasses.replace(spec.trusted, solver_command=WITHOUT_LAUNCHER[language])))
    outcome = grade_forger(provider, real_dataset, ATTACKERS_DIR / language / "starts_program")
    assert outcome.isolation == "trusted_process" and outcome.verdict.resolved, outcome.verdict


def test_python_in_process_runs_pytest_under_the_launcher(provider, real_dataset, ahead):
    """An exercise kept in process (python__paasio) or grading with the trusted process off: the
    solution shares pytest's process, which the launcher starts; with plain pytest it resolves."""
    attacker = ATTACKERS_DIR / "python" / "starts_program"
    outcome = grade_forger(provider, real_dataset, attacker, spec_changes=IN_PROCESS)
    assert outcome.isolation == "in_process" and not outcome.verdict.resolved, outcome.verdict
    assert "Operation not permitted" in outcome.exec_result.output, outcome.exec_result.output[-2000:]
    assert PLAIN_PYTEST != LANGUAGES["python"].test_command
    outcome = grade_forger(provider, real_dataset, attacker, spec_changes=IN_PROCESS + (("test_command", PLAIN_PYTEST),))
    assert outcome.isolation == "in_process" and outcome.verdict.resolved, outcome.verdict
