"""Rust: cargo test, read back from libtest's --logfile."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import replace
from pathlib import Path

from ..judging import runner_results, tree_facts
from ..judging.source_facts import ID, PUNCT, STR, Fact, Token, TokenList, matching, name_facts, string_facts
from ..judging.regular_files import is_regular, read_regular
from ..judging.source_policy import (DIRECTIVE, INTROSPECTION, NAME, PROCESS_CONTROL, STRING, TEST_FRAMEWORK,
                                     TEST_SOURCES, SourcePolicy, rules)
from ..judging.canaries import (Assertion, Canary, Leaf, LiteralSyntax, Mutator, Planter, Symbol, TestUnit, brace_scopes,
                                apply_edits, built_point, call_arguments, constant_point, matching_brace,
                                same_up_to_literals)
from ..judging.answer_key import AnswerKey
from . import rust_key, rust_signatures, rust_variants
from .spec import COMMON_ARTIFACTS, LanguageSpec, no_unskip, origin_is_file

# --- guard ------------------------------------------------------------------------------

# Cargo.toml is a solution file (agents may add crates), but only dependency tables may
# change: targets, build scripts, path/git sources or patches could replace the hidden tests.
_CARGO_ALLOWED_TABLES = {"package", "dependencies", "dev-dependencies", "features"}
_CARGO_FORBIDDEN_PACKAGE_KEYS = {"build", "links", "autotests", "autobins", "autoexamples", "autobenches",
                                 "default-run", "workspace"}


def guard_cargo_manifest(path: str, content: bytes) -> str | None:
    if path != "Cargo.toml":
        return None
    import tomllib

    try:
        manifest = tomllib.loads(content.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        return "unreadable_manifest"
    extra_tables = set(manifest) - _CARGO_ALLOWED_TABLES
    if extra_tables:
        return f"manifest_table:{','.join(sorted(extra_tables))}"
    forbidden = _CARGO_FORBIDDEN_PACKAGE_KEYS & set(manifest.get("package", {}))
    if forbidden:
        return f"manifest_key:{','.join(sorted(forbidden))}"
    for table in ("dependencies", "dev-dependencies"):
        for name, requirement in manifest.get(table, {}).items():
            if isinstance(requirement, dict) and {"path", "git"} & set(requirement):
                return f"manifest_source:{name}"
    return None


# --- the stub's signatures, pinned (utils/languages/rust_signatures.py) --------------------

def pin_signatures(tree: Path, test_tree: Path, reference_dir: Path | None,
                   hidden_paths: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Append the probe of the stub's signatures the reference shares to the first hidden test
    file; the pinned paths (none without a reference, a stub or a test file), and no names a
    solution could take over (the probe imports nothing of the crate)."""
    tests = sorted(path for path in hidden_paths if path.startswith("tests/") and path.endswith(".rs")
                   and is_regular(tree, path))
    if reference_dir is None or not tests or not all(is_regular(root, relative) for root, relative in (
            (test_tree, "src/lib.rs"), (test_tree, "Cargo.toml"), (reference_dir, "src/lib.rs"))):
        return (), ()
    import tomllib

    try:
        package = tomllib.loads(read_regular(test_tree, "Cargo.toml").decode("utf-8"))["package"]["name"]
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, KeyError, TypeError):
        return (), ()
    stub, reference = (read_regular(root, "src/lib.rs").decode("utf-8", errors="replace")
                       for root in (test_tree, reference_dir))
    module, pinned = rust_signatures.probe_module(stub, reference, str(package).replace("-", "_"))
    if pinned:
        target = tree / tests[0]
        target.write_bytes(read_regular(tree, tests[0]) + b"\n" + module.encode("utf-8"))
    return pinned, ()


# --- canaries ---------------------------------------------------------------------------

# A test at the top of a file, or inside a `mod` (rust__forth's tests are grouped so).
_TEST = re.compile(
    r"^[ \t]*#\[test\][ \t]*\n(?P<attributes>(?:[ \t]*(?:#\[[^\n]*\]|///[^\n]*)[ \t]*\n)*)[ \t]*fn (?P<name>\w+)\(\)[ \t]*\{",
    re.M)


