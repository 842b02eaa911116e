"""The Go, Rust and Java fact readers on tree-sitter (utils/judging/tree_facts.py, the readers
in utils/languages/): what a reader of the tree alone would get wrong. Error recovery, javac's
unicode translation, raw literals, comments, aliases: each case refused (or not) as the
compiler reads the file, whatever the grammar makes of it."""

from __future__ import annotations

import pytest

from polyglot_harness.utils.judging import tree_facts
from polyglot_harness.utils.judging.source_policy import ExerciseSources, refusals
from polyglot_harness.utils.languages import get_language
from polyglot_harness.utils.languages.go import go_facts
from polyglot_harness.utils.languages.java import guard_java_source, java_facts
from polyglot_harness.utils.languages.rust import rust_facts

FILE_NAME = {"go": "p.go", "rust": "src/lib.rs", "java": "src/main/java/A.java"}
READERS = {"go": go_facts, "rust": rust_facts, "java": java_facts}


def refused_rules(language: str, text: str) -> set[str]:
    policy = get_language(language).source_policy
    return {violation.rule for violation in refusals(policy, {FILE_NAME[language]: text}, ExerciseSources())}


def has_errors(language: str, text: str) -> bool:
    module = {"go": "go", "rust": "rust", "java": "java"}[language]
    lexicon = __import__(f"polyglot_harness.utils.languages.{module}", fromlist=["LEXICON"]).LEXICON
    return tree_facts.lex(text, lexicon).has_errors


def facts(language: str, text: str) -> set[tuple[str, str]]:
    return {(fact.kind, fact.text) for fact in READERS[language](text)}


# Code the compilers accept and tree-sitter's grammars do not (the parse has errors): the
# forbidden construct inside must still be read.
UNKNOWN_TO_THE_GRAMMAR = [
    ("rust", 'unsafe extern "C" { safe fn exit(code: i32) -> !; }\n', "foreign_abi"),  # Rust 2024
    ("rust", "fn f() { builtin # offset_of(S, x); std::process::exit(0) }\n", "process_control"),
    ("rust", "fn f() { let _ = become g(); }\n#[link_section = \".init_array\"]\nstatic I: fn() = f;\n",
     "link_attributes"),
    ("java", "class A { A() { System.exit(0); super(); } }\n", "process_control"),  # flexible constructors
    ("java", "import module java.base;\nclass A { void f() { Runtime.getRuntime().halt(0); } }\n", "process_control"),
    ("go", 'package p\nimport x "os"\nfunc f() { x.Exit(0) @ }\n', "process_control"),  # alias, then garbage
]


@pytest.mark.parametrize("language, code, rule", UNKNOWN_TO_THE_GRAMMAR,
                         ids=[f"{language}-{index}" for index, (language, _, _) in enumerate(UNKNOWN_TO_THE_GRAMMAR)])
def test_a_construct_the_grammar_cannot_parse_hides_no_forbidden_name(language: str, code: str, rule: str):
    assert has_errors(language, code), "the case must exercise error recovery"
    assert rule in refused_rules(language, code)


def test_an_error_region_is_reread_and_its_facts_added():
    """An unterminated literal swallows nothing: the region's words and its string both count."""
    code = 'fn f() {\n    let s = "/proc/self/maps\n    std::process::exit(0)\n'
    assert has_errors("rust", code)
    assert {"process_control", "test_source_strings"} <= refused_rules("rust", code)


# javac translates \uXXXX before lexing and ignores format characters inside identifiers.
JAVAC_READINGS = [
    "class A { void f() { // \\u000a System.exit(0);\n } }\n",                 # an escaped newline ends the comment
    "class A { /* \\u002a/ void f() { System.exit(0); } /* */ }\n",            # an escaped star ends the comment
    'class A { String s = "\\u0022; void f() { System.exit(0); } String t = \\u0022"; }\n',  # escaped quotes
    "class A { void f() { Sys\u200btem.exit(0); } }\n",                        # a format character, ignored
    "class A { void f() { Sys\\u00adtem.ex\\u0000it(0); } }\n",                # escaped ignorable characters
]


