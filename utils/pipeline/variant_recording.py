"""Recording fresh variants at preparation (issue 35; utils/judging/variants.py).

For every instance of a language with a variant deriver (`LanguageSpec.variants`) whose reference resolved:
1. every test's candidates (one input changed) are planted as probes on the reference solution,
   in the grading image, through grading itself (`GradingRequest.variants`): a probe reports
   the value the reference returns for the new input (or, for an error test, passes when the
   reference still raises alike);
2. per test, the first candidate whose observed value is a plain literal (`is_plain_literal`,
   at most MAX_LITERAL characters) within the word the tests compute in becomes the variant,
   the value written back as the language's literal, whether or not it equals the original's
   expected value (a rule keeping only changed answers tells a yes/no test's answer);
3. the chosen variants are planted as they will be at grading, among every canary, in the
   reference run that records the expected tests (utils/pipeline/expected_tests.py): only those
   it passes are kept (the answer was the same over two runs, and the literal states it). When
   that run does not resolve, it is recorded again without them and they are confirmed in a
   run of their own (`confirm_apart`), as before the two were one run.
Per exercise, how many tests gave a variant and why the others did not (`variant_counts`).
"""

from __future__ import annotations

import json
import random
import secrets
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping

from ..judging import variants as v
from ..judging.canaries import test_files
from ..judging.regular_files import read_regular
from ..outcomes import GradingMode
from ..judging.runner_results import PASSED
from ..languages import matches_any
from ..records.dataset import Instance
from ..records.instance_repo import checkout_commit
from .grading import GradingOutcome, GradingRequest, grade
from .pools import Sandboxes

REDRAWS = 4  # draws of a test's candidates while all of them changed a named cluster


@dataclass(frozen=True)
class VariantRecord:
    instance_id: str
    variants: tuple[v.Variant, ...]
    counts: Mapping[str, int] = field(default_factory=dict)  # reason -> tests
    seconds: float = 0.0


def test_texts(instance: Instance, tree: Path) -> dict[str, str]:
    """The test files of `tree` as grading plants variants in them: un-skipped (a Java
    `@Disabled` between `@Test` and the method is inside the pristine test's span; jest's
    `xtest(` is no test unit)."""
    texts = {}
    for path in test_files(tree, instance.language_spec.canaries, matches_any):
        relative = path.relative_to(tree).as_posix()
        texts[relative] = instance.language_spec.unskip_text(relative, read_regular(tree, relative).decode(
            "utf-8", errors="surrogateescape"))
    return texts


def candidates_of(instance: Instance, tree: Path, secret: str | None = None,
                  observation_key: Mapping[str, tuple[str, ...]] | None = None) -> dict[str, list[v.Candidate]]:
    """Every test's candidates, drawn from a generator seeded by a secret drawn for this
    recording (never from the instance and the test alone: a solution that runs this code on the
    public tests would know every variant's input, red team 3), the instance and the test. The
    record is kept in the recordings cache, so a resumed preparation keeps its variants. A
    candidate that changed a cluster the test's name names (`variants.keeps_named_clusters`)
    or a word of the exercise's vocabulary (`variants.keeps_vocabulary`), or an integer argument
    outside the range the tests write there (`variants.keeps_argument_range`), or a call another
    test makes (`variants.keeps_fresh`) is dropped, and a
    test all of whose candidates were is drawn again, up to REDRAWS times. `observation_key`:
    the answer key observed so far (a language whose variants copy keyed assertions)."""
    planter = instance.language_spec.canaries
    secret = secret if secret is not None else secrets.token_hex(16)
    found: dict[str, list[v.Candidate]] = {}
    texts = test_texts(instance, tree)
    derive = _derive_for(instance, tree, texts, observation_key)
    every_test = "\n".join(texts.values())
    for text in texts.values():
        for unit in planter.find_units(text):
            source, clusters = text[unit.start:unit.end], v.named_clusters(unit.name)
            for draw in range(REDRAWS):
                rng = random.Random(f"{secret}:{instance.instance_id}:{unit.name}" + (f":{draw}" if draw else ""))
                drawn = derive(source, unit.name, rng)
                found[unit.name] = [candidate for candidate in drawn if _in_domain(
                    candidate, source, clusters, every_test)]
                if found[unit.name] or not drawn:
                    break
    return found


def _derive_for(instance: Instance, tree: Path, texts: Mapping[str, str],
                observation_key: Mapping[str, tuple[str, ...]] | None):
    """The language's `derive`, made for this instance where it needs more than a test's text."""
    deriver = instance.language_spec.variants
    if deriver.for_instance is None:
        return deriver.derive
    stubs = [read_regular(tree, path).decode("utf-8", errors="replace") for path in instance.solution_paths
             if (tree / path).is_file()]
    return deriver.for_instance(texts, stubs, observation_key)


