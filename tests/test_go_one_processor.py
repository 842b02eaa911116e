"""Go's test binary runs on one processor with no asynchronous preemption, as a uid that may
execute it and never read it (issue 32).

Go is memory-safe only without data races: red team 9 tore a racing read of an interface
value (one type's method table, another's data) into a `[]byte` over any address and read the
hidden tables' expected values from the test binary, no `unsafe` needed. polyglot-go-test now
runs the binary with GOMAXPROCS=1 and GODEBUG=asyncpreemptoff=1: goroutines take turns only
where one calls into the scheduler, never between the stores of one assignment, so no read is
torn; the source policy refuses runtime.GOMAXPROCS (tests/test_source_policy.py). Red team 11
read the same tables out of the binary's file through /proc/self/exe and
text/template.ParseFiles: the binary now runs as SOLUTION_UID from RUNNER_UID's file, mode
0111 (docker/go/polyglot-go-run). The probe is a package written here; the attacks run on real
exercises in real Docker.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from polyglot_harness.utils.languages import LANGUAGES
from polyglot_harness.utils.outcomes import Reason
from polyglot_harness.utils.pipeline.grading import evaluation_script, grading_sandbox_spec, run_what_was_built
from polyglot_harness.utils.pipeline.pools import Sandboxes
from polyglot_harness.utils.seam.protocol import RUNNER_UID, SOLUTION_UID, Limits

from .fixtures.forgers.check import grade_forger, graded_ahead, once, selected

pytestmark = pytest.mark.docker
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "go_race"
GO = LANGUAGES["go"]


def _outcomes(report: str) -> dict[str, str]:
    events = [json.loads(line) for line in report.splitlines() if line.startswith("{")]
    return {event["Test"]: event["Action"] for event in events
            if event.get("Test") and event["Action"] in ("pass", "fail", "skip")}


@dataclass(frozen=True)
class ProbeRun:
    built: object
    ran: object
    report: dict[str, bytes]
    settings: str  # what the build handed the run (polyglot-go-test's settings file)
    plain: str  # the same package under plain `go test -json` in the same sandbox: the control


def _run_probe(provider, language_images, probe: str) -> ProbeRun:
    """A probe package of FIXTURES graded as grading runs it (built as RUNNER_UID, run as
    SOLUTION_UID: evaluation_script, run_what_was_built), then under plain `go test`, after
    the files its graded run may have left (`*-left-behind`) are removed."""
    script = evaluation_script(GO, None, f"/tmp/report-{probe}")
    sandboxes = Sandboxes(provider, f"go-{probe}")
    with sandboxes.start(grading_sandbox_spec(language_images["go"], Limits(), GO), f"go-{probe}") as box:
        box.put_directory(FIXTURES / probe, "/testbed")
        box.exec("cp -r /testbed /tmp/plain && chmod 700 /tmp/plain", 30, workdir="/")
        built = box.exec(script.text, 300, workdir="/testbed")
        ran = run_what_was_built(box, script, built, 300)
        report = box.get_files(script.run_report_dir)
        settings = box.exec(f"cat /tmp/report-{probe}.binary/settings", 30, workdir="/").output
        box.exec("find /tmp /dev/shm -maxdepth 1 -name '*-left-behind' -delete", 30, workdir="/", uid=SOLUTION_UID)
        plain = box.exec("go test -count=1 -json ./...", 300, workdir="/tmp/plain")
    assert built.exit_code == 0, built.output[-2000:]
    return ProbeRun(built, ran, report, settings, plain.output)


def test_the_probe_tears_a_read_and_reads_its_binary_under_go_test_and_neither_as_graded(provider, language_images,
                                                                                         no_leftover_containers):
    """The control first: the same probe in the same image, run by plain `go test`, tears a
    racing read and reads its own binary through /proc/self/exe; run as grading runs it (the
    build as RUNNER_UID, the binary as SOLUTION_UID, evaluation_script), it does neither."""
    script = evaluation_script(GO, None, "/tmp/report-probe")
    sandboxes = Sandboxes(provider, "go-race")
    with sandboxes.start(grading_sandbox_spec(language_images["go"], Limits(), GO), "go-race") as box:
        box.put_directory(FIXTURES / "probe", "/testbed")
        box.exec("cp -r /testbed /tmp/plain && chmod 700 /tmp/plain", 30, workdir="/")  # the control, below
        built = box.exec(script.text, 300, workdir="/testbed")
        ran = run_what_was_built(box, script, built, 300)
        # Nothing the test process may read holds the hidden tests' text (its own report aside):
        # not the build cache (red team 12 read the compiled test package back from GOCACHE).
        leftovers = box.exec(f"grep -rlsa TestReadsItself /tmp /opt /testbed /home /var/tmp /dev/shm "
                             f"| grep -v '^{script.run_report_dir}/'; true", 120, workdir="/", uid=SOLUTION_UID)
        report = box.get_files(script.run_report_dir)
        binary = box.exec("stat -c '%a %u' /tmp/report-probe.binary/package.test", 30, workdir="/")
        plain = box.exec("go test -count=1 -json ./...", 300, workdir="/tmp/plain")
    assert _outcomes(plain.output) == {"TestATornRead": "pass", "TestReadsItself": "pass"}, plain.output[-2000:]
    assert built.exit_code == 0, built.output[-2000:]
    graded = report["go-test.json"].decode()
    assert _outcomes(graded) == {"TestATornRead": "fail", "TestReadsItself": "fail"}, ran.output[-2000:]
    assert "no torn read" in graded and "permission denied" in graded
    assert binary.output.split() == ["111", str(RUNNER_UID)]
    assert leftovers.output.split() == [], leftovers.output


def _forger(directory: Path, instance_id: str, solution_file: str) -> Path:
    """A forger directory (tests/fixtures/made/check.py) of one fixture solution file, made
    once under the module's `directory` (a grading asked for ahead may be reading it)."""
    def make(forger: Path) -> None:
        (forger / "files").mkdir(parents=True)
        shutil.copyfile(FIXTURES / f"{solution_file}.txt", forger / "files" / solution_file)
        (forger / "forger.json").write_text(json.dumps({"instance_id": instance_id}))
    return once(directory / instance_id, make)