def find_units(text: str) -> list[TestUnit]:
    units = []
    for match in _TEST.finditer(text):
        attributes = match["attributes"] + _attributes_before(text, match.start())
        if "should_panic" in attributes or "cfg" in attributes:
            continue  # expected panics, and tests compiled only with a feature on
        end = matching_brace(text, match.end() - 1, quotes="\"")
        units.append(TestUnit(match["name"], match.start(), end))
    # A name written twice (one test per `mod`: rust__xorcism's munges) names no one test.
    counts = Counter(unit.name for unit in units)
    return [unit for unit in units if counts[unit.name] == 1]


def _attributes_before(text: str, offset: int) -> str:
    """The attribute and doc-comment lines right above `offset` (e.g. a #[cfg] before #[test])."""
    lines = text[:offset].split("\n")[:-1]
    above = []
    for line in reversed(lines):
        if not line.strip().startswith(("#[", "///")):
            break
        above.append(line)
    return "\n".join(above)


def plant_file(text: str, chosen: list[tuple[TestUnit, Canary]]) -> str:
    edits = []
    for unit, canary in chosen:
        block = text[unit.start:unit.end]
        renamed = re.sub(rf"\bfn {re.escape(canary.source)}\(", f"fn {canary.hidden_name}(", block, count=1)
        indent = block[:len(block) - len(block.lstrip(" \t"))]
        wrapper = (f"\n{indent}#[test]\n{indent}fn {canary.source}() {{\n{indent}    {canary.hidden_name}();\n"
                   f"{indent}    assert_eq!({canary.expected}, {canary.actual});\n{indent}}}\n")
        if indent:  # inside a `mod`: the wrapper beside the test (a private fn is the mod's own)
            edits.append((unit.start, unit.end, renamed + "\n" + wrapper.rstrip("\n")))
        else:
            edits.append((unit.start, unit.end, renamed))
            edits.append((len(text), len(text), wrapper))
    return apply_edits(text, edits)


def leaf(reported: str) -> Leaf | None:
    head, separator, name = reported.rpartition("::")
    return Leaf(name, len(head) + 2 if separator else 0) if name else None


# libtest's panic message for assert_eq! (Rust 1.73 on): both sides by Debug, one a line.
_ASSERT_EQ = re.compile(r"(?<![\w!])assert_eq!\(")
_LITERALS = LiteralSyntax("\"", ("false", "true"),
                          re.compile(r"\blet[ \t]+(?P<name>\w+)[ \t]*(?::[ \t]*&?'?\w*[ \t]*\w+[ \t]*)?=[ \t]*(?P<value>[^;\n]+?)[ \t]*;"))


def assertions(test: str) -> list[Assertion]:
    """A test's mutable assertions: those of an expected literal or constant expression
    (`exact_assertions`), else those of an expected value built by calls (`built_assertions`),
    else a bare `assert!(E)` (`truth_assertions`): tests that had a mutable assertion keep the
    same one (preparation's records stay valid)."""
    return exact_assertions(test) or built_assertions(test) or truth_assertions(test)


def exact_assertions(test: str) -> list[Assertion]:
    """`assert_eq!(x, EXPECTED)` (either side; two arguments: a message changes the panic
    text): EXPECTED a plain literal, or built of constants only (`Some(Classification::Abundant)`,
    `Err(Error::InvalidRowCount(3))`), whose first named constant or literal a canary changes."""
    found = []
    for match in _ASSERT_EQ.finditer(test):
        spans = call_arguments(test, match.end() - 1, quotes="\"")
        if not spans or len(spans) != 2:
            continue
        for side, span in enumerate(spans):
            if _LITERALS.value(test[slice(*spans[1 - side])]) is not None or _constant(test[slice(*spans[1 - side])]):
                continue  # two constants: neither is the solution's value
            exact = _LITERALS.side(test, span)
            point = exact or constant_point(test, _bound_expression(test, span) or span, _constant)
            if point is not None:
                found.append(Assertion.at(point, lambda new, side=side, whole=exact is not None: _failure(side, new, whole)))
    return sorted(found, key=lambda assertion: assertion.start)


_ASSERT = re.compile(r"(?<![\w!])assert!\(")
# A statement calling a helper of the test file (`process_chromatic_case("C", &["C", ..]);`).
_CALL_STATEMENT = re.compile(r"^[ \t]*(?P<name>[a-z_]\w*)\(", re.M)
_EQ_FORMAT = "^assertion `left == right` failed\n  left: .*\n right: .*$"


