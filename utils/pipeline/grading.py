"""Grading: a fresh container, the test-commit tree, the filtered patch, tests un-skipped.

Steps (host side first, so nothing the agent touched is reused):
1. copy the test-commit tree into a directory grading owns;
2. filter the model patch (judging/patches.py) and apply what is kept, with fallbacks; the
   language guard then restores any kept file it rejects (e.g. a Cargo.toml retargeting tests);
   the language's source policy then reads the kept files (pipeline/source_check.py): a
   refused construct is the verdict, `forbidden_construct`, and nothing runs;
3. un-skip the tests (language spec);
4. warm the language's shared build cache once from the pristine tree (utils/build_cache.py),
   copy the tree into a fresh container from the language image (network off), run the
   spec's test command under the test timeout with the report written into a directory
   with a random name, read that report back, and decide with utils/verdict.py.
   Where the language has a trusted process (LanguageSpec.trusted), the solution files are
   copied to SOLUTION_DIR and served by a solution process running as SOLUTION_UID; the test
   process, in /testbed made 0700, never loads solution code (`isolation` says which ran).
"""

from __future__ import annotations

import secrets
import shlex
import shutil
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Mapping

from ..judging.answer_key import judge, observations_by_test, observed_values, parse_observations
from ..judging.canaries import CANARIES_PER_GRADING, Canary, plant, separate
from ..judging.variants import Variant, plant_variants, split_variants
from .build_cache import ensure_warm, reader_env, reader_mounts
from ..languages import LanguageSpec, TrustedProcess, matches_any
from ..outcomes import GradingMode, Isolation, Reason
from ..judging.patches import FilteredPatch, PatchError, TamperRecord, apply_patch, filter_patch, guard_applied_files
from ..judging.regular_files import irregular_entries, read_regular, regular_files
from ..judging.runner_results import FAILED, PASSED, SoloBuildFailure, TestCase, TestResults, solo_build_failure
from ..records.dataset import slug_of
from ..seam.protocol import SOLUTION_UID, ExecResult, Limits, SandboxSpec
from .pools import Sandboxes
from .source_check import refused_constructs
from ..judging.source_policy import summary
from ..judging.verdict import Verdict, decide_separated

TESTBED = "/testbed"
SOLUTION_DIR = "/solution"
# The solution process's HOME and TMPDIR: made by the language image, SOLUTION_UID's own, 0700
# (docker/python/Dockerfile). The image's other writable directories are the runner group's
# alone, so the two processes share nothing writable (docs/verdict.md "Nothing writable shared").
SOLUTION_HOME = "/home/solution"


@dataclass(kw_only=True, frozen=True)
class GradingRequest:
    language: LanguageSpec
    instance_id: str
    test_tree: Path  # the test commit's files, read-only for grading
    patch_text: str
    solution_paths: tuple[str, ...]
    hidden_paths: tuple[str, ...] = ()
    expected_tests: tuple[str, ...] | None = None
    test_timeout: int = 120
    expected_skips: tuple[str, ...] = ()
    grading_mode: GradingMode = GradingMode.TESTS
    # Tests that may become canaries (recorded at preparation); None: plant none.
    canary_sources: tuple[str, ...] | None = None
    plant_all_canaries: bool = False  # preparation: every eligible test at once
    # The patch already filtered by the caller (run_instance filters once per instance);
    # None: grade() filters patch_text itself.
    filtered: FilteredPatch | None = None
    # The instance's reference solution (dataset references/<id>): with the stub and the
    # hidden tests, what the source policy allows for this exercise.
    reference_dir: Path | None = None
    # Read the kept files with the language's source policy before anything runs; off only
    # where a test exercises a later defence on its own (tests/test_forgery.py).
    source_policy: bool = True
    # Fresh variants of real tests (utils/judging/variants.py) planted among them; their cases
    # are set apart before the verdict, which never sees them.
    variants: tuple[Variant, ...] = ()
    # The answer key (LanguageSpec.answer_key, docs/answer-key.md): assertion id -> the reference's
    # renderings, recorded at preparation; its assertions are converted and the binary's
    # observations compared with it. None: nothing converted.
    observation_key: Mapping[str, tuple[str, ...]] | None = None
    # Preparation: convert these ids (an empty set: every candidate) and only record what was
    # observed (GradingOutcome.observations); no comparison.
    observe_only: frozenset[str] | None = None


