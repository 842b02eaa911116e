"""The stub's signatures pinned at compile time (issue 32: the solution chooses the compared type).

Rust tests bind the solution's result by inference, so a solution may return a type of its
own whose equality always holds, or that checks the expected value instead of computing one
(rust__alphametics, red team 5): no canary tells such a type from a correct one when its
equality only accepts right answers. Grading appends to a hidden test file a module that
coerces each function the stub and the reference declare alike to the stub's function-pointer
type; a changed signature is a compile error of the tests, `signature_changed`.

Pure tests read small crates written here; the Docker tests grade attackers (solution files
only) on real instances through the real pipeline, with the reference directory as grading
gets it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .fixtures.forgers.check import grade_forger, graded_ahead, reference_copy, selected
from polyglot_harness.utils.languages import java_signatures, rust_signatures
from polyglot_harness.utils.outcomes import Reason

FIXTURES = Path(__file__).resolve().parent / "fixtures"
PINNED_ATTACKS = sorted(path.parent for path in (FIXTURES / "signature_pins").glob("*/*/forger.json"))
# Always-equal solutions written for the canaries (tests/test_type_proof_canaries.py) that
# also change a signature the stub declares: the build stops them first.
# (rust__forth's `stack` is not pinned: its reference's `Value` is i16, the stub's i32.)
RETYPED = ([FIXTURES / "always_equal" / "rust" / name for name in ("gigasecond_any", "scale_notes")]
           + [FIXTURES / "always_equal" / "java" / name for name in ("verse_any", "song_any")])

STUB = '''use std::collections::HashMap;
use crate::inner::Helper; // crate-relative: left out of the probe

pub type Value = i32;

/// a doc comment with a fake `pub fn ghost(x: u8) -> u8`
pub fn solve(input: &str) -> Option<HashMap<char, u8>> {
    todo!("{input}")
}

pub fn best<'a>(hands: &[&'a str]) -> Vec<&'a str> {
    todo!()
}

pub fn generic<T: Clone>(value: T) -> T {
    value
}

pub fn iterate(n: u32) -> impl Iterator<Item = u32> {
    0..n
}

pub struct Forth;

impl Forth {
    pub fn new() -> Self {
        todo!()
    }

    pub fn stack(&self) -> &[Value] {
        todo!()
    }

    pub fn eval(&mut self, input: &str) -> Result<(), String> {
        let braces = '{';
        todo!("{input}{braces}")
    }

    fn private(&self) {}
}

impl std::fmt::Display for Forth {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        todo!()
    }
}
'''


def test_the_stubs_pinnable_signatures_are_read_with_the_receiver_and_self_as_the_type():
    found = rust_signatures.signatures(STUB)
    assert sorted(found) == ["Forth::eval", "Forth::new", "Forth::stack", "best", "solve"]
    assert found["solve"].pointer_type() == "fn(&str) -> Option<HashMap<char, u8>>"
    assert found["best"].pointer_type() == "for<'a> fn(&[&'a str]) -> Vec<&'a str>"
    assert found["Forth::new"].pointer_type() == "fn() -> Forth"
    assert found["Forth::stack"].pointer_type() == "fn(&Forth) -> &[Value]"
    assert found["Forth::eval"].pointer_type() == "fn(&mut Forth, &str) -> Result<(), String>"


def test_only_what_the_reference_declares_alike_is_pinned():
    reference = (STUB.replace("fn solve(input: &str)", "fn solve(puzzle:   &str)")
                 .replace("-> Result<(), String>", "-> ForthResult"))
    pinned = {signature.path for signature in rust_signatures.pinned(STUB, reference)}
    assert pinned == {"solve", "best", "Forth::new", "Forth::stack"}  # eval's type is spelled otherwise
    assert rust_signatures.pinned(STUB, "pub fn other() {}") == []


def test_the_probe_module_coerces_each_pinned_function_and_carries_the_marker():
    module, pinned = rust_signatures.probe_module(STUB, STUB, "forth")
    assert pinned == ("Forth::eval", "Forth::new", "Forth::stack", "best", "solve")
    assert f"mod {rust_signatures.PROBE_MODULE} {{" in module and "use forth::" not in module  # no glob
    assert "use std::collections::HashMap;" in module and "inner::Helper" not in module
    assert ("let _: fn(&str) -> Option<HashMap<char, u8>> = forth::solve; "
            f"// {rust_signatures.PROBE_MODULE}: solve") in module
    assert rust_signatures.probe_module(STUB, "", "forth") == ("", ())


def test_the_probe_writes_the_stubs_types_out_so_no_solution_name_enters_it():
    """Red team 7: the probe imported the crate (`use alphametics::*`), so a solution's
    `pub type Option<T> = Checked<T>;` replaced the prelude's Option in it and the pin held for
    the solution's own type. Now nothing of the crate is imported: the stub's own types are
    written by the crate's path, its aliases by their definitions, the prelude stays std's."""
    module, pinned = rust_signatures.probe_module(STUB, STUB, "forth")
    assert "let _: fn(&forth::Forth) -> &[i32] = forth::Forth::stack;" in module  # `Value` written out
    assert "let _: fn() -> forth::Forth = forth::Forth::new;" in module
    assert "-> Option<HashMap<char, u8>> = forth::solve;" in module
    # An alias the reference defines otherwise is the exercise's freedom: not pinned.
    _, pinned_other = rust_signatures.probe_module(STUB, STUB.replace("pub type Value = i32;", "pub type Value = i16;"), "forth")
    assert "Forth::stack" in pinned and "Forth::stack" not in pinned_other and "Forth::new" in pinned_other
    # A generic alias cannot be written out: what uses it is not pinned.
    generic = STUB.replace("pub type Value = i32;", "pub type Value<T = i32> = T;")
    assert "Forth::stack" not in rust_signatures.probe_module(generic, generic, "forth")[1]


JAVA_STUB = '''import java.util.List;
import java.util.Map;

class Ledger {
    /* String ghost(int x) { return ""; } */
    public LedgerEntry createLedgerEntry(String date, String description, int change) {
        throw new UnsupportedOperationException("{");
    }

    String format(String currency, final String locale, LedgerEntry... entries) {
        return null;
    }

    static Map<String, List<Integer>> table(int size) {
        return null;
    }

    <T> T generic(T value) {
        return value;
    }

    private void helper() {
    }

    Ledger(int size) {
    }

    public static class LedgerEntry {
        public int getChange() {
            return 0;
        }
    }
}
'''


def test_java_the_stubs_methods_are_read_with_nested_types_qualified():
    found = java_signatures.methods(JAVA_STUB)
    assert sorted(found) == ["Ledger.createLedgerEntry(String, String, int)",
                             "Ledger.format(String, String, Ledger.LedgerEntry...)", "Ledger.table(int)"]
    assert found["Ledger.createLedgerEntry(String, String, int)"].returns == "Ledger.LedgerEntry"
    assert found["Ledger.table(int)"].static and found["Ledger.table(int)"].returns == "Map<String, List<Integer>>"


def test_java_the_probe_calls_each_pinned_method_with_the_stubs_types():
    reference = JAVA_STUB.replace("int change)", "int cents)").replace("static Map<String, List<Integer>> table",
                                                                       "static HashMap<String, List<Integer>> table")
    source, pinned = java_signatures.probe_class([JAVA_STUB], [reference])
    assert pinned == ("Ledger.createLedgerEntry(String, String, int)", "Ledger.format(String, String, Ledger.LedgerEntry...)")
    assert "import java.util.List;" in source and f"final class {java_signatures.PROBE_CLASS} {{" in source
    assert ("static Ledger.LedgerEntry m0(Ledger self, String a0, String a1, int a2) throws Exception "
            "{ return self.createLedgerEntry(a0, a1, a2); } "
            f"// {java_signatures.PROBE_MARKER}: Ledger.createLedgerEntry(String, String, int)") in source
    assert "Ledger.LedgerEntry[] a2" in source  # varargs as an array
    assert java_signatures.probe_class([JAVA_STUB], []) == ("", ())
    assert java_signatures.methods("package x;\nclass A { int f() { return 1; } }") == {}


def test_java_a_solution_type_named_like_a_name_the_probe_resolves_is_a_conflict():
    """Red team 7: a default-package `class String` stood in for java.lang.String in the probe
    (and `class java { static class lang { .. } }` would obscure even `java.lang.String`)."""
    stub = "import java.util.List;\nclass Song {\n    String recite(int a) { return null; }\n    List<Integer> all() { return null; }\n}\n"
    honest = "class Song {\n    String recite(int a) { return \"\"; }\n    java.util.List<Integer> all() { return null; }\n}\nclass Verse {}\n"
    assert java_signatures.conflicts([stub], [stub], [honest]) == ()
    assert java_signatures.conflicts([stub], [stub], [honest, "class String {}"]) == ("String",)
    assert java_signatures.conflicts([stub], [stub], [honest, "class java {}", "interface Integer {}"]) == ("Integer", "java")
    assert java_signatures.conflicts([stub], [], [honest, "class String {}"]) == ()  # nothing pinned, nothing resolved


PINNED = {"reference": True, "key": False}
UNPINNED = {"key": False}


@pytest.fixture(scope="module")
def ahead(request, provider, real_dataset, made):
    def control(attack: Path) -> Path:
        return reference_copy(made, real_dataset, json.loads((attack / "forger.json").read_text()))

    with graded_ahead(provider, real_dataset, selected(request, {
        "test_a_solution_that_changes_a_stub_signature_does_not_build": lambda p: [(p["attack"], PINNED)],
        "test_without_the_pins_the_checker_resolves": lambda p: [(p["attack"], UNPINNED)],
        "test_the_reference_with_its_signatures_pinned_resolves": lambda p: [(control(p["attack"]), PINNED)],
    })):
        yield


@pytest.mark.docker
@pytest.mark.parametrize("attack", PINNED_ATTACKS + RETYPED, ids=[p.name for p in PINNED_ATTACKS + RETYPED])
def test_a_solution_that_changes_a_stub_signature_does_not_build(attack: Path, provider, real_dataset, ahead):
    meta = json.loads((attack / "forger.json").read_text())
    outcome = grade_forger(provider, real_dataset, attack, **PINNED)
    assert not outcome.verdict.resolved, outcome.verdict
    assert outcome.verdict.reason == Reason.SIGNATURE_CHANGED, (meta["instance_id"], outcome.verdict)
    assert ("no longer has the stub's signature" in outcome.verdict.detail
            or "a name the stub's signatures use for another type" in outcome.verdict.detail), outcome.verdict


@pytest.mark.docker
@pytest.mark.parametrize("attack", PINNED_ATTACKS, ids=[p.name for p in PINNED_ATTACKS])
def test_without_the_pins_the_checker_resolves(attack: Path, provider, real_dataset, ahead):
    """The negative control: the same files, graded without the reference (nothing pinned),
    resolve: no canary tells a checker of right answers from a solver."""
    outcome = grade_forger(provider, real_dataset, attack, **UNPINNED)
    assert outcome.verdict.resolved, outcome.verdict


@pytest.mark.docker
@pytest.mark.parametrize("attack", PINNED_ATTACKS, ids=[p.name for p in PINNED_ATTACKS])
def test_the_reference_with_its_signatures_pinned_resolves(attack: Path, provider, real_dataset, made, ahead):
    control = reference_copy(made, real_dataset, json.loads((attack / "forger.json").read_text()))
    outcome = grade_forger(provider, real_dataset, control, **PINNED)
    assert outcome.verdict.resolved, outcome.verdict