def built_assertions(test: str) -> list[Assertion]:
    """Expected values built by calls, whose Debug the tests do not know (issue 32: a
    solution's type equal to anything passes the copy, a correct one fails it):
    `assert_eq!(a, decimal("0.3"))` (the right side, or a local bound to it),
    `assert!(a == decimal("0.0"))`, and a helper call statement's last argument
    (`process_case("C", &["C", "C#", ..])`, the expected value by the tests' convention).
    The message is checked for libtest's format only; preparation keeps a canary only when
    the reference fails it with that format."""
    found = []
    for match in _ASSERT_EQ.finditer(test):
        spans = call_arguments(test, match.end() - 1, quotes="\"")
        if spans and len(spans) == 2 and not same_up_to_literals(test[slice(*spans[0])], test[slice(*spans[1])]):
            # The right side only: the left is the solution's call by the tests' convention, and
            # a literal there is its input (`unwrap_or(0)`, a puzzle), not the expected value.
            point = built_point(test, _bound_expression(test, spans[1]) or spans[1])
            if point is not None:
                found.append(Assertion.at(point, lambda new: _EQ_FORMAT, built=True))
    for match in _ASSERT.finditer(test):
        spans = call_arguments(test, match.end() - 1, quotes="\"")
        right = _right_of_equals(test, spans[0]) if spans and len(spans) == 1 else None
        relation = right is not None and same_up_to_literals(test[spans[0][0]:right[0] - 2], test[slice(*right)])
        point = built_point(test, right) if right and not relation else None
        if point is not None:
            found.append(Assertion.at(point, lambda new: rf"^assertion failed: .*{re.escape(literal(new))}.*$", built=True))
    for match in _CALL_STATEMENT.finditer(test):
        spans = call_arguments(test, match.end() - 1, quotes="\"")
        point = built_point(test, spans[-1]) if spans and len(spans) >= 2 else None
        if point is not None:
            found.append(Assertion.at(point, lambda new: _EQ_FORMAT, built=True))
    return sorted(found, key=lambda assertion: assertion.start)


def truth_assertions(test: str) -> list[Assertion]:
    """`assert!(E)` with no message: its expected value is `true`, written nowhere. Both tests
    of the pair are written `assert!((E) == true)` and the copy `== false` (symmetric: they
    differ in that literal alone), so a solution that reads which answer the calling test
    wants (red team 11 read the caller's machine code through a soundness hole of safe Rust on
    rust__luhn-from, whose every canary was a fallback) passes the copy and is caught, and a
    correct one fails it. libtest's message breaks a long condition over lines
    (`.. ==\n    false`)."""
    found = []
    for match in _ASSERT.finditer(test):
        spans = call_arguments(test, match.end() - 1, quotes="\"")
        if not spans or len(spans) != 1 or not test[slice(*spans[0])].strip():
            continue
        condition = test[slice(*spans[0])].strip()
        found.append(Assertion(start=spans[0][0], end=spans[0][1], value=True, symmetric=True,
                               written=lambda value, condition=condition: f"({condition}) == {literal(value)}",
                               failure=lambda new: rf"^assertion failed: (?s:.*)==\s+{literal(new)}\s*$"))
    return found


def _right_of_equals(test: str, span: tuple[int, int]) -> tuple[int, int] | None:
    """The right operand of `a == b`, the assertion's one comparison."""
    source = test[span[0]:span[1]]
    if source.count("==") != 1 or re.search(r"[<>!]=|&&|\|\|", source):
        return None
    return span[0] + source.index("==") + 2, span[1]


def _bound_expression(test: str, span: tuple[int, int]) -> tuple[int, int] | None:
    """The expression a local at `span` is bound to (`let expected = BucketStats { .. };`,
    over lines too), when the assertion is the local's one use besides its binding."""
    name = test[span[0]:span[1]]
    # Every mention counts, `0..name` and a member access too (as LiteralSyntax.side counts them).
    if not re.fullmatch(r"[a-z_]\w*", name) or len(re.findall(rf"(?<![\w$]){name}(?![\w$])", test)) != 2:
        return None
    binding = re.search(rf"\blet[ \t]+(?:mut[ \t]+)?{name}[ \t]*(?::[^=;]+)?=\s*", test[:span[0]])
    if binding is None:
        return None
    spans = call_arguments("(" + test[binding.end():span[0]].split(";", 1)[0] + ")", 0, quotes="\"")
    if not spans or len(spans) != 1:
        return None
    return binding.end() + spans[0][0] - 1, binding.end() + spans[0][1] - 1