def _in_domain(candidate: v.Candidate, source: str, clusters: set[str], every_test: str) -> bool:
    text, edit = candidate.changed_input
    text = source if text is None else text  # Go's input sits in its table's entry
    old, new = text[edit[0]:edit[1]], edit[2]
    return (v.keeps_named_clusters(clusters, old, new) and v.keeps_vocabulary(every_test, old, new)
            and v.keeps_argument_range(every_test, text, edit)
            and v.keeps_fresh(every_test, text, edit))


def stated_bound(instance: Instance, tree: Path) -> int:
    """The largest integer the test files state (`variants.within_stated_range`)."""
    return max(v.stated_integers("\n".join(test_texts(instance, tree).values())), default=0)


def choose(candidates: Mapping[str, list[v.Candidate]], cases: Mapping[str, object],
           read: Callable[[str], tuple[object, str] | None], bound: int,
           observations: Mapping[str, Mapping[str, tuple[str, ...]]] | None = None
           ) -> tuple[dict[str, v.Variant], Counter]:
    """Per test, the first candidate that qualifies (its probe's case in `cases`, keyed
    `test#index`; `read`: the language's reader of an observed value; `bound`: the largest
    integer the tests state; `observations`: a keyed language's probes' observations, by the
    same keys, read instead of the cases' failure messages), and for the others why the last
    one did not."""
    chosen, reasons = {}, Counter()
    for test, options in candidates.items():
        reason = v.NO_INPUT
        for index, candidate in enumerate(options):
            key = f"{test}#{index}"
            observed = (v.observed_literal(cases.get(key)) if observations is None
                        else v.observed_key(cases.get(key), observations.get(key, {})))
            variant, reason = _judge(candidate, observed, read, bound)
            if variant is not None:
                chosen[test] = variant
                break
        if test not in chosen:
            reasons[reason] += 1
    return chosen, reasons


def _judge(candidate: v.Candidate, observed: tuple[str | None, str], read: Callable[[str], tuple[object, str] | None],
           bound: int) -> tuple[v.Variant | None, str]:
    if candidate.expected is None:
        # An error test's variant states only that a new input is refused, and whether it is
        # depends on where the reference draws its domain: python__affine-cipher's reference
        # refuses `decode("Test", 79, 5)` (79 is coprime with 26, but above it), an honest
        # solution decodes it (the CI run of 2026-11-28). A memorizer that refuses every
        # unknown input passes it anyway (red team 3). So only values are kept.
        return None, v.ERROR_TEST
    literal, reason = observed
    if literal is None:
        return None, reason
    read_back = read(literal)
    if read_back is None:
        return None, v.NOT_A_LITERAL
    value, written = read_back
    if not v.is_plain_literal(value) or len(written) > v.MAX_LITERAL:
        return None, v.NOT_A_LITERAL
    # A variant whose answer is its source's is kept too: were only changed answers kept, a
    # yes/no test's variant would answer the negation of its source's, and a memorizer would
    # read it off its table (independent red team, 2026-11-28: queen-attack, triangle,
    # state-of-tic-tac-toe and connect resolved on variants without solving).
    # The word the exercise computes in is also the one its own answers need: a keyed answer's
    # rendering may hold integers the tests never spell (cpp__gigasecond's ptime in ticks).
    bound = max([bound, *v.stated_integers(json.dumps(candidate.original, default=str))])
    new_input = candidate.changed_input[1][2]
    if not v.within_stated_range((new_input, written), bound):
        return None, v.BEYOND_STATED
    if not v.keeps_selection(new_input, candidate.original, value):
        return None, v.SELECTION_CHANGED
    return candidate.variant(written), v.KEPT


@dataclass(frozen=True)
class Drawn:
    """An instance's variants chosen from its probe run, not yet confirmed by a second run."""
    instance_id: str
    chosen: Mapping[str, v.Variant]  # test -> its variant
    reasons: Counter
    seconds: float = 0.0
    # The answer key the probes were observed with (their copies need its observer in the file).
    observation_key: Mapping[str, tuple[str, ...]] | None = None