@dataclass(kw_only=True, frozen=True)
class GradingOutcome:
    verdict: Verdict
    filtered: FilteredPatch | None
    apply_method: str | None
    results: TestResults
    exec_result: ExecResult | None
    eval_script: str
    seconds: float
    guarded: tuple[TamperRecord, ...] = ()  # files the language guard restored after applying
    canaries: tuple[Canary, ...] = ()       # planted for this grading
    # `results` split by utils.canaries.separate: the real tests (names mapped back) and each
    # canary's own case by source.
    real_results: TestResults = TestResults()
    canary_cases: Mapping[str, TestCase] = field(default_factory=dict)
    isolation: Isolation | None = None  # None: nothing ran
    variant_cases: Mapping[str, TestCase] = field(default_factory=dict)  # by Variant.ident
    variants_planted: int = 0
    converted: frozenset[str] = frozenset()  # the assertion ids the answer key converted
    observations: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # what they observed
    # What each planted variant's copy observed (a keyed language's): ident -> id -> renderings.
    variant_observations: Mapping[str, Mapping[str, tuple[str, ...]]] = field(default_factory=dict)


def grading_sandbox_spec(image: str, limits: Limits, language: LanguageSpec) -> SandboxSpec:
    return SandboxSpec(image=image, role="grading", network="none", limits=limits,
                       environment=reader_env(language) + language.image_cache_env,
                       volumes=reader_mounts(language, image))