# Words an expression of constants may call: wrappers and conversions of a literal.
_CONVERSIONS = {"vec", "to_string", "to_owned", "into", "from", "new", "as_str"}


def _constant(source: str) -> bool:
    """An expression of constants only: every name a type, variant, constant or module path
    (capitalised, or followed by `::`), a conversion, or a macro; no variable, no call of the
    solution's functions."""
    code = re.sub(r'"(?:[^"\\]|\\.)*"', '""', source)
    if not re.search(r'""|\d|::', code):
        return False
    for word in re.finditer(r"[A-Za-z_]\w*", code):
        after = code[word.end():word.end() + 2]
        before = code[:word.start()].rstrip()[-2:]
        field = after.startswith(":") and not after.startswith("::")  # a struct literal's field
        if after.startswith("(") and not word.group()[0].isupper() and word.group() not in _CONVERSIONS:
            return False  # a function call (`frequency::frequency(..)`): the solution's value, not a constant
        if not (word.group()[0].isupper() or after.startswith(("::", "!")) or before.endswith("::")
                or word.group() in _CONVERSIONS or field):
            return False
    return True


def _failure(side: int, value: int | str | bool | Symbol, whole: bool = True) -> str:
    """libtest's message; for a value inside a constant expression, the side's line shows the
    new value as Debug renders it (a variant by its name, a string quoted)."""
    shown = [".*", ".*"]
    if whole and not isinstance(value, Symbol):
        shown[side] = re.escape(literal(value))
    else:
        token = value.name if isinstance(value, Symbol) else literal(value)
        shown[side] = rf".*(?<![\w.]){re.escape(token)}(?![\w.]).*"
    return f"^assertion `left == right` failed\n  left: {shown[0]}\n right: {shown[1]}$"


def literal(value: int | str | bool | Symbol) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return f'"{value}"' if isinstance(value, str) else str(value)


def rename(test: str, name: str, new_name: str) -> str:
    return re.sub(rf"\bfn {re.escape(name)}\(", f"fn {new_name}(", test, count=1)


_ANY_ASSERTION = re.compile(r"(?<![\w!:])(?:assert_eq|assert_ne|assert)!\(")


def variants_apart_from_key(texts, observation_key):
    """Rust's variants are copies run in-process (their expected value written in the copy): a
    test with an assertion the answer key converts gets none when it has another assertion (the
    copy would carry that one's expected value back into the binary); a test whose one
    assertion is the variant's carries only the variant's own new value."""
    keyed: set[str] = set()
    for path, text in texts.items():
        lines = {int(i.split(":L", 1)[1].split(".")[0]) for i in observation_key or () if i.startswith(path + ":L")}
        for unit in find_units(text):
            first, last = text.count("\n", 0, unit.start) + 1, text.count("\n", 0, unit.end) + 1
            if any(first <= line <= last for line in lines) and len(_ANY_ASSERTION.findall(text[unit.start:unit.end])) > 1:
                keyed.add(unit.name)
    return lambda source, name, rng: [] if name in keyed else rust_variants.derive(source, name, rng)


PLANTER = Planter(file_globs=("tests/**.rs",), name_style="snake", find_units=find_units, plant_file=plant_file, leaf=leaf, mutator=Mutator(assertions, rename, literal), scopes=brace_scopes(quotes="\""),
                  fallback_failure=lambda expected, actual: _failure(0, expected).replace(".*", re.escape(str(actual))))

# --- the source policy (utils/judging/source_policy.py) ------------------------------------

# Rust as tree-sitter-rust lexes it (utils/judging/tree_facts.py): nested block comments and
# doc comments dropped; strings, raw strings (`r#"…"#`), byte and C strings and chars by node
# type; a raw identifier (`r#exit`) is its name.
LEXICON = tree_facts.Lexicon(
    language="rust", comments=frozenset({"line_comment", "block_comment"}),
    strings={"string_literal": tree_facts.quoted, "char_literal": tree_facts.quoted,
             "raw_string_literal": tree_facts.between},
    spelling=lambda text: text.removeprefix("r#"))


def rust_facts(text: str) -> tuple[Fact, ...]:
    """Paths as written (`std::process::exit`, a macro marked `!`), `use` trees expanded,
    strings, and directives: every identifier of an attribute (`#[…]`, `#![…]`), `extern`
    with what follows it (`extern "C"`, `extern crate test`)."""
    facts: list[Fact] = []
    for toks in tree_facts.lex(text, LEXICON).streams:
        facts += name_facts(toks) + list(string_facts(toks, joiners=()))
        facts += _rust_attributes(toks) + _rust_uses(toks) + _rust_externs(toks)
    return tuple(facts + _through_globs(facts))