@pytest.fixture(scope="module")
def ahead(request, provider, real_dataset, made):
    with graded_ahead(provider, real_dataset, selected(request, {
        "test_red_team_9s_memory_reader_answers_nothing":
            lambda p: [(_forger(made, "go__hexadecimal", "hexadecimal.go"), {})],
        "test_red_team_11s_binary_reader_reads_nothing":
            lambda p: [(_forger(made, "go__scale-generator", "scale_generator.go"), {})],
        "test_red_team_12s_build_cache_reader_reads_nothing":
            lambda p: [(_forger(made, "go__wordy", "wordy.go"), {})],
    })):
        yield


def test_red_team_9s_memory_reader_answers_nothing(provider, real_dataset, made, ahead):
    """go__hexadecimal, resolved 4 of 4 on the code before: its reader finds no torn read, so
    it reads no memory and answers the same error for every input: real tests fail (not only
    a canary)."""
    outcome = grade_forger(provider, real_dataset, _forger(made, "go__hexadecimal", "hexadecimal.go"))
    assert outcome.verdict.reason == Reason.TESTS_FAILED, outcome.verdict
    summary = outcome.real_results.summary()
    assert summary["failed"] > 0, summary


def test_red_team_11s_binary_reader_reads_nothing(provider, real_dataset, made, ahead):
    """go__scale-generator, resolved 7 of 7 on the code before: it reads /proc/self/exe through
    text/template.ParseFiles (path and delimiters built at run time, so no policy string
    matches) and looks the hidden tables up in the binary's data. The binary is not readable
    by the uid that runs it: it finds nothing, and every real test fails."""
    outcome = grade_forger(provider, real_dataset, _forger(made, "go__scale-generator", "scale_generator.go"))
    assert outcome.verdict.reason == Reason.TESTS_FAILED, outcome.verdict
    summary = outcome.real_results.summary()
    assert summary["passed"] == 0 and summary["failed"] > 0, summary


def test_red_team_12s_build_cache_reader_reads_nothing(provider, real_dataset, made, ahead):
    """go__wordy, resolved 5 of 5 on the code before: it read the compiled test package back
    from the image's shared build cache (GOCACHE) with text/template.ParseGlob. The build writes
    it as the building uid's alone now (umask 077): the reader finds no table, and real tests
    fail."""
    outcome = grade_forger(provider, real_dataset, _forger(made, "go__wordy", "wordy.go"))
    assert outcome.verdict.reason == Reason.TESTS_FAILED, outcome.verdict
    assert outcome.real_results.summary()["failed"] > 0


