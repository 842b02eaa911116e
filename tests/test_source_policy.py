"""The source policy (issue 25, layer 3): constructs no solution needs, refused before anything runs.

Attackers are tests: each construct class in each language must be refused with the rule
that names it, and so must the evasions a patient attacker tries next (string building,
aliasing, unicode escapes, token pasting, dot imports). Honest code must not be: comments,
strings and identifiers that merely contain a refused word, names a file declares itself,
and the 225 reference solutions of the real benchmark (0 refusals, with the allowances the
exercises' own files give; bench/source_policy.py measures the other honest corpora).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from polyglot_harness.utils.judging.source_policy import (CATEGORIES, TEST_SIDE, ExerciseSources, PolicyTableError,
                                                         check, exercise_allowances, refusals, rules)
from polyglot_harness.utils.languages import LANGUAGES, get_language
from polyglot_harness.utils.outcomes import Reason

pytestmark = pytest.mark.beside_gate  # the benchmark's checkout only, nothing recorded: beside the gate's preparation

FIXTURES = Path(__file__).resolve().parent / "fixtures"
FILE_NAME = {"python": "solution.py", "javascript": "solution.js", "go": "solution.go", "rust": "src/lib.rs",
             "java": "src/main/java/Solution.java", "cpp": "solution.cpp"}


def refused_rules(language: str, text: str, sources: ExerciseSources = ExerciseSources()) -> set[str]:
    policy = get_language(language).source_policy
    return {violation.rule for violation in refusals(policy, {FILE_NAME[language]: text}, sources)}


# (language, code, the rule that must refuse it): one construct class each, then its evasions.
ATTACKS = [
    # --- python ---------------------------------------------------------------------------
    ("python", "import unittest\n", "test_framework"),
    ("python", "from _pytest import runner\n", "test_framework"),
    ("python", "import sys\ndef f():\n    return sys._getframe(1).f_locals\n", "frames"),
    ("python", "import sys as s\nx = s._getframe\n", "frames"),                       # aliasing
    ("python", "from sys import _getframe as here\n", "frames"),                       # aliasing
    ("python", "import sys\nsy = sys\nsy._getframe()\n", "frames"),                   # a copy of the module
    ("python", "import inspect\n", "introspection_modules"),
    ("python", "import gc\n", "introspection_modules"),
    ("python", "import ctypes\n", "introspection_modules"),
    ("python", "import builtins\nbuiltins.open = None\n", "introspection_modules"),
    ("python", "def f(e):\n    return e.__traceback__.tb_frame\n", "frames"),
    ("python", "x = getattr(__builtins__, 'ev' + 'al')\n", "interpreter_escapes"),     # string building
    ("python", "import os\nname = 'sys' + 'tem'\ngetattr(os, name)('ls')\n", "computed_attribute"),
    ("python", "import os\ngetattr(os, '_ex' + 'it')(0)\n", "process_control"),        # folded literal
    ("python", "def f(g, x):\n    return getattr(g, ''.join(x))\n", "computed_attribute"),  # any object
    ("python", "class A:\n    def f(self, x):\n        self = print\n        return getattr(self, x)\n",
     "computed_attribute"),                                                                  # a rebound self
    # `self` is whatever an unbound call passes (independent red team, 2026-11-28: `_H.get(obj,
    # name)` read sys.modules and patched unittest on python__paasio, graded in process).
    ("python", "class H:\n    def get(self, name):\n        return getattr(self, name)\nH.get(print, 'x')\n",
     "computed_attribute"),
    ("python", "class H:\n    def put(self, name, value):\n        setattr(self, name, value)\n",
     "computed_attribute"),
    ("python", "class H:\n    def get(self, name):\n        return getattr(self, '_' + name)\n",
     "computed_attribute"),                                                                  # a private prefix
    ("python", "class H:\n    def get(cls, name):\n        return getattr(cls, name)\n",
     "computed_attribute"),                                                                  # cls, no classmethod
    ("python", "import operator\nget = operator.attrgetter('__globals__')\n", "attribute_getters"),
    ("python", "def f(g, x):\n    return object.__getattribute__(g, x)\n", "attribute_getters"),
    ("python", "x = [c for c in ().__class__.__base__.__subclasses__()]\n", "interpreter_escapes"),
    ("python", "f = print.__self__\n", "interpreter_escapes"),
    ("python", "def f(g):\n    return '{0.__globals__[sys]}'.format(g)\n", "format_escapes"),  # format fields
    ("python", "exec('import os')\n", "interpreter_escapes"),
    ("python", "__import__('os')._exit(0)\n", "interpreter_escapes"),
    ("python", "import importlib\nimportlib.import_module('o' + 's')\n", "introspection_modules"),
    ("python", "import unittest as u\nu.TestCase.run = lambda *a: None\n", "patches_imports"),
    ("python", "import json\nsetattr(json, 'loads', None)\n", "patches_imports"),
    ("python", "import os\nos._exit(0)\n", "process_control"),
    ("python", "from os import _exit as bye\nbye(0)\n", "process_control"),             # aliasing
    ("python", "import sys\nsys.exit(0)\n", "process_control"),
    ("python", "import sys\nprint(sys.argv)\n", "process_control"),
    ("python", "import sys\nsys.modules['unittest']\n", "process_control"),
    ("python", "import atexit\n", "process_modules"),
    ("python", "import subprocess\n", "process_modules"),
    ("python", "text = open('running_total_test.py').read()\n", "file_access"),
    ("python", "import glob\n", "file_modules"),
    ("python", "import os\nos.write(3, b'<testsuite/>')\n", "file_access"),
    ("python", "import codecs\ncodecs.open('x_test.py')\n", "file_access"),
    ("python", "from pathlib import Path\n", "file_modules"),
    ("python", "x = '/tmp/report-' + 'abc'\n", "test_source_strings"),
    ("python", "x = __file__\n", "file_access"),
    ("python", "import running_total_test as t\n", "test_modules"),
    ("python", "from proverb_test import ProverbTest\n", "test_modules"),
    # A grammar the host's Python does not parse is read from its tokens, not skipped.
    ("python", "import os\nclass A:\n  def f(self:\n    os._exit(0)\n", "process_control"),
    ("python", "import inspect\nx = (\n", "introspection_modules"),
    # --- javascript -----------------------------------------------------------------------
    ("javascript", "expect.extend({});\n", "jest_globals"),
    ("javascript", "test('x', () => {});\n", "jest_globals"),
    ("javascript", "jest.fn();\n", "jest_globals"),
    ("javascript", "describe.each([]);\n", "jest_globals"),
    ("javascript", "export const x = { asymmetricMatch: () => true };\n", "framework_hooks"),
    ("javascript", "Object.prototype.asymmetricMatch = () => true;\n", "framework_hooks"),
    ("javascript", "export const x = { ['asymmetric' + 'Match']: () => true };\n", "framework_hook_strings"),
    ("javascript", "const asymmetricMatch = () => true;\nexport const x = { asymmetricMatch };\n", "framework_hooks"),
    ("javascript", "Object.defineProperty(globalThis, 'test', {});\n", "global_object"),
    ("javascript", "const p = globalThis['pro' + 'cess'];\n", "global_object"),       # computed access
    ("javascript", "const g = global;\n", "global_object"),
    ("javascript", "Error.prepareStackTrace = (e, s) => s;\n", "stack_introspection"),
    ("javascript", "function f() { return arguments.callee.caller; }\n", "stack_introspection"),
    ("javascript", "const f = (() => {}).constructor('return process')();\n", "code_from_strings"),
    ("javascript", "const f = new Function('return this')();\n", "code_from_strings"),
    ("javascript", "(0, eval)('this');\n", "code_from_strings"),
    ("javascript", "const f = (() => {})['constr' + 'uctor']('return process')();\n", "member_strings"),
    ("javascript", "process.exit(0);\n", "process"),
    ("javascript", "\\u0070rocess.exit(0);\n", "process"),                              # unicode escape
    ("javascript", "p\\u{72}ocess.on('exit', () => {});\n", "process"),                 # unicode escape
    ("javascript", "function f(process) { return 1; }\nprocess.exit(0);\n", "process"),  # shadowed elsewhere
    ("javascript", "const f = (process) => 0; process.exit(0);\n", "process"),
    ("javascript", "const f = process => process + 1\nprocess.exit(0)\n", "process"),  # no semicolons
    ("javascript", "const x = __dirname;\n", "process"),
    ("javascript", "import fs from 'fs';\n", "file_modules"),
    ("javascript", "import { readFileSync as r } from 'node:fs';\n", "file_modules"),
    ("javascript", "const fs = require('fs');\n", "file_modules"),
    ("javascript", "const cp = require('child_' + 'process');\n", "computed_module"),  # computed name
    ("javascript", "const m = await import(`./${name}`);\n", "computed_module"),
    ("javascript", "const r = require;\n", "computed_module"),
    ("javascript", "import { execSync } from 'child_process';\n", "system_modules"),
    ("javascript", "const s = 'resistor-color-trio.spec.js';\n", "test_source_strings"),
    ("javascript", "const s = `${dir}/x.spec.js`;\n", "test_source_strings"),
    # The tree-sitter reader (utils/languages/javascript_facts.py): what a naive reader of the tree misses.
    ("javascript", "process?.exit(0);\n", "process"),                                  # optional chaining
    ("javascript", "globalThis?.process;\n", "global_object"),
    ("javascript", "({})?.constructor?.('return process')();\n", "code_from_strings"),
    ("javascript", "process/**/.binding('fs');\n", "process"),                         # a comment inside a name
    ("javascript", "const f = function process() {};\nprocess.exit(0);\n", "process"),  # binds in itself only
    ("javascript", "const { a = process } = {};\n", "process"),                       # a default is a use
    ("javascript", "let { [process.argv]: y } = {};\n", "process"),                   # a computed key is a use
    ("javascript", "for (const process of []) {}\nprocess.exit(0);\n", "process"),     # bound in the loop only
    ("javascript", "class A { static process = 1; m() { process.exit(0); } }\n", "process"),  # a field is no binding
    ("javascript", "\\u0072equire('child_process');\n", "system_modules"),            # escapes in a callee
    ("javascript", "const s = `${'constr'}${'uctor'}`;\n", "member_strings"),         # template pieces folded
    ("javascript", "Object.prototype[key] = () => true;\n", "patches_builtins"),      # computed assignment
    # An erroneous tree: no binding is trusted, words the grammar could not place are names.
    ("javascript", "const test = 1;\ntest('x', () => {});\nlet n: number = 1;\n", "jest_globals"),
    ("javascript", "yield /process.exit(0)/ 2;\n", "process"),
    ("javascript", "x = 1 @@ process.exit(0);\n", "process"),
    # --- go -------------------------------------------------------------------------------
    ("go", 'package p\nimport "testing"\nvar _ testing.T\n', "testing"),
    ("go", 'package p\nimport "fmt"\nfunc f() { fmt.Println("--- PASS: TestX") }\n', "runner_output"),
    ("go", 'package p\nimport "fmt"\nfunc f() { fmt.Println("--- PA" + "SS: TestX") }\n', "runner_output"),
    ("go", 'package p\nimport "unsafe"\nvar _ unsafe.Pointer\n', "unsafe"),
    ("go", 'package p\nimport _ "unsafe"\n//go:linkname now runtime.nanotime\nfunc now() int64\n', "directives"),
    ("go", 'package p\nimport "runtime"\nfunc f() { runtime.Callers(0, nil) }\n', "runtime_introspection"),
    ("go", 'package p\nimport . "os"\nfunc f() { Exit(0) }\n', "dot_import"),          # dot import
    ("go", 'package p\nimport "os"\nfunc init() { os.Exit(0) }\n', "process_control"),
    ("go", 'package p\nimport o "os"\nfunc init() { o.Exit(0) }\n', "process_control"),  # aliasing
    ("go", 'package p\nimport "os"\nvar a = os.Args[0]\n', "process_control"),
    ("go", 'package p\nimport "os/exec"\nvar _ = exec.Command\n', "process_modules"),
    ("go", 'package p\nimport "syscall"\nfunc f() { syscall.Exit(0) }\n', "process_modules"),
    ("go", 'package p\nimport "os"\nfunc f() { os.ReadFile("x") }\n', "file_access"),
    ("go", 'package p\nimport "path/filepath"\nvar m, _ = filepath.Glob("*")\n', "file_modules"),
    ("go", 'package p\nvar s = `crypto_square_test.go`\n', "test_source_strings"),
    # --- rust -----------------------------------------------------------------------------
    ("rust", "extern crate test;\n", "extern_crate_test"),
    ("rust", "fn f() { test::black_box(1); }\n", "libtest"),
    ("rust", '#[link_section = ".init_array"]\n#[used]\nstatic INIT: fn() = init;\nfn init() {}\n', "link_attributes"),
    ("rust", '#[cfg_attr(all(), link_section = ".init_array")]\nstatic X: u8 = 0;\n', "link_attributes"),
    ("rust", '#[no_mangle]\npub fn main() {}\n', "link_attributes"),
    ("rust", 'extern "C" { fn exit(code: i32) -> !; }\n', "foreign_abi"),
    ("rust", "fn f() { unsafe { core::arch::asm!(\"nop\") } }\n", "asm_and_includes"),
    ("rust", 'const T: &str = include_str!("../tests/grep.rs");\n', "asm_and_includes"),
    ("rust", "fn f() { unsafe { } }\n", "unsafe"),
    ("rust", "fn f() { std::process::exit(0) }\n", "process_control"),
    ("rust", "use std::process as p;\nfn f() { p::exit(0) }\n", "process_control"),      # aliasing
    ("rust", "use std::{fs, process::{self}};\n", "process_control"),                     # grouped use
    ("rust", "use std as s;\nfn f() { s::process::exit(0) }\n", "process_control"),
    ("rust", "fn f() { let a: Vec<String> = std::env::args().collect(); }\n", "process_control"),
    ("rust", "fn f() { std::panic::set_hook(Box::new(|_| {})); }\n", "process_control"),
    ("rust", "fn f() { r#std::process::exit(0) }\n", "process_control"),                 # raw identifier
    ("rust", 'fn f() { let _ = std::fs::read_to_string("tests/grep.rs"); }\n', "file_access"),
    ("rust", 'const P: &str = "--logfile";\n', "test_source_strings"),
    # --- java -----------------------------------------------------------------------------
    ("java", "import org.junit.jupiter.api.Test;\nclass A {}\n", "junit_imports"),
    ("java", "class A { Object o = org.junit.platform.launcher.core.LauncherFactory.create(); }\n", "junit"),
    ("java", "class A { void f(java.lang.reflect.Field x) { x.setAccessible(true); } }\n", "reflection"),
    ("java", 'class A { void f() throws Exception { Class.forName("x"); } }\n', "reflection"),
    ("java", "class A { static { Runtime.getRuntime().addShutdownHook(new Thread()); } }\n", "process_control"),
    ("java", "class A { void f() { System.exit(0); } }\n", "process_control"),
    ("java", "class A { void f() { \\u0053ystem.exit(0); } }\n", "process_control"),       # unicode escape
    ("java", "class A { void f() { \\u0053\\u0079stem.\\u0065xit(0); } }\n", "process_control"),
    ("java", "import static java.lang.System.exit;\nclass A { void f() { exit(0); } }\n", "process_control"),
    ("java", "import static java.lang.System.*;\nclass A {}\n", "process_control"),
    ("java", "class A { java.util.function.IntConsumer c = System::exit; }\n", "process_control"),
    ("java", 'class A { String s = System.getProperty("sun.java." + "command"); }\n', "process_control"),
    ("java", 'class A { String s = System.getProperty("sun.java.command"); }\n', "process_control"),
    ("java", "class A { sun.misc.Unsafe u; }\n", "reflection"),
    ("java", 'class A { void f() throws Exception { java.nio.file.Files.readString(null); } }\n', "file_access"),
    ("java", 'class A { String s = "src/test/java/ATest.java"; }\n', "test_source_strings"),
    # --- red team 10 (independent, 2026-11-29, on the tree-sitter readers): each ran --------
    ("rust", "macro_rules! leave { ($m:ident, $c:expr) => { std::$m::exit($c) } }\nfn f() { leave!(process, 9) }\n",
     "macro_built_names"),
    ("rust", "macro_rules! call { ($m:ident, $($a:tt)*) => { $m!($($a)*) } }\nconst H: &str = call!(include_str, \"x\");\n",
     "macro_built_names"),
    ("rust", "use std::*;\nuse process as q;\nfn f() { q::exit(11) }\n", "process_control"),
    ("rust", "use std::panic::*;\nfn f() { set_hook(Box::new(|_| {})); }\n", "process_control"),
    ("rust", "macro_rules! place { ($a:meta, $b:meta, $it:item) => { #[$a] #[$b] $it } }\n"
             "place!(used, link_section = concat!(\".init\", \"_array\"), static HOOK: fn() = early;);\n", "linker_words"),
    ("java", "class A { void f() { System.<String>exit(42); } }\n", "process_control"),
    ("java", 'class A { void f() { System none = null; none.getenv("HOME"); } }\n', "process_control"),
    ("java", "class A { void f() { ((Runtime) null).getRuntime().exit(33); } }\n", "process_control"),
    ("java", 'class A { void f() throws Exception { System.class.getMethod("exit", int.class).invoke(null, 7); } }\n',
     "reflection"),
    ("java", 'class A { void f() throws Exception { new java.net.URL("file:///etc/hostname").openStream(); } }\n',
     "file_access"),
    ("go", 'package p\n\nimport (\n\tv2 "os"\n\t"math/rand/v2"\n)\n\nfunc f() { v2.Exit(7); _ = rand.Int() }\n',
     "process_control"),
    ("go", 'package p\n\nimport "log"\n\nfunc f() { log.Fatal("x") }\n', "process_control"),
    # The test binary runs on one P (no torn reads of a data race): no way back to parallel threads.
    ("go", 'package p\n\nimport "runtime"\n\nfunc init() { runtime.GOMAXPROCS(4) }\n', "parallelism"),
    ("go", 'package p\n\nimport r "runtime"\n\nvar set = r.GOMAXPROCS\n', "parallelism"),
    ("javascript", "const m = require.call(null, 'child_process');\n", "computed_module"),
    ("javascript", "const m = require.main.require('child_process');\n", "computed_module"),
    ("javascript", "const F = Function;\nF('return 1')();\n", "code_from_strings"),
    ("javascript", "const c = (() => {}).constructor;\nc('return 1')();\n", "code_from_strings"),
    ("javascript", "const E = Error;\nE.prepareStackTrace = (e, s) => s;\n", "stack_introspection"),
    ("javascript", "const o = { [process.exit(6)](process) {} };\n", "process"),
    ("javascript", "var await = 2, g = 1;\nvar r = await /process.exit(7)/g;\n", "process"),  # a division
    # --- cpp ------------------------------------------------------------------------------
    ("cpp", '#include "test/catch.hpp"\n', "catch"),
    ("cpp", "#define CATCH_CONFIG_EXTERNAL_INTERFACES\n", "catch_config"),
    ("cpp", "struct L : Catch::TestEventListenerBase {};\n", "catch_names"),
    ("cpp", "void f() { asm(\"nop\"); }\n", "asm"),
    ("cpp", "__attribute__((constructor)) static void init() {}\n", "attributes"),
    ("cpp", "[[gnu::constructor]] static void init() {}\n", "attributes"),
    ("cpp", "#define CAT(a, b) a##b\nvoid f() { CAT(sys, tem)(\"ls\"); }\n", "preprocessor_tricks"),  # pasting
    ("cpp", '#define RUN system\nvoid f() { RUN("ls"); }\n', "process_control"),          # macro body
    ("cpp", '#include <cstdlib>\nvoid f() { std::system("ls"); }\n', "process_control"),
    ("cpp", '#include <cstdlib>\nnamespace s = std;\nvoid f() { s::system("ls"); }\n', "process_control"),
    ("cpp", '#include <cstdlib>\nvoid f() { sys\\\ntem("ls"); }\n', "process_control"),   # line splice
    ("cpp", "#include <cstdlib>\nstatic int x = std::atexit(nullptr);\n", "process_control"),
    ("cpp", "#include <cstdlib>\nvoid f() { exit(0); }\n", "process_control"),
    ("cpp", "#include <unistd.h>\n", "process_headers"),
    ("cpp", 'extern "C" long write(int, const void*, unsigned long);\n', "foreign_linkage"),
    ("cpp", 'extern "C" void* _ZN5Catch16getResultCaptureEv();\n', "dynamic_loading"),  # a mangled name
    ("cpp", '#include <cstdio>\nvoid f() { fopen("space_age_test.cpp", "r"); }\n', "file_access"),
    ("cpp", "#include <fstream>\n", "file_headers"),
    ("cpp", '#include "clock_test.cpp"\n', "test_includes"),
    ("cpp", "#define H <fstream>\n#include H\n", "computed_include"),
    ("cpp", 'const char* s = "/proc/self/cmdline";\n', "test_source_strings"),
]


@pytest.mark.parametrize("language, code, rule", ATTACKS,
                         ids=[f"{language}-{index}-{rule}" for index, (language, _, rule) in enumerate(ATTACKS)])
def test_each_forbidden_construct_is_refused_by_its_rule(language: str, code: str, rule: str):
    assert rule in refused_rules(language, code), (rule, refused_rules(language, code))


# Honest code whose words only look like refused constructs.
HONEST = [
    ("python", "# sys._getframe() os._exit(0) import unittest\ndef exit_code(opened, testing):\n"
               "    '''Calls open() and sys.exit in the docs only: test_foo.py.'''\n"
               "    self_test = opened + testing\n    return self_test\n"),
    ("python", "import sys\nsys.setrecursionlimit(10000)\nfrom collections import Counter\n"
               "class Account:\n    def open(self):\n        self.opened = True\n"),
    ("python", "class Robot:\n    def move(self, command):\n        return getattr(self, 'turn_' + command)()\n"
               "    def go(self, command):\n        return getattr(self, f'do_{command}')()\n"
               "    @classmethod\n    def make(cls, kind):\n        return getattr(cls, kind)\n"),
    ("python", "def f(obj):\n    return getattr(obj, 'name', None)\n"),
    ("javascript", "// process.exit(0) expect(x)\n/* globalThis require('fs') */\n"
                   "export const test = (value) => /ab+c/.test(value);\n"
                   "export class Suite { describe() { return 'it'; } }\n"
                   "const options = { it: 1, test: 2, expect: 3 };\n"
                   "export const processed = (items) => items.map((it) => it * 2);\n"),
    ("javascript", "function placePieces(self) { return self.board; }\n"
                   "export function process(input) { return input; }\n"
                   "export const s = 'use process.exit and fs in prose';\n"),
    # Fields are no uses, and every name of one declaration is bound (the token reader refused both).
    ("javascript", "export class Frame { test = 1; globalThis = 2; static process = 3; }\n"
                   "const first = 1, it = 2;\nexport const sum = () => first + it;\n"),
    ("go", "package p\n// os.Exit(0) unsafe //go:linkname\nimport \"strings\"\n"
           "func testingExit(opened int) int { exitCode := opened; return exitCode + len(strings.Fields(\"a\")) }\n"),
    ("rust", "// std::process::exit(0) #[used]\n/* nested /* comment */ unsafe */\n"
             "#[derive(Debug)]\n#[allow(unused)]\npub fn process(used: u8) -> u8 { let exit = used; exit }\n"
             "pub fn lifetimes<'a>(s: &'a str) -> &'a str { s }\n"),
    ("java", "// System.exit(0) setAccessible\nclass A {\n  String s = \"System.exit is prose\";\n"
             "  int exitCode(int testing) { return testing; }\n"
             "  void f() { System.out.println(System.lineSeparator()); }\n"
             "  String nl = System.getProperty(\"line.separator\");\n}\n"),
    ("cpp", "// std::exit(0) asm\n#include <string>\n#include <cstdio>\nclass Account {\n public:\n"
            "  void open();\n  void close();\n};\nvoid Account::open() {}\n"
            "int exit_code(int testing) { int system_value = 1'000; return testing + system_value; }\n"),
]


@pytest.mark.parametrize("language, code", HONEST, ids=[f"{language}-{i}" for i, (language, _) in enumerate(HONEST)])
def test_words_in_comments_strings_and_names_are_not_refused(language: str, code: str):
    assert refused_rules(language, code) == set()


def test_every_language_has_a_policy_with_rules_of_every_category():
    for name, language in LANGUAGES.items():
        if language.source_policy is None:
            continue
        categories = {rule.category for rule in language.source_policy.rules}
        assert categories == set(CATEGORIES), (name, categories)
    assert {"python", "javascript", "go", "rust", "java", "cpp"} <= {
        name for name, language in LANGUAGES.items() if language.source_policy is not None}


def test_a_rule_table_with_an_unknown_category_or_a_repeated_name_is_refused():
    with pytest.raises(PolicyTableError):
        rules(("x", "no_such_category", "name", "x"))
    with pytest.raises(PolicyTableError):
        rules(("x", CATEGORIES[0], "name", "a"), ("x", CATEGORIES[0], "name", "b"))


# --- allowances: the exercise's own files --------------------------------------------------

def test_a_construct_of_the_reference_is_allowed_for_its_exercise_only():
    code = "def grep(path):\n    with open(path) as handle:\n        return handle.read()\n"
    assert "file_access" in refused_rules("python", code)
    own = ExerciseSources(reference={"grep.py": code})
    assert "file_access" not in refused_rules("python", code, own)


def test_a_construct_of_the_stub_is_allowed():
    stub = ExerciseSources(stub={"solution.py": "import sys\n\ndef main():\n    return sys.argv\n"})
    assert refused_rules("python", "import sys\nx = sys.argv\n", stub) == set()


def test_hidden_tests_allow_what_they_use_but_never_the_test_side():
    tests = ExerciseSources(tests={"grep_test.py": "import unittest\nimport subprocess\nopen('x')\n"})
    refused = refused_rules("python", "import unittest\nimport subprocess\nx = open('y')\n", tests)
    assert refused == {"test_framework", "file_access"}  # subprocess: the tests run the solution as a CLI
    allowed = exercise_allowances(get_language("python").source_policy, tests)
    assert all(rule.category not in TEST_SIDE for rule in get_language("python").source_policy.rules
               if rule.name in allowed)


def test_files_the_policy_does_not_read_are_not_checked():
    policy = get_language("python").source_policy
    assert check(policy, {"notes.txt": "import os\nos._exit(0)\n"}) != ()  # check reads what it is given
    assert refusals(policy, {"notes.txt": "import os\nos._exit(0)\n"}, ExerciseSources()) == ()


def test_a_refusal_names_the_file_the_line_and_the_rule():
    policy = get_language("go").source_policy
    (violation,) = refusals(policy, {"word_tally.go": 'package p\n\nimport "os"\n\nfunc f() { os.Exit(0) }\n'},
                            ExerciseSources())
    assert (violation.path, violation.line, violation.rule) == ("word_tally.go", 5, "process_control")
    assert "word_tally.go:5" in violation.describe() and "process_control" in violation.describe()


# --- the attack fixtures: every forger and early exit is refused -----------------------------

def _fixture_cases() -> list[tuple[str, str, dict[str, str]]]:
    cases = []
    # forgers_policy_only: red-team attacks on in-process channels still open, which only the
    # policy stops (test_forgery.py grades forgers/ with the policy off).
    for meta in sorted([*(FIXTURES / "forgers").glob("*/*/forger.json"),
                        *(FIXTURES / "forgers_policy_only").glob("*/*/forger.json")]):
        language = json.loads(meta.read_text())["instance_id"].split("__")[0]
        files = {p.relative_to(meta.parent / "files").as_posix(): p.read_text()
                 for p in sorted((meta.parent / "files").rglob("*")) if p.is_file()}
        cases.append((f"{meta.parent.parent.name}/{meta.parent.name}", language, files))
    for exercise in sorted((FIXTURES / "early_exit").glob("*/*")):
        files = {p.relative_to(exercise).as_posix(): p.read_text() for p in sorted(exercise.rglob("*")) if p.is_file()}
        cases.append((f"early_exit/{exercise.parent.name}/{exercise.name}", exercise.parent.name, files))
    return cases


@pytest.mark.parametrize("label, language, files", _fixture_cases(), ids=[case[0] for case in _fixture_cases()])
def test_every_forger_and_early_exit_fixture_is_refused(label: str, language: str, files: dict[str, str]):
    assert refusals(get_language(language).source_policy, files, ExerciseSources()), label


# --- the grading path: refused before anything runs ------------------------------------------

def test_grading_refuses_a_forbidden_construct_before_any_sandbox_starts(tmp_path: Path):
    from polyglot_harness.utils.pipeline.grading import GradingRequest, grade

    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "running_total.py").write_text("def running_total(numbers):\n    pass\n")
    (tree / "running_total_test.py").write_text("import unittest\n")
    patch = ("diff --git a/running_total.py b/running_total.py\n--- a/running_total.py\n+++ b/running_total.py\n"
             "@@ -1,2 +1,3 @@\n+import os\n def running_total(numbers):\n-    pass\n+    os._exit(0)\n")
    request = GradingRequest(language=get_language("python"), instance_id="python__running-total", test_tree=tree, patch_text=patch, solution_paths=("running_total.py",),
                             hidden_paths=("running_total_test.py",))
    outcome = grade(None, "unused-image", request)  # None: starting a sandbox would fail the test
    assert not outcome.verdict.resolved and outcome.verdict.reason == Reason.FORBIDDEN_CONSTRUCT
    assert "running_total.py:3" in outcome.verdict.detail and "process_control" in outcome.verdict.detail
    assert outcome.exec_result is None and outcome.eval_script == ""


# --- the real benchmark: 0 refusals on the 225 references ----------------------------------

def _exercise_sources(checkout: Path):
    from polyglot_harness.utils.prepare.exercises import discover_exercises, plan_instance, read_exercise

    for location in discover_exercises(checkout, None):
        plan = plan_instance(read_exercise(location))
        text = lambda files: {f.path: f.content.decode("utf-8", "replace") for f in files}  # noqa: E731
        base = text(plan.base_files)
        stub = {path: base[path] for path in plan.exercise.config.solution if path in base}
        reference = text(plan.reference_files)
        yield location.language, plan.instance_id, reference, ExerciseSources(stub, text(plan.hidden_files), reference)


def test_no_reference_solution_of_the_real_benchmark_is_refused(benchmark_checkout):
    refused = {}
    checked = 0
    for language, instance_id, reference, sources in _exercise_sources(benchmark_checkout):
        checked += 1
        found = refusals(get_language(language).source_policy, reference, sources)
        if found:
            refused[instance_id] = [violation.describe() for violation in found]
    assert checked == 225 and refused == {}


def test_no_stub_of_the_real_benchmark_is_refused(benchmark_checkout):
    refused = {instance_id: refusals(get_language(language).source_policy, dict(sources.stub), sources)
               for language, instance_id, _, sources in _exercise_sources(benchmark_checkout)}
    assert {key: value for key, value in refused.items() if value} == {}


# --- end to end, Docker: the real harness on a real exercise ---------------------------------

@pytest.mark.docker
def test_a_forbidden_construct_is_unresolved_through_the_harness_and_nothing_runs(
        benchmark_checkout, language_images, tmp_path, no_leftover_containers):
    """python__proverb's reference plus one frame lookup, graded from a predictions file by the
    real harness: unresolved, forbidden_construct, no test run; the reference itself resolves."""
    from polyglot_harness.utils.prepare.dataset import prepare_dataset
    from polyglot_harness.utils.run import harness

    dataset = tmp_path / "dataset"
    prepare_dataset(benchmark_checkout, dataset, workers=1, instance_ids=["python__proverb"], log=lambda m: None,
                    record_expected=False)
    from polyglot_harness.utils.pipeline.expected_tests import patch_writing
    from polyglot_harness.utils.records.dataset import load_dataset

    (instance,) = load_dataset(dataset)
    reference = (instance.reference_dir / "proverb.py").read_text()
    forbidden = "import sys\n\nTHE_CALLER = sys._getframe\n" + reference
    records = [{"instance_id": instance.instance_id, "model_name_or_path": name,
                "model_patch": patch_writing(instance, {"proverb.py": text.encode()})}
               for name, text in (("forbidden", forbidden), ("honest", reference))]
    results = {}
    for record in records:
        predictions = tmp_path / f"{record['model_name_or_path']}.jsonl"
        predictions.write_text(json.dumps(record) + "\n")
        outcome = harness(dataset=dataset, output_dir=tmp_path / "runs", progress=False, predictions=predictions,
                          model_name_or_path=record["model_name_or_path"], max_workers=1)
        results[record["model_name_or_path"]] = (outcome, json.loads(
            (outcome.run_dir / f"{instance.instance_id}.json").read_text()))

    outcome, result = results["forbidden"]
    assert (result["eval_result"], result["reason"]) == ("unresolved", "forbidden_construct"), result["detail"]
    assert "proverb.py:3" in result["detail"] and "frames" in result["detail"]
    assert result["test_exit_code"] is None and result["tests"].get("total", 0) == 0  # nothing ran
    assert not (outcome.run_dir / f"{instance.instance_id}_eval.md").exists()
    assert outcome.report["unresolved_ids"] == [instance.instance_id]
    assert outcome.report["reasons"] == {"forbidden_construct": 1}  # counted under its reason
    _, honest = results["honest"]
    assert (honest["eval_result"], honest["reason"]) == ("resolved", "tests_passed"), honest["detail"]


def test_a_refused_instance_is_counted_under_its_reason_in_report_and_html(tmp_path: Path):
    from polyglot_harness.utils.outcomes import Bucket
    from polyglot_harness.utils.records.loaded_run import load_run_dir
    from polyglot_harness.utils.records.results import InstanceResult
    from polyglot_harness.utils.views.html import run_page

    run_dir = tmp_path / "run_0"
    run_dir.mkdir()
    detail = "refused before anything ran: proverb.py:3: 'sys._getframe' (introspection/frames)"
    for instance_id, bucket, reason in (("python__proverb", Bucket.UNRESOLVED, Reason.FORBIDDEN_CONSTRUCT),
                                        ("go__wordy", Bucket.RESOLVED, Reason.TESTS_PASSED)):
        result = InstanceResult(instance_id=instance_id, model_name_or_path="run", eval_result=bucket, success=bucket == Bucket.RESOLVED,
                                language=instance_id.split("__")[0], reason=reason,
                                detail=detail if reason == Reason.FORBIDDEN_CONSTRUCT else "")
        (run_dir / f"{instance_id}.json").write_text(result.to_json())
    (run_dir / "run_settings.json").write_text(json.dumps({"agent": "agent", "dataset_hash": "d1"}) + "\n")

    loaded = load_run_dir(run_dir)
    assert loaded.report.score_json()["reasons"] == {"forbidden_construct": 1, "tests_passed": 1}
    page = run_page(loaded, None)
    assert '"forbidden_construct":1' in page and "introspection/frames" in page  # summary and detail


# A kept file is attacker-chosen: its shape must not make the host's reading slow.
PATHOLOGICAL = {
    "python": "import os\nx = " + "+".join(["1"] * 30000) + "\nos._exit(0)\n",
    "javascript": "f" + "(" * 50000 + ")" * 50000 + "\nprocess.exit(0);\n",
    "go": 'package p\nimport "os"\nvar x = ' + "(" * 30000 + "1" + ")" * 30000 + "\nfunc f() { os.Exit(0) }\n",
    "rust": "fn f() {" + "{" * 30000 + "}" * 30000 + " std::process::exit(0); }\n",
    "java": "class A { int x = " + "(" * 30000 + "1" + ")" * 30000 + "; void f() { System.exit(0); } }\n",
    "cpp": "int f() { return " + "(" * 30000 + "1" + ")" * 30000 + "; }\nvoid g() { std::exit(0); }\n",
}


@pytest.mark.parametrize("language", sorted(PATHOLOGICAL))
def test_deeply_nested_files_are_read_quickly_and_still_refused(language: str):
    import time

    started = time.monotonic()
    refused = refused_rules(language, PATHOLOGICAL[language])
    assert time.monotonic() - started < 10, "reading is not linear in the file's nesting"
    assert "process_control" in refused or "process" in refused, refused


# tree-sitter's `Node.parent` walks down from the root: a reader asking it per node costs a deep
# file its depth squared (a 100000-deep member chain took 450 s); a wide file must not cost its
# width squared either.
JAVASCRIPT_SHAPES = {
    "deep member chain": "a" + ".b" * 50000 + "\nprocess.exit(0);\n",
    "deep computed chain": "a" + "[x]" * 20000 + "\nprocess.exit(0);\n",
    "wide file": "".join(f"{{ let v{i} = {i}; v{i}; }}\n" for i in range(10000)) + "process.exit(0);\n",
}


@pytest.mark.parametrize("shape", sorted(JAVASCRIPT_SHAPES))
def test_javascript_files_are_read_in_time_linear_in_depth_and_width(shape: str):
    import time

    started = time.monotonic()
    refused = refused_rules("javascript", JAVASCRIPT_SHAPES[shape])
    assert time.monotonic() - started < 10, shape
    assert "process" in refused, refused
