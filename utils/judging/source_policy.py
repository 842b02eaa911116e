"""The source policy: constructs no Exercism solution needs, refused before anything runs.

Pure: a language's policy (`SourcePolicy`, the data beside its spec in
utils/languages/<name>.py) says which kept files it reads, how it turns a file into facts
(utils/judging/source_facts.py: Python through its syntax tree; Go, Rust and Java through
tree-sitter's leaves (tree_facts.py) and JavaScript through its syntax tree
(utils/languages/javascript_facts.py); C++ through a tokenizer; comments dropped, strings read
as strings) and which facts it refuses
(`Rule`: a regex over one kind of fact, in a category of the vocabulary below).

Allowances are the exercise's own: a rule a fact of the exercise's stub, support files or
reference solution matches is off for that exercise (go__grep's reference opens files); the
hidden tests switch a rule off too unless the rule names the test side itself (the test
framework, the test sources), which every test file uses by nature. No list of exercises
is kept by hand.

A refusal is a `Violation`: the file, its line, the rule and the construct, in the verdict's
detail (reason `forbidden_construct`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping

from ..outcomes import PolicyCategory

# The categories of the vocabulary (utils/outcomes.py; docs/verdict.md, "The source policy"), by
# their short names here and in the language modules' rule tables.
TEST_FRAMEWORK = PolicyCategory.TEST_FRAMEWORK
INTROSPECTION = PolicyCategory.INTROSPECTION
PROCESS_CONTROL = PolicyCategory.PROCESS_CONTROL
TEST_SOURCES = PolicyCategory.TEST_SOURCES
CATEGORIES: tuple[PolicyCategory, ...] = tuple(PolicyCategory)
# Categories whose rules the hidden tests cannot switch off: the tests use their framework
# and are test sources by nature, a solution never needs either.
TEST_SIDE = (TEST_FRAMEWORK, TEST_SOURCES)

# Kinds of facts an extractor yields (source_facts.Fact.kind).
NAME = "name"            # a qualified name as used, aliases resolved: `sys._getframe`, `std::process::exit`
IMPORT = "import"        # a module, package, header or crate path a file imports or includes
STRING = "string"        # a string literal's value (adjacent literals joined by `+` folded)
DIRECTIVE = "directive"  # attributes, pragmas, compiler directives, macro machinery
FACT_KINDS = (NAME, IMPORT, STRING, DIRECTIVE)


@dataclass(frozen=True)
class Fact:
    kind: str
    text: str
    line: int


@dataclass(frozen=True)
class Rule:
    name: str      # unique in its language's table: what a refusal and an allowance name
    category: str  # one of CATEGORIES
    kind: str      # the fact kind it reads (FACT_KINDS)
    pattern: str   # regex searched in the fact's text

    @property
    def regex(self) -> re.Pattern[str]:
        return _compiled(self.pattern)


_REGEXES: dict[str, re.Pattern[str]] = {}


def _compiled(pattern: str) -> re.Pattern[str]:
    if pattern not in _REGEXES:
        _REGEXES[pattern] = re.compile(pattern)
    return _REGEXES[pattern]


class PolicyTableError(ValueError):
    """A rule table names an unknown category or fact kind, or one rule name twice."""


def rules(*rows: tuple[str, str, str, str]) -> tuple[Rule, ...]:
    """A language's table, row by row (name, category, kind, pattern), checked once."""
    table = tuple(Rule(*row) for row in rows)
    for rule in table:
        if rule.category not in CATEGORIES or rule.kind not in FACT_KINDS:
            raise PolicyTableError(f"rule {rule.name}: category {rule.category!r} / kind {rule.kind!r} unknown")
        re.compile(rule.pattern)
    names = [rule.name for rule in table]
    if len(set(names)) != len(names):
        raise PolicyTableError(f"a rule name is used twice in {names}")
    return table