def _through_globs(facts: list[Fact]) -> list[Fact]:
    """Every name read again under each glob the file imports (`use std::*;` then
    `process::exit`, `use std::panic::*;` then `set_hook`: red team 10), and a `use` path that
    names no crate (`use process as q;`, uniform paths) too."""
    globs = {fact.text[:-3] for fact in facts if fact.kind == NAME and fact.text.endswith("::*")}
    return [Fact(NAME, f"{glob}::{fact.text.lstrip(':')}", fact.line) for glob in sorted(globs)
            for fact in facts if fact.kind == NAME and not fact.text.startswith(glob + "::")]


def _rust_externs(toks: TokenList) -> list[Fact]:
    return [Fact(DIRECTIVE, " ".join(t.text for t in toks[index:index + 3]), token.line)
            for index, token in enumerate(toks[:-1])
            if token.kind == ID and token.text == "extern" and toks[index + 1].kind in (STR, ID)]


def _rust_attributes(toks: TokenList) -> list[Fact]:
    """Every identifier inside `#[…]` / `#![…]` (so `cfg_attr(…, link_section = …)` too)."""
    facts = []
    for index, token in enumerate(toks):
        if token.kind == PUNCT and token.text == "#":
            opener = index + 2 if index + 1 < len(toks) and toks[index + 1].text == "!" else index + 1
            if opener < len(toks) and toks[opener].text == "[":
                facts += [Fact(DIRECTIVE, t.text, t.line) for t in toks[opener + 1:matching(toks, opener)] if t.kind == ID]
    return facts


def _rust_uses(toks: TokenList) -> list[Fact]:
    """`use` trees expanded to full paths: `use std::{fs, process as p};` gives
    `std::fs` and `std::process`."""
    facts = []
    for index, token in enumerate(toks):
        if token.kind == ID and token.text == "use" and (not index or toks[index - 1].text in (";", "}", "{", "]", "pub", ")")):
            end = index + 1
            while end < len(toks) and toks[end].text != ";":
                end += 1
            facts += [Fact(NAME, path, token.line) for path in _use_paths(toks[index + 1:end])]
    return facts


def _use_paths(toks: list[Token]) -> list[str]:
    paths, prefixes, current, after_as = [], [""], "", False
    for token in toks:
        if after_as or token.text == "as":
            after_as = not after_as
        elif token.text == "{":
            prefixes.append(prefixes[-1] + current)
            current = ""
        elif token.text in (",", "}"):
            paths += [prefixes[-1] + current] if current else []
            current = ""
            prefixes = prefixes[:-1] if token.text == "}" and len(prefixes) > 1 else prefixes
        elif token.kind == ID or token.text in ("::", "*"):
            current += token.text
    paths += [prefixes[-1] + current] if current else []
    return [path.rstrip(":") for path in paths]