def grade(sandboxes: Sandboxes, image: str, request: GradingRequest, limits: Limits = Limits(),
          log=lambda message: None) -> GradingOutcome:
    started = time.monotonic()
    filtered: FilteredPatch | None = None
    with tempfile.TemporaryDirectory(prefix="polyglot-grade-") as workdir:
        tree = Path(workdir) / "testbed"
        shutil.copytree(request.test_tree, tree, symlinks=True)
        try:
            filtered = request.filtered or filter_patch(request.patch_text, request.language, request.solution_paths,
                                                        request.hidden_paths)
            if filtered.not_regular:
                return _not_regular(filtered, None, filtered.not_regular, started, log)
            apply_method = apply_patch(tree, filtered.text)
        except PatchError as error:
            log(f"patch did not apply: {error}")
            return GradingOutcome(verdict=Verdict(False, Reason.PATCH_APPLY_FAILED, str(error)), filtered=filtered,
                                  apply_method=None, results=TestResults(), exec_result=None, eval_script="",
                                  seconds=time.monotonic() - started)
        irregular = irregular_entries(tree)
        if irregular:
            return _not_regular(filtered, apply_method, irregular, started, log)
        guarded = guard_applied_files(tree, request.test_tree, request.language, filtered.kept_paths)
        for record in guarded:
            log(f"guard: {record.path} restored ({record.why})")
        refused = source_policy_refusals(tree, request, filtered)
        if refused:
            log(f"source policy: {summary(refused, limit=20)}")
            return GradingOutcome(verdict=Verdict(False, Reason.FORBIDDEN_CONSTRUCT, summary(refused)),
                                  filtered=filtered, apply_method=apply_method, results=TestResults(),
                                  exec_result=None, eval_script="", seconds=time.monotonic() - started,
                                  guarded=guarded)
        unskip_tree(tree, request.language)
        converted = convert_assertions(tree, request)
        if converted:
            log(f"answer key: {len(converted)} assertion(s) converted to observations")
        planted_variants = plant_request_variants(tree, request, converted)  # before the canaries: renamed alike
        planted = plant_canaries(tree, request, planted_variants)
        if planted:
            log(f"planted {len(planted)} canary test(s): {', '.join(canary.source for canary in planted)}")
        pinned, taken = pin_signatures(tree, request)
        if pinned:
            log(f"pinned the stub's signature of {', '.join(pinned)}")
        if taken:
            verdict = Verdict(False, Reason.SIGNATURE_CHANGED,
                              f"the solution declares {', '.join(taken)}, a name the stub's signatures use for another type")
            log(f"verdict {verdict.reason}: {verdict.detail}")
            return GradingOutcome(verdict=verdict, filtered=filtered, apply_method=apply_method, results=TestResults(),
                                  exec_result=None, eval_script="", seconds=time.monotonic() - started, guarded=guarded,
                                  canaries=planted)
        trusted = trusted_process(request)
        eval_script = evaluation_script(request.language, trusted, f"/tmp/report-{secrets.token_hex(8)}")
        report_dir = eval_script.report_dir
        log(f"grading {request.instance_id} in {image} ({eval_script.isolation}): {eval_script.text}")
        ensure_warm(sandboxes, request.language, image, request.test_tree, request.instance_id, limits, log)
        with sandboxes.start(grading_sandbox_spec(image, limits, request.language), request.instance_id) as box:
            box.put_directory(tree, TESTBED)
            if trusted is not None:
                put_solution_files(box, tree, trusted, request.language)
            irregular = irregular_in_sandbox(box)
            if irregular:
                return _not_regular(filtered, apply_method, irregular, started, log)
            if trusted is not None:
                start_solution_process(box, trusted, eval_script.socket, log)
            exec_result = box.exec(eval_script.text, request.test_timeout, workdir=TESTBED, guard_disk=True)
            exec_result = run_what_was_built(box, eval_script, exec_result, request.test_timeout)
            # Nothing the code under test started may touch the report after the run.
            box.stop()
            report = {name: content.decode("utf-8", errors="replace")
                      for directory in (report_dir, eval_script.run_report_dir) if directory
                      for name, content in box.get_files(directory).items()}
    solo = solo_build_failure(report)
    if solo is not None:
        verdict = solo_build_verdict(solo)
        log(f"verdict {verdict.reason}: {verdict.detail}")
        return GradingOutcome(verdict=verdict, filtered=filtered, apply_method=apply_method, results=TestResults(),
                              exec_result=exec_result, eval_script=eval_script.text,
                              seconds=time.monotonic() - started, guarded=guarded, canaries=planted,
                              isolation=eval_script.isolation)
    results = request.language.parse_results(report)
    reported_variants = variant_names(planted_variants, planted)
    observations = observed(report, request, planted, reported_variants)
    variant_observations = observed_by_variant(report, request, reported_variants)
    planter = request.language.canaries
    leaf = planter.leaf if planter else lambda name: None
    real, own = separate(results, planted, leaf,
                         lambda case: request.language.defined_in_hidden(case, request.hidden_paths))
    real, variant_cases = split_variants(real, planted_variants, leaf)
    variant_cases = keyed_variant_cases(variant_cases, request.variants, variant_observations)
    if exec_result.disk_exceeded:
        verdict = Verdict(False, Reason.DISK_LIMIT, f"the test run outgrew the {limits.disk}-byte disk cap and was stopped")
    else:
        verdict = decide_separated(exec_result.exit_code, exec_result.timed_out, real, own, planted,
                                   request.expected_tests, request.expected_skips, request.grading_mode)
        verdict = key_verdict(verdict, request, observations)
        verdict = signature_verdict(verdict, request.language, pinned, exec_result)
    log(f"verdict {verdict.reason}: {verdict.detail} (exit {exec_result.exit_code}, {exec_result.seconds:.1f}s)")
    return GradingOutcome(verdict=verdict, filtered=filtered, apply_method=apply_method, results=results,
                          exec_result=exec_result, eval_script=eval_script.text, seconds=time.monotonic() - started,
                          guarded=guarded, canaries=planted, real_results=real, canary_cases=own,
                          isolation=eval_script.isolation, variant_cases=variant_cases,
                          variants_planted=len(planted_variants), converted=converted, observations=observations,
                          variant_observations=variant_observations)