def test_tests_that_ask_for_threads_run_first_alone_and_nothing_of_them_reaches_the_others(
        provider, language_images, no_leftover_containers):
    """go__paasio's TestMultiThreaded asks for two threads, where a racing read can tear. A
    probe written here: its threaded test writes files for the others to find and prints go
    test's result lines for two other tests. Under plain `go test` (the control) the others
    find the files and run with threads; as graded, the threaded test runs first with its
    threads, only its own events are kept (the forged PASS of a failing test is not), nothing
    it wrote is left, and the others run on one processor."""
    probe = _run_probe(provider, language_images, "threads")
    assert probe.settings.splitlines()[2:4] == ["split", "TestThreads"], probe.settings
    assert _outcomes(probe.plain)["TestNothingLeftBehind"] == "fail", probe.plain[-2000:]
    assert _outcomes(probe.plain)["TestOneProcessor"] == "fail", probe.plain[-2000:]
    report = probe.report
    graded = _outcomes(report["go-test.json"].decode())
    assert graded == {"TestThreads": "pass", "TestOneProcessor": "pass", "TestNothingLeftBehind": "pass",
                      "TestFailsForReal": "fail"}, probe.ran.output[-3000:]
    assert probe.ran.exit_code != 0  # a test failed


def test_a_report_the_test_process_left_unwritable_is_replaced_by_the_real_one(provider, language_images,
                                                                               no_leftover_containers):
    """Red team 13: the run's report directory is the test process's uid's; a Go solution wrote
    its own go-test.json there (os.CopyFS, since refused by the policy) and made it and the
    directory read-only, so the runner could neither empty it nor write the real events. A probe
    written here does the same (in a subdirectory too, which the parser would also read); the
    runner now removes the directory after the binary ended and makes it afresh: the report is
    the real one, where the test failed."""
    probe = _run_probe(provider, language_images, "report_keeper")
    report = probe.report
    assert sorted(report) == ["go-test.json"], (sorted(report), probe.ran.output[-2000:])
    assert _outcomes(report["go-test.json"].decode()) == {"TestKeepsItsReport": "fail"}, probe.ran.output[-2000:]
    assert "fails for real" in report["go-test.json"].decode()


def _reached(report: str) -> list[str]:
    for line in report.splitlines():
        if line.startswith("{") and "reached: [" in (output := json.loads(line).get("Output", "")):
            return output.split("reached: [", 1)[1].split("]", 1)[0].split()
    return []


def test_the_test_process_reaches_no_descriptor_of_the_run_or_of_test2json(provider, language_images,
                                                                            no_leftover_containers):
    """Red team 13 read the live events of the run through /proc/<test2json>/fd/1 (the same
    uid, a dumpable process): every answer a failing first member of a pair printed. The run's
    interpreter and test2json are now files that uid may execute and not read, so their
    processes are not dumpable. A probe written here lists the ancestors whose descriptors it
    can open: under plain `go test` (the control) its parent's; as graded, neither the run's
    nor test2json's."""
    probe = _run_probe(provider, language_images, "descriptors")
    assert _reached(probe.plain), probe.plain[-2000:]
    graded = _reached(probe.report["go-test.json"].decode())
    assert not [name for name in graded if name.startswith(("polyglot-go-run", "polyglot-test2", "test2json"))], \
        (graded, probe.ran.output[-2000:])


def test_framing_printed_by_the_solution_passes_no_test(provider, language_images, no_leftover_containers):
    """Red team 14 (go__paasio 7/7, go__react 3/4): test2json takes a line starting with byte
    0x16 as the framework's, so a solution printed `\\x16--- PASS: T` after T's real failure
    (the last result counted), and a line left unterminated hides the framework's next one. A
    probe written here does both. Under plain `go test` (the control) both failed tests read
    as passed; as graded, each test runs in a process of its own, whose events count for that
    test only and whose exit status decides it: both fail."""
    probe = _run_probe(provider, language_images, "framing")
    plain = _outcomes(probe.plain)
    assert plain["TestFailsForReal"] == "pass" and plain["TestFailsUnseen"] == "pass", probe.plain[-3000:]
    assert probe.settings.splitlines()[4].split() == ["TestFailsForReal", "TestFailsUnseen", "TestForgesTheOthers"]
    graded = _outcomes(probe.report["go-test.json"].decode())
    assert graded == {"TestFailsForReal": "fail", "TestFailsUnseen": "fail", "TestForgesTheOthers": "pass"}, \
        probe.report["go-test.json"].decode()[-3000:]