@dataclass(frozen=True)
class SourcePolicy:
    # Files the policy reads, by name ending (every source file the compiler or interpreter
    # may load; the patch filter decides which of them a patch can bring at all).
    suffixes: tuple[str, ...]
    extract: Callable[[str], tuple[Fact, ...]]
    rules: tuple[Rule, ...]

    def reads(self, path: str) -> bool:
        return path.endswith(self.suffixes)


@dataclass(frozen=True)
class Violation:
    path: str
    line: int
    rule: str
    category: str
    construct: str

    def describe(self) -> str:
        return f"{self.path}:{self.line}: {self.construct[:80]!r} ({self.category}/{self.rule})"


@dataclass(frozen=True)
class Allowances:
    """The rules the exercise's own files switch off, each with the first file that did."""
    by_rule: Mapping[str, str] = field(default_factory=dict)

    def __contains__(self, rule: str) -> bool:
        return rule in self.by_rule


@dataclass(frozen=True)
class ExerciseSources:
    """The exercise's own files ({path: text} each), where its allowances come from."""
    stub: Mapping[str, str] = field(default_factory=dict)       # the solution files as the agent got them
    tests: Mapping[str, str] = field(default_factory=dict)      # the hidden test files
    reference: Mapping[str, str] = field(default_factory=dict)  # the reference solution (.meta)


def matches(policy: SourcePolicy, facts: Iterable[Fact]) -> Iterable[tuple[Fact, Rule]]:
    by_kind: dict[str, list[Rule]] = {}
    for rule in policy.rules:
        by_kind.setdefault(rule.kind, []).append(rule)
    for fact in facts:
        for rule in by_kind.get(fact.kind, ()):
            if rule.regex.search(fact.text):
                yield fact, rule


def allowances(policy: SourcePolicy, own_files: Mapping[str, str], test_files: Iterable[str] = ()) -> Allowances:
    """The rules matched by the exercise's own files ({path: text}: stub, support files,
    reference, hidden tests); a file in `test_files` switches off no TEST_SIDE rule."""
    tests = set(test_files)
    allowed: dict[str, str] = {}
    for path, text in sorted(own_files.items()):
        for _, rule in matches(policy, policy.extract(text)):
            if path in tests and rule.category in TEST_SIDE:
                continue
            allowed.setdefault(rule.name, path)
    return Allowances(allowed)


def exercise_allowances(policy: SourcePolicy, sources: ExerciseSources) -> Allowances:
    own = {f"reference:{path}": text for path, text in sources.reference.items() if policy.reads(path)}
    own.update({f"stub:{path}": text for path, text in sources.stub.items() if policy.reads(path)})
    tests = {f"tests:{path}": text for path, text in sources.tests.items() if policy.reads(path)}
    return allowances(policy, {**own, **tests}, tests)


def refusals(policy: SourcePolicy, kept: Mapping[str, str], sources: ExerciseSources) -> tuple[Violation, ...]:
    """What the policy refuses in `kept` (the patch's files as grading has them) for this
    exercise: every file the policy reads, less what the exercise's own files allow."""
    return check(policy, {path: text for path, text in kept.items() if policy.reads(path)},
                 exercise_allowances(policy, sources))


def check(policy: SourcePolicy, files: Mapping[str, str], allowed: Allowances = Allowances()) -> tuple[Violation, ...]:
    """Every refused construct of `files` ({path: text}, the kept files the policy reads),
    in path and line order."""
    found: dict[tuple[str, int, str], Violation] = {}
    for path, text in sorted(files.items()):
        for fact, rule in matches(policy, policy.extract(text)):
            if rule.name not in allowed:  # one refusal per line and rule: its first construct
                found.setdefault((path, fact.line, rule.name), Violation(path, fact.line, rule.name, rule.category,
                                                                         fact.text))
    return tuple(sorted(found.values(), key=lambda v: (v.path, v.line, v.rule)))


def summary(violations: tuple[Violation, ...], limit: int = 5) -> str:
    """The verdict's detail: the first refusals, file, line and rule each."""
    shown = "; ".join(violation.describe() for violation in violations[:limit])
    more = f" (and {len(violations) - limit} more)" if len(violations) > limit else ""
    return f"refused before anything ran: {shown}{more}"
