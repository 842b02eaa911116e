"""JavaScript graded in a trusted process (issue 24): attackers that change ONLY solution files,
on real exercises, through the project's own grading (real Docker, canaries as recorded).

The test process (jest, the hidden spec, the report) never loads solution code: each solution
module the spec imports is a proxy onto the solution process (docker/javascript/polyglot-bridge).
Each attacker under tests/fixtures/trusted_attackers/javascript/<name>/ is a solution that does
not solve its exercise plus code that, in process, makes the tests pass anyway (those marked
`resolves_in_process` are graded in process too, without canaries, and must resolve there: the
attack is real);
graded in the trusted process every one must end unresolved.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from .fixtures.forgers.check import grade_forger, graded_ahead, selected
from polyglot_harness.utils.languages import LANGUAGES
from polyglot_harness.utils.languages import javascript as javascript_module

ATTACKERS_DIR = Path(__file__).resolve().parent / "fixtures" / "trusted_attackers" / "javascript"
ATTACKERS = sorted(path.parent for path in ATTACKERS_DIR.glob("*/forger.json"))
IDS = [path.name for path in ATTACKERS]


def meta(attacker: Path) -> dict:
    return json.loads((attacker / "forger.json").read_text())


# The bridge's call timeout for attackers that never answer: the mechanism (the call times out,
# its test fails, every later call throws at once) is the same at 5 s as at the production 50 s,
# which the test process would otherwise sit out (~45 s of a CI run). That the production value
# fits inside jest's per-test timeout is pinned below, from the files themselves.
SHORT_CALL_TIMEOUT_MS = "5000"
BRIDGE = Path(__file__).resolve().parent.parent / "docker" / "javascript"


IN_PROCESS = {"canaries": False, "spec_changes": (("trusted", None),)}
TURN_TIMERS = Path(__file__).resolve().parent / "fixtures" / "turn_timers" / "promises_slow_answers"
NODE_TIMERS = {"environment": (("POLYGLOT_BRIDGE_NODE_TIMERS", "1"),)}
SHARED_ROSTER = ATTACKERS_DIR / "shared_roster"
COPIES = {"environment": (("POLYGLOT_BRIDGE_COPIES", "1"),)}


def trusted_options(attacker: Path) -> dict:
    return {"environment": (("POLYGLOT_BRIDGE_CALL_TIMEOUT_MS", SHORT_CALL_TIMEOUT_MS),)} \
        if meta(attacker)["class"] == "never_answers" else {}


@pytest.fixture(scope="module")
def ahead(request, provider, real_dataset):
    with graded_ahead(provider, real_dataset, selected(request, {
        "test_attacker_is_unresolved_in_the_trusted_process": lambda p: [(p["attacker"], trusted_options(p["attacker"]))],
        "test_attacker_resolves_when_graded_in_process": lambda p: [(p["attacker"], IN_PROCESS)],
        "test_the_specs_timers_keep_one_processs_order_however_slow_the_answers":
            lambda p: [(TURN_TIMERS, {}), (TURN_TIMERS, NODE_TIMERS)],
        "test_containers_copied_instead_of_shared_let_a_leaking_solution_resolve": lambda p: [(SHARED_ROSTER, COPIES)],
    })):
        yield


@pytest.mark.docker
@pytest.mark.parametrize("attacker", ATTACKERS, ids=IDS)
def test_attacker_is_unresolved_in_the_trusted_process(attacker: Path, provider, real_dataset, ahead):
    outcome = grade_forger(provider, real_dataset, attacker, **trusted_options(attacker))
    assert outcome.isolation == "trusted_process", outcome.isolation
    assert not outcome.verdict.resolved, f"{attacker.name} ({meta(attacker)['description']}) was graded resolved"
    assert outcome.exec_result is not None and not outcome.exec_result.timed_out, "the tests must fail, not hang"
    # Where the canaries would stop it anyway, the real tests it names must fail on their own.
    failed = {case.name for case in outcome.real_results.cases if case.outcome != "passed"}
    for name in meta(attacker).get("real_tests_fail", ()):
        assert any(case.endswith(name) for case in failed), (attacker.name, name, sorted(failed))


@pytest.mark.docker
@pytest.mark.parametrize("attacker", [a for a in ATTACKERS if meta(a)["resolves_in_process"]],
                         ids=[a.name for a in ATTACKERS if meta(a)["resolves_in_process"]])
def test_attacker_resolves_when_graded_in_process(attacker: Path, provider, real_dataset, ahead):
    """The negative control: the same files beat in-process grading when no canary is planted, so
    the trusted process is what stops them (with canaries, the mutated copies of real tests catch
    some of them in process too: a separate layer, tested in tests/test_forgery.py)."""
    outcome = grade_forger(provider, real_dataset, attacker, **IN_PROCESS)
    assert outcome.isolation == "in_process"
    assert outcome.verdict.resolved, (attacker.name, outcome.verdict)


def test_every_exercise_is_graded_trusted_and_no_solution_process_starts_programs():
    trusted = javascript_module.TRUSTED
    assert LANGUAGES["javascript"].trusted is trusted
    assert trusted.in_process == ()  # grep's program runs in a worker of the solution process
    solver = (BRIDGE / "polyglot-js-solver").read_text()
    assert "exec polyglot-noexec node" in solver and "--allow-exec" not in solver
    assert "require('child_process')" not in (BRIDGE / "polyglot-bridge" / "solver.js").read_text()


def test_the_solution_process_never_gets_the_hidden_spec():
    trusted = LANGUAGES["javascript"].trusted
    tree = ["say.js", "say.spec.js", "lib/helper.js", "package.json", "babel.config.js", "__tests__/x.js", "data/a.test.js"]
    given = trusted.solution_files(tree, LANGUAGES["javascript"].is_hidden)
    assert "say.js" in given and "lib/helper.js" in given
    assert not {"say.spec.js", "__tests__/x.js", "data/a.test.js"} & set(given)


def test_the_bridge_call_timeout_fits_inside_jests_test_timeout():
    """A solution that never answers must fail its test by the bridge's timeout, before jest's."""
    trusted_js = (BRIDGE / "polyglot-bridge" / "trusted.js").read_text()
    runner = (BRIDGE / "polyglot-js-test").read_text()
    call_ms = int(re.search(r"POLYGLOT_BRIDGE_CALL_TIMEOUT_MS\) \|\| (\d+);", trusted_js).group(1))
    jest_ms = int(re.search(r"--testTimeout=(\d+)", runner).group(1))
    assert int(SHORT_CALL_TIMEOUT_MS) < call_ms < jest_ms, (call_ms, jest_ms)


@pytest.mark.docker
def test_the_specs_timers_keep_one_processs_order_however_slow_the_answers(provider, real_dataset, ahead):
    """A correct solution must resolve whatever a round trip between the test and solution
    processes costs (the CI run of 65d422b: javascript__promises' canaried reference run failed
    `race` on a busy machine, and preparation recorded it without canaries). The spec's timers
    count from the start of the turn that set them (polyglot-bridge/turn-timers.js); with Node's
    own, the same solution's slow answers let the 20 ms timer fire before the 0 ms one."""
    outcome = grade_forger(provider, real_dataset, TURN_TIMERS)
    assert outcome.isolation == "trusted_process"
    assert outcome.verdict.resolved, outcome.verdict
    control = grade_forger(provider, real_dataset, TURN_TIMERS, **NODE_TIMERS)
    failed = {case.name.rsplit(" race ", 1)[-1] for case in control.real_results.cases if case.outcome != "passed"}
    assert "resolves with value of the fastest successful promise" in failed, failed


@pytest.mark.docker
def test_containers_copied_instead_of_shared_let_a_leaking_solution_resolve(provider, real_dataset, ahead):
    """The negative control of `shared_roster` (unresolved above): with containers copied across
    the bridge, as before shared.js, the push into the returned roster never reaches the school,
    and a solution without the property the spec tests resolves."""
    outcome = grade_forger(provider, real_dataset, SHARED_ROSTER, **COPIES)
    assert outcome.isolation == "trusted_process"
    assert outcome.verdict.resolved, outcome.verdict