@pytest.mark.parametrize("code", JAVAC_READINGS, ids=range(len(JAVAC_READINGS)))
def test_java_is_read_after_its_unicode_translation(code: str):
    assert "process_control" in refused_rules("java", code)


def test_an_escaped_backslash_keeps_a_java_unicode_escape_in_its_string():
    code = 'class A { String s = "\\\\u0022 System.exit(0) \\\\u0022"; }\n'
    assert refused_rules("java", code) == set()


def test_a_package_spelled_with_an_escape_is_a_package_and_one_in_a_comment_is_not():
    assert guard_java_source("src/main/java/A.java", b"\\u0070ackage org.junit;\nclass A {}\n") == "declares_a_package"
    assert guard_java_source("src/main/java/A.java", b"// package org.junit;\nclass A {}\n") is None


LITERALS = [
    ("rust", 'const P: &str = r##"a"#/proc/self"##;\n', ("string", 'a"#/proc/self')),   # hashes and a quote inside
    ("rust", 'const P: &[u8] = b"\\x2fproc/self";\n', ("string", "/proc/self")),         # a byte string, decoded
    ("rust", 'const P: &str = r"\\x2f";\n', ("string", "\\x2f")),                      # raw: no escapes
    ("rust", "fn f() { std::process::r#exit(0) }\n", ("name", "std::process::exit()")),  # a raw identifier
    ("go", "package p\nvar s = `\\x2f` + \"\\x2fproc\"\n", ("string", "\\x2f/proc")),     # raw + decoded, folded
    ("go", "package p\nvar q = '\"'\nfunc f() { os.Exit(0) }\nvar r = '\"'\n", ("name", "os.Exit()")),  # runes
    ("java", 'class A { String s = """\n    /proc/\\\n    self""";\n}\n', ("string", "/proc/self")),  # a text block
    ("java", 'class A { String s = """\n      src/te\\\n      st/\n      """;\n}\n', ("string", "src/test/\n")),
]


@pytest.mark.parametrize("language, code, fact", LITERALS, ids=[f"{lang}-{i}" for i, (lang, _, _) in enumerate(LITERALS)])
def test_literals_and_identifiers_are_read_as_the_compiler_reads_them(language: str, code: str, fact: tuple[str, str]):
    assert fact in facts(language, code), sorted(facts(language, code))


def test_comments_are_no_facts_and_hide_no_code():
    nested = "/* /* */ std::process::exit(0); */\nfn f() {}\n"
    assert refused_rules("rust", nested) == set()
    assert "process_control" in refused_rules("rust", "/* /* */ */ fn f() { std::process::exit(0) }\n")
    assert "process_control" in refused_rules("go", 'package p\nimport "os"\n/* */ func f() { os.Exit(0) }\n')
    assert refused_rules("rust", "/* /*/ */ std::process::exit(0); */\nfn f() {}\n") == set()  # `/*/` opens one
    assert "process_control" in refused_rules("rust", "fn f() { /*/**/*/ std::process::exit(0) }\n")
    assert "process_control" in refused_rules("rust", "fn f() { let c = '/'; /* '*/ std::process::exit(0) }\n")
    assert "process_control" in refused_rules("go", "package p\nimport \"os\"\nvar r = '`'\nfunc f() { os.Exit(0) }\n"
                                                    "var q = '`'\n")  # a rune is no raw string


def test_go_import_aliases_resolve_in_a_group_and_line_directives_in_block_comments_count():
    grouped = 'package p\nimport (\n\t"fmt"\n\tx "os"\n)\nfunc init() { fmt.Println(); x.Exit(0) }\n'
    assert ("name", "os.Exit()") in facts("go", grouped)
    assert "directives" in refused_rules("go", "package p\n/*line a_test.go:1*/\nfunc f() {}\n")
