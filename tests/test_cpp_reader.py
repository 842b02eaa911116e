"""The C++ policy reader reads what g++ -std=c++17 reads (issue 31), and the runner's include
record reader (docker/cpp/polyglot-cpp-includes) holds against a forged record.

g++ in C++17 mode ignores trigraphs (`??=define` is no directive: checked against the image's
g++ 12), so the reader does too; digraphs, comments and splices inside directives are read as
the compiler reads them.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
from pathlib import Path

import pytest

from polyglot_harness.utils.judging.source_facts import cpp_facts
from polyglot_harness.utils.judging.source_policy import check
from polyglot_harness.utils.languages.cpp import SOURCE_POLICY

INCLUDES = Path(__file__).resolve().parents[1] / "docker" / "cpp" / "polyglot-cpp-includes"


def directives(text: str) -> set[str]:
    return {fact.text for fact in cpp_facts(text) if fact.kind in ("directive", "import")}


@pytest.mark.parametrize("source, expected", [
    ("%:define CATCH_CONFIG_RUNNER\n", "define CATCH_CONFIG_RUNNER"),
    ("#define/**/CATCH_CONFIG_RUNNER\n", "define CATCH_CONFIG_RUNNER"),
    ("#define /* two\nlines */ CATCH_CONFIG_RUNNER\n", "define CATCH_CONFIG_RUNNER"),
    ("#\\\n define CATCH_CONFIG_MAIN\n", "define CATCH_CONFIG_MAIN"),
    ("/* a\n b */ /* c */ %:define CATCH_CONFIG_MAIN\n", "define CATCH_CONFIG_MAIN"),
    ('const char* s = "/*";\n/**/ #define CATCH_CONFIG_MAIN\n', "define CATCH_CONFIG_MAIN"),
    ("%:define CAT(a, b) a%:%:b\n", "##"),
    ("#define CAT(a, b) a /**/ %:%: /**/ b\n", "##"),
    ('%:/**/include "all_your_base_test.cpp"\n', "all_your_base_test.cpp"),
    ("%:include POLY_XSTR(all_your_base_test.cpp)\n", "?"),
])
def test_directives_are_read_as_the_compiler_reads_them(source: str, expected: str):
    assert expected in directives(source)


@pytest.mark.parametrize("source", ["x /*\n*/ #define CATCH_CONFIG_MAIN\n", "??=define CATCH_CONFIG_MAIN\n",
                                    '#define X "%:%:"\n', "std::vector<::std::string> names;\n"])
def test_what_the_compiler_does_not_read_as_a_directive_or_a_paste_is_not_one(source: str):
    assert not {"define CATCH_CONFIG_MAIN", "##"} & directives(source)


def test_digraph_tricks_are_refused_by_the_policy():
    refused = {violation.rule for violation in check(SOURCE_POLICY, {"x.cpp": (
        "%:define CAT(a, b) a%:%:b\n"
        "#define/**/CATCH_CONFIG_RUNNER\n"
        '%:include "all_your_base_test.cpp"\n')})}
    assert {"preprocessor_tricks", "catch_config", "test_includes"} <= refused, refused


def test_brackets_spelled_as_digraphs_pair():
    names = {fact.text for fact in cpp_facts("int a<:3:> = <%1%>;\nvoid f() <% exit(1); %>\n")}
    assert "exit()" in names


def _includes_module():
    loader = importlib.machinery.SourceFileLoader("polyglot_cpp_includes", str(INCLUDES))
    spec = importlib.util.spec_from_loader(loader.name, loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


MAIN = "/tmp/private/x_test.cpp"
START = f'# 0 "{MAIN}"\n# 0 "<built-in>"\n# 0 "<command-line>"\n# 1 "/usr/include/stdc-predef.h" 1 3 4\n' \
        f'# 1 "<command-line>" 2\n# 1 "{MAIN}"\n# 1 "/testbed/x.h" 1\n'


@pytest.mark.parametrize("record, finding", [
    (START + '# 1 "/usr/include/c++/12/vector" 1 3\n# 2 "/testbed/x.h" 2\n# 2 "' + MAIN + '" 2\n'
     '# 1 "/testbed/test/catch.hpp" 1\n# 9 "' + MAIN + '" 2\n', None),
    (START + '# 1 "/testbed/test/catch.hpp" 1\n# 2 "/testbed/x.h" 2\n', "neither a solution file nor a system header"),
    (START + f'# 1 "{MAIN}" 1\n# 2 "/testbed/x.h" 2\n', "includes the test file itself"),
    # A raw string in x.h forging a system header's entry, then the real include of catch.hpp.
    (START + '# 1 "/usr/include/stdio.h" 1 3\n# 1 "/testbed/test/catch.hpp" 1\n# 2 "/testbed/x.h" 2\n',
     "inconsistent"),
    # `#line 1 "/usr/include/stdio.h"` in x.h.
    (START + '# 1 "/usr/include/stdio.h"\n# 1 "/testbed/test/catch.hpp" 1\n', "renamed"),
    # `#pragma GCC system_header` in x.h makes what it includes look like a system header.
    (START + '# 1 "/testbed/test/catch.hpp" 1 3\n# 2 "/testbed/x.h" 2 3\n', "neither a solution file nor a system header"),
])
def test_include_record_refuses_what_reaches_the_tests(record: str, finding: str | None):
    module = _includes_module()
    findings, _, _ = module.include_findings(record, module.Tree(MAIN, "/testbed"))
    if finding is None:
        assert findings == []
    else:
        assert findings and finding in findings[0], findings


def test_catch_guard_and_macros_defined_by_a_solution_are_refused_but_lookalikes_are_not():
    refused = {violation.construct for violation in check(SOURCE_POLICY, {"x.h": (
        "#define TWOBLUECUBES_SINGLE_INCLUDE_CATCH_HPP_INCLUDED\n#define TEST_CASE(...) void f()\n"
        "#define REQUIRE_THROWS_AS(a, b) (void)a\n#define CHECKED 1\n#define REQUIRED_SIZE 2\n")})}
    assert refused == {"define TWOBLUECUBES_SINGLE_INCLUDE_CATCH_HPP_INCLUDED", "define TEST_CASE",
                       "define REQUIRE_THROWS_AS"}, refused
