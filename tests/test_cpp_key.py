"""The C++ answer key's text functions (utils/languages/cpp_key.py, utils/judging/answer_key.py)
on small fixtures of our own: which assertions convert, which side is observed, what the
rewritten source no longer holds, and the host's comparison."""

from __future__ import annotations

from polyglot_harness.utils.judging.answer_key import _quoted, judge, observed_values, parse_observations
from polyglot_harness.utils.languages import cpp_key

STUB = """#pragma once
#include <vector>
namespace shapes {
enum class kind { round, square, flat };
kind classify(int sides);
std::vector<int> corners(int n);
class box { public: explicit box(int w); int width() const; };
}
"""

TEST = """#include "shapes.h"
#include "test/catch.hpp"

TEST_CASE("literal on the left") {
    REQUIRE(4 == shapes::corners(4).size());
}

TEST_CASE("a local only the expected side uses") {
    std::vector<int> in{1, 2};
    std::vector<int> expected{90, 90, 90, 90};
    std::vector<int> out = shapes::corners(4);
    REQUIRE(expected == out);
}

TEST_CASE("an enumerator") {
    CHECK(shapes::classify(0) == shapes::kind::round);
    REQUIRE(shapes::kind::flat == shapes::classify(2));
}

TEST_CASE("an object of the solution's type") {
    shapes::box b(3);
    REQUIRE(b.width() == 3);
}

TEST_CASE("stays in-process") {
    std::vector<int> expected{1};
    REQUIRE(expected.size() == 1);
    REQUIRE(shapes::corners(1) == shapes::corners(1));
    REQUIRE(1 == 1);
    REQUIRE(shapes::corners(2) != shapes::corners(3));
    REQUIRE(expected == shapes::corners(1));
}
"""


def _words() -> frozenset[str]:
    return cpp_key.solution_words([STUB])


def test_solution_words_are_the_namespace_and_declared_functions():
    assert {"shapes", "classify", "corners", "box", "width"} <= _words()


def test_converted_assertions_and_their_observed_sides():
    found = {candidate.id: candidate for candidate in cpp_key.candidates(TEST, _words())}
    assert set(found) == {"L5", "L12", "L16", "L17", "L22"}
    assert found["L5"].observed == "shapes::corners(4).size()" and found["L5"].side == 1
    assert found["L12"].observed == "out"
    assert found["L16"].side == 0 and found["L17"].side == 1
    assert found["L16"].enumerators == ("shapes::kind::flat", "shapes::kind::round")


def test_a_local_another_statement_uses_keeps_its_assertion_in_process():
    ids = {candidate.id for candidate in cpp_key.candidates(TEST, _words())}
    assert "L31" not in ids  # `expected` is also read by expected.size(), which stays


def test_the_rewrite_removes_expected_values_and_keeps_line_numbers():
    chosen = cpp_key.candidates(TEST, _words())
    rewritten = cpp_key.rewrite(TEST, chosen)
    body = rewritten.split("#line 1\n", 1)[1]
    assert body.count("\n") == TEST.count("\n") + 2  # the test-name function after it
    assert "90, 90" not in body and "REQUIRE(4 ==" not in body
    assert 'polyglot_key::observe<__LINE__>("L12", (out));' in body.splitlines()[11]
    assert "std::vector<int> in{1, 2};" in body  # the solution's input stays
    assert 'polyglot_key::observe_enum<__LINE__>("L17", (shapes::classify(2)), ' in body
    assert "REQUIRE(expected.size() == 1);" in body  # in-process as written


def test_only_the_keys_ids_are_converted():
    chosen = cpp_key.candidates(TEST, _words(), frozenset({"L5"}))
    assert [candidate.id for candidate in chosen] == ["L5"]


def test_compile_errors_name_the_test_lines_not_the_observers():
    output = ("x/shapes_test.cpp:12:5:   required from here\n"
              "x/shapes_test.cpp:100042:17: error: static assertion failed\n")
    assert cpp_key.compile_error_lines(output, "shapes_test.cpp") == {12}
    assert cpp_key.error_ids(output, ["shapes_test.cpp"], frozenset({"shapes_test.cpp:L12", "shapes_test.cpp:L5"})) \
        == {"shapes_test.cpp:L12"}


def test_observations_of_a_canarys_copy_are_left_out():
    report = f'L5\t{_quoted("real one")}\t4\nL5\t{_quoted("the canary")}\t4\nbroken line\n'
    assert observed_values(parse_observations(report), frozenset({"the canary"})) == {"L5": ["4"]}


