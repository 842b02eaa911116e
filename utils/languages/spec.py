"""The shape of a language: `LanguageSpec`, the helpers its fields use, and path globs.

A language module (utils/languages/<name>.py) builds one `LanguageSpec` named `LANGUAGE`
holding everything about the language: what the agent sees, the agent's self-check hint,
how grading un-skips, guards, plants canaries into and runs its tests, which runner-report
parser reads the results, and the patterns that flag suspicious lines in a patch. The
registry (utils/languages/__init__.py) lists the modules.

Path patterns are POSIX globs relative to the exercise root, matched with
`path_matches` (`**` spans directories, `*` does not cross `/`).
"""

from __future__ import annotations

import dataclasses
import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping

from ..judging.answer_key import AnswerKey
from ..judging.canaries import Planter
from ..judging.patches import SuspiciousFragment
from ..judging.runner_results import TestCase, TestResults
from ..judging.source_policy import SourcePolicy
from ..judging.variants import VariantDeriver


def path_matches(path: str, pattern: str) -> bool:
    """Glob match where `*` stays inside one path segment and `**/` spans any depth."""
    return _glob_regex(pattern).fullmatch(path) is not None


@functools.lru_cache(maxsize=None)
def _glob_regex(pattern: str) -> re.Pattern[str]:
    return re.compile(_glob_to_regex(pattern))


def _glob_to_regex(pattern: str) -> str:
    out = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return "".join(out)


def matches_any(path: str, patterns: tuple[str, ...]) -> bool:
    return any(path_matches(path, pattern) for pattern in patterns)


def gitignore_line(pattern: str) -> str:
    """`pattern` (a `path_matches` glob) as a .gitignore line that matches the same paths:
    a pattern without a directory part is anchored at the root, as `path_matches` reads it
    (gitignore would match it at any depth)."""
    body = pattern[3:] if pattern.startswith("**/") else pattern
    return pattern if pattern.startswith("**/") or "/" in body else "/" + pattern


def no_guard(path: str, content: bytes) -> str | None:
    return None


def no_unskip(text: str) -> str:
    return text


def no_static_skips(path: str, text: str) -> tuple[str, ...]:
    return ()


def origin_unknown(case: TestCase) -> str | None:
    """The runner does not say which file a test is in, or it only runs tests of files a
    solution cannot add (Go's *_test.go, pytest's test_*.py): every test counts as hidden."""
    return None


def origin_is_file(case: TestCase) -> str | None:
    """The runner names the test's file itself (libtest's target source, jest's test file)."""
    return case.origin or None


@dataclass(frozen=True)
class BuildCache:
    """A compiler cache shared by grading containers through a named volume. Only trusted
    code writes it: `warm_command` runs on the pristine test-commit tree (no patch) with the
    volume read-write; every container that runs code under test mounts it read-only."""
    mount_path: str
    # Test-tree files whose content (plus the image) decides whether a warm-up is due.
    key_globs: tuple[str, ...]
    warm_command: str  # run in /testbed; "{key}" is replaced by the warm-up key
    reader_env: tuple[tuple[str, str], ...]
    writer_env: tuple[tuple[str, str], ...]


class ExerciseNameError(ValueError):
    """A build file lacks the line that names the exercise after its directory."""


@dataclass(frozen=True)
class ExerciseNameLine:
    """A build file that names the exercise after its directory (C++'s CMakeLists.txt).

    In a container the directory is /testbed, not the slug, so preparation writes the name
    in (`named`); a build-cache key leaves the written name out (`unnamed`): it does not
    change what a shared compile produces. Every exercise of the language must have the file.
    """
    path: str
    # Regex of the line that takes the name from the directory, and how messages show it.
    from_directory: str
    shown_as: str
    # The line that replaces it; "{slug}" stands for the exercise's slug.
    explicit: str

    def named(self, slug: str, text: str) -> str:
        """`text` with the directory-derived name replaced by `slug`; ExerciseNameError
        when there is no such line."""
        line = self.explicit.format(slug=slug)
        rewritten, count = re.subn(self.from_directory, lambda _: line, text)
        if count == 0:
            raise ExerciseNameError(
                f"{self.path} has no `{self.shown_as}` line to replace with an explicit exercise name")
        return rewritten

    def unnamed(self, content: bytes) -> bytes:
        """`content` without its explicit name lines, whatever the slug."""
        prefix = self.explicit.partition("{slug}")[0].strip().encode()
        return b"\n".join(line for line in content.splitlines() if not line.strip().startswith(prefix))


