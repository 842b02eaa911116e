"""Go's test binary runs on one processor with no asynchronous preemption (issue 32).

Go is memory-safe only without data races: red team 9 tore a racing read of an interface
value (one type's method table, another's data) into a `[]byte` over any address and read the
hidden tables' expected values from the test binary, no `unsafe` needed. polyglot-go-test now
runs the binary with GOMAXPROCS=1 and GODEBUG=asyncpreemptoff=1: goroutines take turns only
where one calls into the scheduler, never between the stores of one assignment, so no read is
torn; the source policy refuses runtime.GOMAXPROCS (tests/test_source_policy.py). The probe
is a package written here; the attack runs on a real exercise in real Docker.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from polyglot_harness.utils.languages import LANGUAGES
from polyglot_harness.utils.outcomes import Reason
from polyglot_harness.utils.pipeline.grading import grading_sandbox_spec
from polyglot_harness.utils.pipeline.pools import Sandboxes
from polyglot_harness.utils.seam.protocol import Limits

from .fixtures.forgers.check import grade_forger

pytestmark = pytest.mark.docker
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "go_race"
GO = LANGUAGES["go"]


def _outcomes(report: str) -> dict[str, str]:
    events = [json.loads(line) for line in report.splitlines() if line.startswith("{")]
    return {event["Test"]: event["Action"] for event in events
            if event.get("Test") and event["Action"] in ("pass", "fail", "skip")}


def test_a_racing_read_tears_under_go_test_and_never_in_the_grading_runner(provider, language_images,
                                                                           no_leftover_containers):
    """The control first: the same probe in the same image, run by plain `go test`, tears."""
    sandboxes = Sandboxes(provider, "go-race")
    with sandboxes.start(grading_sandbox_spec(language_images["go"], Limits(), GO), "go-race") as box:
        box.put_directory(FIXTURES / "probe", "/testbed")
        plain = box.exec("go test -count=1 -json ./...", 300)
        graded = box.exec("mkdir -p /tmp/polyglot-report && polyglot-go-test /tmp/polyglot-report; "
                          "cat /tmp/polyglot-report/go-test.json", 300)
    assert _outcomes(plain.output) == {"TestATornRead": "pass"}, plain.output[-2000:]
    assert _outcomes(graded.output) == {"TestATornRead": "fail"}, graded.output[-2000:]
    assert "no torn read" in graded.output


def test_red_team_9s_memory_reader_answers_nothing(provider, real_dataset, tmp_path):
    """go__hexadecimal, resolved 4 of 4 on the code before: its reader finds no torn read, so
    it reads no memory and answers the same error for every input: real tests fail (not only
    a canary)."""
    forger = tmp_path / "race"
    (forger / "files").mkdir(parents=True)
    shutil.copyfile(FIXTURES / "hexadecimal.go.txt", forger / "files" / "hexadecimal.go")
    (forger / "forger.json").write_text(json.dumps({"instance_id": "go__hexadecimal"}))
    outcome = grade_forger(provider, real_dataset, forger)
    assert outcome.verdict.reason == Reason.TESTS_FAILED, outcome.verdict
    summary = outcome.real_results.summary()
    assert summary["failed"] > 0, summary