def draw(sandboxes: Sandboxes, image: str, instance: Instance, patch: str, test_timeout: int = 300,
         observation_key: Mapping[str, tuple[str, ...]] | None = None) -> Drawn:
    """Steps 1 and 2: every test's candidates probed on the reference, the first that
    qualifies chosen per test. `observation_key`: the answer key's first observations (a keyed
    language's probes copy keyed assertions, observed beside them)."""
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="polyglot-variants-") as workdir:
        tree = Path(workdir) / "tree"
        checkout_commit(instance.grading_repo_dir, instance.test_commit, tree)
        candidates = candidates_of(instance, tree, observation_key=observation_key)
        probes = tuple(candidate.probe(f"{test}#{index}") for test, options in candidates.items()
                       for index, candidate in enumerate(options) if candidate.expected is not None)
        first = _grade(sandboxes, image, instance, tree, patch, probes, test_timeout, observation_key) if probes else None
        keyed = instance.language_spec.answer_key is not None and instance.language_spec.variants.keyed
        chosen, reasons = choose(candidates, first.variant_cases if first else {}, instance.language_spec.variants.read,
                                 stated_bound(instance, tree),
                                 (first.variant_observations if first else {}) if keyed else None)
    return Drawn(instance.instance_id, chosen, reasons, time.monotonic() - started, observation_key)


def confirmed(drawn: Drawn, cases: Mapping[str, object], seconds: float = 0.0) -> VariantRecord:
    """Step 3: the chosen variants the reference passed again (`cases`: that run's variant
    cases, whether they were planted alone or among the canaries of the reference run)."""
    kept = tuple(variant for test, variant in drawn.chosen.items() if test in cases and cases[test].outcome == PASSED)
    reasons = Counter(drawn.reasons)
    reasons[v.KEPT] += len(kept)
    reasons[v.NOT_DETERMINISTIC] += len(drawn.chosen) - len(kept)
    return VariantRecord(drawn.instance_id, kept, {k: n for k, n in sorted(reasons.items()) if n}, drawn.seconds + seconds)


def confirm_apart(sandboxes: Sandboxes, image: str, instance: Instance, patch: str, drawn: Drawn,
                  test_timeout: int = 300) -> VariantRecord:
    """Step 3 in a run of its own: the reference with the chosen variants alone (when they could
    not be confirmed in the reference run with every canary)."""
    if not drawn.chosen:
        return confirmed(drawn, {})
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="polyglot-variants-") as workdir:
        tree = Path(workdir) / "tree"
        checkout_commit(instance.grading_repo_dir, instance.test_commit, tree)
        cases = _grade(sandboxes, image, instance, tree, patch, tuple(drawn.chosen.values()), test_timeout,
                       drawn.observation_key).variant_cases
    return confirmed(drawn, cases, time.monotonic() - started)


def within_key(record: VariantRecord, observation_key: Mapping[str, tuple[str, ...]] | None) -> VariantRecord:
    """The keyed variants whose assertions are all still in the answer key once it was found
    stable (`expected_tests.stable_key`): grading converts only the key's assertions, and a
    copy observing one the file no longer converts would lack the observer (a build error
    that loses every test of the file)."""
    if observation_key is None or not any(variant.observations for variant in record.variants):
        return record
    kept = tuple(variant for variant in record.variants
                 if all(assertion in observation_key for assertion, _ in variant.observations))
    counts = Counter(record.counts)
    counts[v.KEPT] -= len(record.variants) - len(kept)
    counts[v.NOT_DETERMINISTIC] += len(record.variants) - len(kept)
    return VariantRecord(record.instance_id, kept, {k: n for k, n in sorted(counts.items()) if n}, record.seconds)


def failed(instance: Instance) -> VariantRecord:
    """An instance whose recording raised: no variants, counted, never cached (a rerun retries)."""
    return VariantRecord(instance.instance_id, (), {v.RECORDING_FAILED: 1})


def _grade(sandboxes: Sandboxes, image: str, instance: Instance, tree: Path, patch: str,
           variants: tuple[v.Variant, ...], test_timeout: int,
           observation_key: Mapping[str, tuple[str, ...]] | None = None) -> GradingOutcome:
    """The reference graded with `variants` planted (no canaries; the answer key's assertions
    converted where there is one): each variant's case and observations."""
    request = GradingRequest(language=instance.language_spec, instance_id=instance.instance_id, test_tree=tree, patch_text=patch, solution_paths=instance.solution_paths,
                             hidden_paths=instance.hidden_paths, test_timeout=test_timeout, grading_mode=instance.grading_mode,
                             reference_dir=instance.reference_dir, variants=variants, observation_key=observation_key)
    return grade(sandboxes, image, request)


def eligible(instance: Instance) -> bool:
    """Variants are recorded where the language derives them and the instance runs tests."""
    return instance.language_spec.variants is not None and instance.grading_mode == GradingMode.TESTS