@dataclass(frozen=True)
class TrustedProcess:
    """Grading in two processes (the trust boundary: docs/verdict.md, "The trusted test process").

    The test process (the runner, the hidden tests, the report) runs as RUNNER_UID in
    /testbed, which grading makes 0700; the solution process runs as SOLUTION_UID on a copy of
    the solution files in SOLUTION_DIR (readable, not writable), and answers the test
    process's requests over a Unix socket. Only plain data crosses by value; the test process
    decides every comparison and writes the report. Neither program comes from the exercise:
    both are in the language image."""
    # Files of the graded tree (path globs) the solution process gets: the solution files and
    # what is needed to load them, never a hidden file.
    solution_globs: tuple[str, ...]
    # Started first, in the background, as SOLUTION_UID in SOLUTION_DIR (network none, output
    # discarded); "{socket}" is replaced. It connects to the socket (retrying while it does not
    # exist yet), serves requests until the connection closes, then exits. It loads no
    # solution code before the first request.
    solver_command: str
    # Replaces LanguageSpec.test_command, run as RUNNER_UID in /testbed with TMPDIR private
    # (0700). Placeholders: {report_dir} (0700), {socket} (a path in a directory grading makes
    # 0711: the test process binds, listens and makes the socket 0666), {solution_dir}. It
    # writes the report test_command writes, so parsing, canaries and verdicts are unchanged.
    test_command: str
    # Exercises (slugs) that keep in-process grading, each with the reason (docs/verdict.md lists them).
    in_process: tuple[tuple[str, str], ...] = ()

    def applies_to(self, slug: str) -> bool:
        return slug not in dict(self.in_process)

    def solution_files(self, tree_paths: list[str], is_hidden: Callable[[str], bool]) -> list[str]:
        """The tree's paths the solution process gets: matching solution_globs, never hidden."""
        return [path for path in tree_paths if matches_any(path, self.solution_globs) and not is_hidden(path)]


# Never part of a patch, in any language.
COMMON_ARTIFACTS = (".git/**", "**/.DS_Store")