def pin_signatures(tree: Path, request: GradingRequest) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The stub's signatures the tests' build checks, and the names of them the solution's own
    declarations would take over (LanguageSpec.pin_signatures)."""
    pin = request.language.pin_signatures
    if pin is None or request.grading_mode != GradingMode.TESTS:
        return (), ()
    return pin(tree, request.test_tree, request.reference_dir, request.hidden_paths)


def signature_verdict(verdict: Verdict, language: LanguageSpec, pinned: tuple[str, ...],
                      exec_result: ExecResult) -> Verdict:
    """An unresolved run whose build failed on a pinned signature says so: the solution
    changed the type of a function the stub declares (the tests would have compared a type
    of its choosing)."""
    if verdict.resolved or not pinned or not language.signature_marker:
        return verdict
    named = sorted({path for path in pinned if f"{language.signature_marker}: {path}" in exec_result.output})
    if not named:
        return verdict
    return Verdict(False, Reason.SIGNATURE_CHANGED,
                   f"the solution's {', '.join(named)} no longer has the stub's signature (the tests do not build)")


def convert_assertions(tree: Path, request: GradingRequest) -> frozenset[str]:
    """Rewrite the hidden assertions the key (or, at preparation, the probe) names."""
    answer_key = request.language.answer_key
    if answer_key is None or request.grading_mode != GradingMode.TESTS:
        return frozenset()
    if request.observe_only is not None:
        return answer_key.convert(tree, request.test_tree, request.hidden_paths, request.solution_paths,
                                  request.observe_only or None)
    if not request.observation_key:
        return frozenset()
    return answer_key.convert(tree, request.test_tree, request.hidden_paths, request.solution_paths,
                              frozenset(request.observation_key))


def observed(report: Mapping[str, str], request: GradingRequest, planted: tuple[Canary, ...],
             planted_variants: Mapping[str, str] = {}) -> dict[str, tuple[str, ...]]:
    """The observations of the real tests (a canary's copy observes too, and so does a
    variant's, under the original's ids: left out)."""
    answer_key = request.language.answer_key
    if answer_key is None:
        return {}
    values = observed_values(parse_observations(report.get(answer_key.report_file, "")),
                             frozenset(canary.reported_name for canary in planted) | frozenset(planted_variants))
    return {assertion: tuple(found) for assertion, found in values.items()}


def variant_names(planted_variants: Mapping[str, str], canaries: tuple[Canary, ...]) -> dict[str, str]:
    """{the name a variant's copy runs under: its ident}: the canaries rename every other test
    of their file (Canary.renames), the variants' copies too."""
    names = dict(planted_variants)
    for canary in canaries:
        names.update((hidden, planted_variants[source]) for hidden, source in canary.renames if source in planted_variants)
    return names


def observed_by_variant(report: Mapping[str, str], request: GradingRequest,
                        planted_variants: Mapping[str, str]) -> dict[str, dict[str, tuple[str, ...]]]:
    """What each planted variant's copy observed, by variant ident (its drawn name is the test
    name the observer writes)."""
    answer_key = request.language.answer_key
    if answer_key is None or not planted_variants:
        return {}
    by_test = observations_by_test(parse_observations(report.get(answer_key.report_file, "")), planted_variants)
    return {ident: {assertion: tuple(values) for assertion, values in found.items()} for ident, found in by_test.items()}


def keyed_variant_cases(cases: Mapping[str, TestCase], variants: tuple[Variant, ...],
                        observed_values_by_variant: Mapping[str, Mapping[str, tuple[str, ...]]]) -> dict[str, TestCase]:
    """A keyed variant passes only if its copy observed what the reference did (the host's
    comparison, like the answer key's): Catch's own verdict of it is the solution's to forge."""
    judged = dict(cases)
    for variant in variants:
        case = judged.get(variant.ident)
        if not variant.observations or case is None or case.outcome != PASSED:
            continue
        finding = judge(dict(variant.observations), observed_values_by_variant.get(variant.ident, {}))
        if finding is not None:
            judged[variant.ident] = replace(case, outcome=FAILED, message=f"observation {finding.reason}: {finding.detail}")
    return judged


def key_verdict(verdict: Verdict, request: GradingRequest, observations: Mapping[str, tuple[str, ...]]) -> Verdict:
    """A resolved verdict stands only if every observation matches the key: the report the
    solution could forge says nothing of the converted assertions."""
    if not verdict.resolved or not request.observation_key or request.observe_only is not None:
        return verdict
    finding = judge(request.observation_key, observations)
    if finding is None:
        return verdict
    reason = Reason.OBSERVATION_MISSING if finding.reason == "missing" else Reason.OBSERVATION_MISMATCH
    return Verdict(False, reason, finding.detail)


def solo_build_verdict(solo: SoloBuildFailure) -> Verdict:
    """The verdict when the solution did not build on its own (nothing of it ran)."""
    if solo.needs_tests:
        return Verdict(False, Reason.SOLUTION_NEEDS_TESTS,
                       "the solution builds only with the hidden tests present, not on its own:\n" + solo.log_tail)
    return Verdict(False, Reason.BUILD_OR_RUN_FAILED, "the solution does not build:\n" + solo.log_tail)


@dataclass(frozen=True)
class EvaluationScript:
    text: str  # run as the sandbox's user in TESTBED
    report_dir: str
    isolation: Isolation
    socket: str = ""  # the trusted process's socket (Isolation.TRUSTED_PROCESS only)
    run_text: str = ""  # then, when text exited 0, run as SOLUTION_UID (LanguageSpec.run_command)
    run_report_dir: str = ""


def trusted_process(request: GradingRequest) -> TrustedProcess | None:
    """The language's trusted process when it grades this instance (test-running modes only)."""
    trusted = request.language.trusted
    if trusted is None or request.grading_mode != GradingMode.TESTS or not trusted.applies_to(slug_of(request.instance_id)):
        return None
    return trusted


def evaluation_script(language: LanguageSpec, trusted: TrustedProcess | None, report_dir: str) -> EvaluationScript:
    """The grading command: the report directory 0700 (nothing else may write it); with a
    trusted process, /testbed 0700 too, a private TMPDIR (jest's cache, pytest's and node's
    temporary files: nothing the test process reads is in a directory another uid could ever
    write), and the socket's directory 0711 (the solution process may connect, not list or add)."""
    if trusted is None:
        script = language.test_command.format(report_dir=report_dir)
        run_text, run_report_dir = "", ""
        if language.run_command:
            run_report_dir = f"{report_dir}-run"
            run_text = (f"mkdir -m 700 -p {run_report_dir} && cd {TESTBED} && "
                        + language.run_command.format(report_dir=run_report_dir, build_report_dir=report_dir))
        return EvaluationScript(f"mkdir -m 700 -p {report_dir} && cd {TESTBED} && {script}", report_dir, Isolation.IN_PROCESS,
                                run_text=run_text, run_report_dir=run_report_dir)
    token = secrets.token_hex(8)
    private_tmp, socket = f"/tmp/private-{token}", f"/tmp/bridge-{token}/socket"
    script = trusted.test_command.format(report_dir=report_dir, socket=socket, solution_dir=SOLUTION_DIR)
    prologue = (f"chmod 700 {TESTBED} && mkdir -m 700 -p {report_dir} {private_tmp} && "
                f"mkdir -m 711 {socket.rsplit('/', 1)[0]} && export TMPDIR={private_tmp}")
    return EvaluationScript(f"{prologue} && cd {TESTBED} && {script}", report_dir, Isolation.TRUSTED_PROCESS, socket)


def run_what_was_built(box, eval_script: EvaluationScript, built: ExecResult, timeout: int) -> ExecResult:
    """The language's run_command as SOLUTION_UID, in what is left of the test timeout, when
    its test_command built (exit 0); otherwise the build's result stands."""
    if not eval_script.run_text or built.exit_code != 0 or built.timed_out or built.disk_exceeded:
        return built
    remaining = max(1, int(timeout - built.seconds))
    ran = box.exec(eval_script.run_text, remaining, workdir=TESTBED, guard_disk=True, uid=SOLUTION_UID)
    return replace(ran, output=built.output + ran.output, seconds=built.seconds + ran.seconds,
                               truncated=built.truncated or ran.truncated)


def _not_regular(filtered: FilteredPatch | None, apply_method: str | None, entries: tuple[str, ...], started: float,
                 log) -> GradingOutcome:
    """The verdict when the patch or the tree holds anything but regular files (nothing of it
    is read, copied or run)."""
    detail = (f"{len(entries)} entr{'y' if len(entries) == 1 else 'ies'} not a regular file: "
              + ", ".join(entries[:10]))
    log(f"verdict {Reason.NOT_A_REGULAR_FILE}: {detail}")
    return GradingOutcome(verdict=Verdict(False, Reason.NOT_A_REGULAR_FILE, detail), filtered=filtered, apply_method=apply_method, results=TestResults(),
                          exec_result=None, eval_script="", seconds=time.monotonic() - started)


# Run before any process of the grading starts: everything the sandbox holds where grading
# put files is a regular file or a directory (the host checked its own tree; this checks what
# the sandbox got, whatever the transfer did).
_IRREGULAR_PROBE = f"find {TESTBED} {SOLUTION_DIR} -xdev ! -type f ! -type d -print 2>/dev/null | head -n 10"


def irregular_in_sandbox(box) -> tuple[str, ...]:
    result = box.exec(_IRREGULAR_PROBE, 30)
    return tuple(f"{line} (in the sandbox)" for line in result.output.splitlines() if line.strip())


def put_solution_files(box, tree: Path, trusted: TrustedProcess, language: LanguageSpec) -> None:
    """Copy the solution files (regular files only, read through no link) to SOLUTION_DIR."""
    with tempfile.TemporaryDirectory(prefix="polyglot-solution-") as copy:
        for relative in trusted.solution_files(regular_files(tree), language.is_hidden):
            (Path(copy) / relative).parent.mkdir(parents=True, exist_ok=True)
            (Path(copy) / relative).write_bytes(read_regular(tree, relative))
        box.put_directory(Path(copy), SOLUTION_DIR)


def start_solution_process(box, trusted: TrustedProcess, socket: str, log) -> None:
    """Start the solution process in the background as SOLUTION_UID (it waits for the test
    process's socket), over the files put_solution_files copied."""
    command = trusted.solver_command.format(socket=socket)
    log(f"solution process (uid {SOLUTION_UID}, {SOLUTION_DIR}): {command}")
    box.exec(f"nohup setsid sh -c {shlex.quote(command)} </dev/null >/dev/null 2>&1 &", 30,
             workdir=SOLUTION_DIR, uid=SOLUTION_UID, environment=solution_environment())


def solution_environment() -> dict[str, str]:
    """The solution process writes only where the test process never looks: its own 0700
    home (it has no passwd entry, so HOME would otherwise be unset or /)."""
    return {"HOME": SOLUTION_HOME, "TMPDIR": SOLUTION_HOME}


def source_policy_refusals(tree: Path, request: GradingRequest, filtered: FilteredPatch):
    """The source policy's refusals of the kept files (utils/pipeline/source_check.py)."""
    if not request.source_policy:
        return ()
    return refused_constructs(request.language, tree, request.test_tree, request.reference_dir, filtered.kept_paths,
                              request.solution_paths, request.hidden_paths)


def plant_request_variants(tree: Path, request: GradingRequest, converted: frozenset[str] = frozenset()) -> dict[str, str]:
    """The request's variants among their sources' blocks. Where the answer key rewrote the tests
    (`converted`), a variant's edits apply to its test as the pristine file holds it: a keyed
    variant's edits convert the copy's assertions themselves."""
    planter = request.language.canaries
    if not request.variants or planter is None or planter.mutator is None or request.grading_mode != GradingMode.TESTS:
        return {}
    originals = None
    if converted:
        originals = {path: request.language.unskip_text(path, read_regular(request.test_tree, path).decode(
            "utf-8", errors="surrogateescape")) for path in request.hidden_paths if (request.test_tree / path).is_file()}
    return plant_variants(tree, planter, matches_any, request.variants, planter.mutator.rename, originals=originals)


def plant_canaries(tree: Path, request: GradingRequest, planted_variants: Mapping[str, str] = {}) -> tuple[Canary, ...]:
    """The request's canaries; with `plant_all_canaries`, one for every eligible real test (never
    for a variant planted beside them: `planted_variants`, name planted -> variant)."""
    planter = request.language.canaries
    if planter is None or request.grading_mode != GradingMode.TESTS:
        return ()
    if request.plant_all_canaries:
        return plant(tree, planter, matches_any, None, None, exclude=frozenset(planted_variants))
    if not request.canary_sources:
        return ()
    return plant(tree, planter, matches_any, request.canary_sources, CANARIES_PER_GRADING)



def unskip_tree(tree: Path, language: LanguageSpec) -> list[str]:
    """Apply the language's un-skip transformation in place; returns the rewritten paths."""
    changed = []
    if not language.unskip_globs:
        return changed
    for relative in regular_files(tree):
        if not matches_any(relative, language.unskip_globs):
            continue
        path = tree / relative
        text = read_regular(tree, relative).decode("utf-8", errors="surrogateescape")
        new_text = language.unskip_text(relative, text)
        if new_text != text:
            path.write_text(new_text, encoding="utf-8", errors="surrogateescape")
            changed.append(relative)
    return changed