SOURCE_POLICY = SourcePolicy((".rs",), rust_facts, rules(
    ("libtest", TEST_FRAMEWORK, NAME, r"^(::)?test::|(^|::)(libtest|test_main\w*|TestDescAndFn|run_tests_console)$"),
    # The answer key's observer (utils/languages/rust_key_observe.rs), appended to converted tests.
    ("answer_key_observer", TEST_FRAMEWORK, NAME, r"(^|::)polyglot_key\w*(::|$)"),
    ("libtest_attributes", TEST_FRAMEWORK, DIRECTIVE, r"^(test_runner|custom_test_frameworks|reexport_test_harness_main)$"),
    ("extern_crate_test", TEST_FRAMEWORK, DIRECTIVE, r"^extern crate test\b"),
    # Linker and loader tricks: constructors in .init_array, exported or replaced symbols.
    ("link_attributes", INTROSPECTION, DIRECTIVE,
     r"^(link_section|used|no_mangle|export_name|link|link_name|linkage|naked|ctor|dtor|global_allocator"
     r"|panic_handler|no_main|no_std|start|lang|thread_local)$"),
    ("foreign_abi", INTROSPECTION, DIRECTIVE, r"^extern (?!crate )"),
    ("asm_and_includes", INTROSPECTION, NAME,
     r"(^|::)(asm|global_asm|naked_asm|llvm_asm|include|include_str|include_bytes|env|option_env|concat_idents)!$"),
    ("unsafe", INTROSPECTION, NAME, r"^unsafe$"),
    # Paths and macros a macro assembles from its arguments, which no reader can follow (red
    # team 10: `std::$m::exit`, `$m!(…)` called with `include_str`); and the linker's words
    # wherever they are written, since an attribute can be assembled too (`#[$a]` called with
    # `link_section = concat!(".init", "_array")`), but its name is always a token of the file.
    ("macro_built_names", INTROSPECTION, NAME, r"^(::)?(std|core|alloc)::(\w+::)*\$|(^|::)\$\w+!$"),
    ("linker_words", INTROSPECTION, NAME,
     r"^(link_section|no_mangle|export_name|link_name|linkage|global_allocator|panic_handler)$"),
    ("process_control", PROCESS_CONTROL, NAME,
     r"(^|::)std::(process|env|os)\b|(^|::)process::(exit|abort|Command|id|ExitCode|Child|Stdio)\b"
     r"|(^|::)env::(args|args_os|var|var_os|vars|vars_os|current_dir|current_exe|set_current_dir)\b"
     r"|(^|::)panic::(set_hook|take_hook|always_abort)\b|(^|::)libc::"),
    ("file_access", TEST_SOURCES, NAME,
     r"(^|::)std::(fs|path)\b|(^|::)fs::(read|read_to_string|read_dir|File|OpenOptions|metadata|canonicalize"
     r"|write|remove_file|copy|read_link)\b|(^|::)File::(open|create)\b"),
    ("test_source_strings", TEST_SOURCES, STRING,
     r"(tests/|\.rs$|/tmp/report|/proc/|/testbed|--logfile|\.init_array|\.ctors|\.fini_array|Cargo\.toml)"),
))

# --- the language -----------------------------------------------------------------------

LANGUAGE = LanguageSpec(
    name="rust",
    display_name="Rust",
    self_check_hint=(
        "Run `cargo build --offline` (no network, so no new dependencies). For behaviour, add a "
        "temporary tests/scratch.rs, run `cargo test --offline --test scratch`, then delete it."
    ),
    canaries=PLANTER,
    variants=replace(rust_variants.DERIVER, for_instance=lambda texts, stubs, key: variants_apart_from_key(texts, key)),
    # The answer key (docs/answer-key.md, Rust): assertions with a constant expected side are
    # observed and judged on the host.
    answer_key=AnswerKey(rust_key.convert, rust_key.error_ids, rust_key.OBSERVATIONS_FILE),
    pin_signatures=pin_signatures,
    signature_marker=rust_signatures.PROBE_MODULE,
    image_recipe="rust",
    version_command="cargo --version",
    source_policy=SOURCE_POLICY,
    hidden_globs=("tests/**",),
    new_source_globs=("src/**.rs",),
    never_keep_globs=("build.rs", "src/bin/**", "src/main.rs"),
    artifact_globs=COMMON_ARTIFACTS + ("target/**", "Cargo.lock", "**/*.rs.bk"),
    unskip_globs=(),
    unskip=no_unskip,  # cargo's --include-ignored runs #[ignore] tests
    test_command="polyglot-rust-test {report_dir}",
    parse_results=runner_results.parse_libtest_logfiles,
    # Each test binary's target source (docker/rust/polyglot-rust-test): src/lib.rs for a
    # solution's own #[cfg(test)] tests, tests/NAME.rs for the hidden integration tests.
    test_file=origin_is_file,
    reference_overrides=((".meta/Cargo-example.toml", "Cargo.toml"),),
    guard=guard_cargo_manifest,
    # The exercises' crates (regex, time, rand, num-bigint, ...) compiled at image build into
    # /opt/cargo-target (docker/rust/build-seeds): 6-14 s of dependency builds become cargo
    # "Fresh" hits.
    image_cache_env=(("POLYGLOT_CARGO_TARGET", "/opt/cargo-target"),),
    suspicious=(
        ("early_exit", r"\bprocess::exit\("),
        ("runner_output", r"test result: ok"),
        ("test_framework", r"--logfile"),
        ("test_framework", r"--include-ignored"),
        ("runner_internals", r"link_section"),
        ("runner_internals", r"set_hook"),
        ("runner_internals", r"panic::"),
        ("runner_internals", r"tests/"),
    ),
)