@dataclass(kw_only=True, frozen=True)
class LanguageSpec:
    name: str
    # --- what the agent is told (through --test_description: the agent cannot import this) ---
    display_name: str  # "C++"
    # How to check work without the hidden tests. Scratch files go to /tmp (or are deleted
    # afterwards) so they never end up in the patch.
    self_check_hint: str
    # --- image -----------------------------------------------------------------------
    # Recipe directory under docker/ (Dockerfile + build-context files).
    image_recipe: str
    # A command that prints the toolchain version (used to verify the image).
    version_command: str
    # --- what the agent sees ---------------------------------------------------------
    # Exercise files the agent never sees, in addition to everything under .meta/ and the
    # files .meta/config.json lists under "test" and "example". ("invalidator" files are
    # build files the agent needs to build the stub, so they stay visible.)
    hidden_globs: tuple[str, ...]
    # New files the agent may add that grading keeps (non-test source files).
    new_source_globs: tuple[str, ...]
    # New files never taken from a patch even when they look like source: they could change
    # how tests are collected, configured or built.
    never_keep_globs: tuple[str, ...]
    # Build artifacts never included in a model patch (the agent's repo ignores them too:
    # `gitignore_lines`).
    artifact_globs: tuple[str, ...]
    # --- grading ---------------------------------------------------------------------
    # Files (globs) the un-skip transformation rewrites in the grading tree.
    unskip_globs: tuple[str, ...]
    unskip: Callable[[str], str]
    # Shell script run in the grading tree (cwd = repo root), network off. It must write
    # the runner's machine-readable report into {report_dir}.
    test_command: str
    # Reads the report directory (a mapping of file name -> content) into results: one of
    # the format parsers in utils/judging/runner_results.py.
    parse_results: Callable[[dict[str, str]], TestResults]
    # The file a reported test is defined in, read from where the runner says it came from
    # (TestCase.origin; a path relative to the exercise, or absolute in the container), or
    # None when the runner does not say. Preparation records as expected only the tests
    # of the hidden test files (`defined_in_hidden`): a solution's own tests (a reference's
    # `#[cfg(test)] mod tests` in src/lib.rs) are never required.
    test_file: Callable[[TestCase], str | None] = origin_unknown
    # A second command, run as SOLUTION_UID in the grading tree after test_command exited 0:
    # it runs what test_command built from a file that uid may execute and never read (the
    # test binary owned by RUNNER_UID, mode 0111: no reading the hidden tables out of it by
    # any name, /proc/self/exe included). It writes its report into {report_dir} (a directory
    # of its own), which grading reads with test_command's; {build_report_dir} is
    # test_command's. "": test_command runs the tests.
    run_command: str = ""
    # Reference-only manifest overrides for the oracle: (source in exercise, destination).
    reference_overrides: tuple[tuple[str, str], ...] = ()
    # Checked on every file grading takes from a patch, after application: a reason string
    # means the file is restored to its pristine state and recorded as tamper.
    guard: Callable[[str, bytes], str | None] = no_guard
    build_cache: BuildCache | None = None
    # Environment that turns on a cache baked into the image (built from no exercise at all),
    # set in grading containers only: each container writes to its own copy-on-write layer,
    # so what code under test writes there no other grading sees.
    image_cache_env: tuple[tuple[str, str], ...] = ()
    # How canary tests are planted into this language's test files (utils/judging/canaries.py).
    canaries: Planter | None = None
    # A build file preparation must name the exercise in (see ExerciseNameLine).
    exercise_name_line: ExerciseNameLine | None = None
    # Constructs no solution needs, refused in the kept files before anything runs
    # (utils/judging/source_policy.py); None: the language has no policy.
    source_policy: SourcePolicy | None = None
    # Regex fragments, by kind, of lines in a kept patch that could forge a verdict through
    # this language's runner (utils/judging/patches.py: audit_patch).
    suspicious: tuple[SuspiciousFragment, ...] = ()
    # Grading in a trusted process the solution cannot touch (None: in-process only).
    trusted: TrustedProcess | None = None
    # Hidden assertions rewritten to report values the host compares with a key recorded at
    # preparation (utils/judging/answer_key.py; None: every assertion runs in-process).
    answer_key: AnswerKey | None = None
    # The stub's signatures pinned at compile time (issue 32): (the graded tree, the test-commit
    # tree holding the stub, the reference's directory or None, the hidden paths) -> (the paths
    # pinned, after adding to the hidden tests what fails to compile on a changed signature;
    # the names the probe resolves that the solution's own declarations would take over);
    # and the marker such a compile error shows. None: nothing pinned.
    pin_signatures: Callable[[Path, Path, Path | None, tuple[str, ...]],
                             tuple[tuple[str, ...], tuple[str, ...]]] | None = None
    signature_marker: str = ""
    # Fresh variants of the hidden tests, derived at preparation (utils/judging/variants.py,
    # utils/pipeline/variant_recording.py; None: the language has none).
    variants: VariantDeriver | None = None
    # The tests a hidden test file (path, un-skipped text) leaves skipped on purpose, by the
    # names the runner reports, read from its source alone (jest's `test.skip`): grading
    # allows them even when no reference run recorded `expected_skips`.
    static_skips: Callable[[str, str], tuple[str, ...]] = no_static_skips

    def is_hidden(self, path: str) -> bool:
        return path.startswith(".meta/") or matches_any(path, self.hidden_globs)

    def defined_in_hidden(self, case: TestCase, hidden_paths: tuple[str, ...]) -> bool:
        """Whether `case` is one of the instance's hidden tests (a test whose file the runner
        does not name counts as one). An absolute path is the container's: it matches the
        hidden path it ends with."""
        path = self.test_file(case)
        if path is None:
            return True
        return any(path == hidden or path.endswith("/" + hidden) for hidden in hidden_paths)

    def hidden_tests(self, results: TestResults, hidden_paths: tuple[str, ...]) -> TestResults:
        """`results` less the tests defined outside the hidden test files: what preparation
        records as expected, so what grading requires of every solution."""
        return dataclasses.replace(results, cases=tuple(case for case in results.cases
                                                        if self.defined_in_hidden(case, hidden_paths)))

    def is_artifact(self, path: str) -> bool:
        return matches_any(path, self.artifact_globs)

    def keeps_new_file(self, path: str) -> bool:
        """Whether grading takes a file the patch adds (neither hidden nor an artifact)."""
        return matches_any(path, self.new_source_globs) and not matches_any(path, self.never_keep_globs)

    def skipped_by_source(self, hidden_files: Mapping[str, str]) -> tuple[str, ...]:
        """The tests the hidden files (path -> text) keep skipped after un-skipping, sorted."""
        return tuple(sorted({name for path, text in hidden_files.items()
                             for name in self.static_skips(path, self.unskip_text(path, text))}))

    def unskip_text(self, path: str, text: str) -> str:
        if matches_any(path, self.unskip_globs):
            return self.unskip(text)
        return text

    def cache_key_content(self, path: str, content: bytes) -> bytes:
        """What of a test-tree file decides a build-cache warm-up: its content, less the
        exercise's name."""
        if self.exercise_name_line is not None and path == self.exercise_name_line.path:
            return self.exercise_name_line.unnamed(content)
        return content

    def gitignore_lines(self) -> tuple[str, ...]:
        """The artifact globs as .gitignore lines (the repository's own .git is left out)."""
        return tuple(gitignore_line(pattern) for pattern in self.artifact_globs if not pattern.startswith(".git/"))