def test_judge_names_the_assertion_never_the_expected_value():
    key = {"t.cpp:L5": ("4",), "t.cpp:L9": ("[1,2]", "[3]")}
    assert judge(key, {"t.cpp:L5": ["4"], "t.cpp:L9": ["[1,2]", "[3]"]}) is None
    missing = judge(key, {"t.cpp:L5": ["4"], "t.cpp:L9": ["[1,2]"]})
    assert missing.reason == "missing" and "t.cpp:L9" in missing.detail
    wrong = judge(key, {"t.cpp:L5": ["5"], "t.cpp:L9": ["[1,2]", "[3]"]})
    assert wrong.reason == "mismatch" and "t.cpp:L5" in wrong.detail and "4" not in wrong.detail.split("value")[1]
    duplicate = judge(key, {"t.cpp:L5": ["4", "4"], "t.cpp:L9": ["[1,2]", "[3]"]})
    assert duplicate.reason == "mismatch" and "duplicate" in duplicate.detail
    extra = judge(key, {"t.cpp:L5": ["4"], "t.cpp:L9": ["[1,2]", "[3]"], "t.cpp:L77": ["0"]})
    assert extra.reason == "mismatch" and "t.cpp:L77" in extra.detail


def test_the_source_policy_refuses_the_observers_names():
    from polyglot_harness.utils.judging.source_policy import check
    from polyglot_harness.utils.languages.cpp import SOURCE_POLICY

    specialization = ("namespace polyglot_key { template <> std::string render<int>(const int&) { return \"4\"; } }\n"
                      "void polyglot_key_observed() {}\n")
    refused = {violation.rule for violation in check(SOURCE_POLICY, {"x.cpp": specialization})}
    assert "catch_names" in refused
    assert not check(SOURCE_POLICY, {"x.cpp": "int polyglot(int x) { return x; }\n"})


def test_the_key_keeps_only_what_the_reference_run_observed_alike():
    """The reference run (canaries planted, the key's assertions converted) is the second
    observation: an assertion it observed differently, or not at all, stays in-process; the
    others are the key, and the log names what was left out."""
    from types import SimpleNamespace

    from polyglot_harness.utils.pipeline.expected_tests import stable_key

    first = {"t.cpp:L10": ("1",), "t.cpp:L11": ("2", "3"), "t.cpp:L12": ("x",), "t.cpp:L13": ("4",)}
    second = {"t.cpp:L10": ("1",), "t.cpp:L11": ("2", "4"), "t.cpp:L13": ("4",), "t.cpp:L99": ("9",)}
    lines: list[str] = []
    key = stable_key(SimpleNamespace(instance_id="cpp__x"), first, second, lines.append)
    assert key == {"t.cpp:L10": ("1",), "t.cpp:L13": ("4",)}
    assert lines == ["cpp__x: answer key of 2 assertion(s) (4 observed; differing between two runs, left out: "
                     "t.cpp:L11, t.cpp:L12)"]
    assert stable_key(SimpleNamespace(instance_id="cpp__x"), {}, second, lines.append) == {}
    assert stable_key(SimpleNamespace(instance_id="cpp__x"), None, second, lines.append) is None


CALENDAR_STUB = """#pragma once
#include <boost/date_time/posix_time/posix_time.hpp>
namespace later { boost::posix_time::ptime shift(const boost::posix_time::ptime& start); }
"""

CALENDAR_TEST = """#include "later.h"
#include "test/catch.hpp"
using namespace boost::posix_time;

TEST_CASE("a point in time parsed by the library") {
    const ptime actual = later::shift(time_from_string("2001-02-03 04:05:06"));
    const ptime expected(time_from_string("2031-07-08 09:10:11"));
    REQUIRE(expected == actual);
}

TEST_CASE("a local named like a library word") {
    const boost::gregorian::date date{2024, 3, 17};
    REQUIRE(date == later::shift(time_from_string("2001-02-03 04:05:06")).date());
}
"""


def test_boost_dates_on_the_expected_side_convert_and_leave_the_source():
    """gigasecond's and meetup's shapes: the library's pure parsers and constructors may build the
    expected value, and every local the expected side spells is deleted with it, also one named
    like a library word (`date`), so the value is nowhere in the rewritten test."""
    words = cpp_key.solution_words([CALENDAR_STUB])
    found = {candidate.id: candidate for candidate in cpp_key.candidates(CALENDAR_TEST, words)}
    assert set(found) == {"L8", "L13"}
    assert found["L8"].observed == "actual" and len(found["L8"].deleted) == 1
    assert found["L13"].side == 1 and len(found["L13"].deleted) == 1
    body = cpp_key.rewrite(CALENDAR_TEST, list(found.values())).split("#line 1\n", 1)[1]
    assert "2031-07-08" not in body and "2024, 3, 17" not in body
    assert "2001-02-03 04:05:06" in body  # the solution's input stays
