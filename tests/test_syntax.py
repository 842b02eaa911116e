"""The tree-sitter parse layer (utils/judging/syntax.py): character offsets, whatever the bytes."""

import pytest

from polyglot_harness.utils.judging.syntax import Source


@pytest.mark.parametrize("language, text, kind, wanted", [
    ("javascript", "expect(f('héllo ✓')).toEqual([1, 2]);", "array", "[1, 2]"),
    ("rust", "assert_eq!(f(\"naïve\"), vec![3, 4]);", "string_literal", "\"naïve\""),
    ("java", "assertEquals(\"ß\", f(\"ü\"));", "string_literal", "\"ß\""),
])
def test_spans_are_character_offsets_of_the_text(language, text, kind, wanted):
    source = Source(language, text)
    node = next(node for node in source.walk() if node.type == kind)
    start, end = source.span(node)
    assert text[start:end] == wanted == source.text_of(node)
    assert not source.has_errors


def test_a_syntax_error_is_reported_not_raised():
    assert Source("javascript", "expect(f(1).toEqual(;").has_errors
