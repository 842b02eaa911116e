"""Model patches: filter to what grading may take, and apply with fallbacks.

Filtering (pure, unidiff-based), by the rules of the instance's language (`PatchRules`: a
`LanguageSpec` is one; this module never imports the languages):
- changes to the instance's solution files are kept;
- NEW files that look like ordinary source for the language (`keeps_new_file`: its
  new_source_globs, e.g. a helper module) are kept, unless they are hidden/test files or on its
  `never_keep_globs` (conftest.py, jest/babel configs, build.rs, ...): an agent may split its
  solution across files, but nothing it adds may change how tests are collected or built;
- build artifacts (`is_artifact`) are dropped silently;
- everything else (edits to tests, build and config files, deletions, binary changes) is
  dropped and recorded as tamper, so grading runs on pristine copies of those files.

Application never touches the caller's files: it works on a directory grading owns and
tries `git apply`, then `git apply --recount --ignore-whitespace`, then `patch --fuzz=3`,
reporting which one applied.

Nothing but content ever reaches an applier (`plain_diff`): every patch applied on the host
(grading, a later try's starting tree, lineage patches) is first re-rendered as traditional
unified diffs, each file's own `---`/`+++` lines and hunks, so git's extended headers (`copy
from`/`rename from` naming any host file, modes, `index`, binary patches) are never obeyed, and
an entry whose two names differ, or whose name is not a plain relative path, is left out. The
filter also names such entries (`copied_or_renamed_file`) from the raw text, where an entry
with no hunk hides its headers from the parser.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Protocol

from unidiff import PatchSet
from unidiff.errors import UnidiffParseError

from .regular_files import header_entries, irregular_patch_entries, is_regular, read_regular


class PatchRules(Protocol):
    """What filtering and guarding need to know of the instance's language."""
    guard: Callable[[str, bytes], str | None]  # a reason when a kept file must be restored

    def is_artifact(self, path: str) -> bool: ...
    def is_hidden(self, path: str) -> bool: ...
    def keeps_new_file(self, path: str) -> bool: ...


class PatchError(ValueError):
    """A patch could not be parsed or applied."""


@dataclass(frozen=True)
class TamperRecord:
    path: str
    # "test_file" | "build_or_config_file" | "new_file" | "deleted_file" | "binary_file" | "renamed_file"
    # | "copied_or_renamed_file" (a git copy/rename header) | "no_hunks" | "unsafe_path"
    why: str


@dataclass(frozen=True)
class FilteredPatch:
    text: str  # the kept part, a valid unified diff ('' when nothing is kept)
    kept_paths: tuple[str, ...]
    tamper: tuple[TamperRecord, ...]
    artifact_paths: tuple[str, ...]
    # Entries that would make anything but a regular file (regular_files.irregular_patch_entries):
    # any one makes the instance not_a_regular_file, whatever else the patch holds.
    not_regular: tuple[str, ...] = ()

    @property
    def is_empty(self) -> bool:
        return not self.kept_paths


def _clean_path(path: str) -> str:
    path = path.rstrip("\r")  # CRLF patches
    for prefix in ("a/", "b/"):
        if path.startswith(prefix):
            return path[len(prefix):]
    return path


def filter_patch(
    patch_text: str, rules: PatchRules, solution_paths: tuple[str, ...], hidden_paths: tuple[str, ...] = ()
) -> FilteredPatch:
    if not patch_text.strip():
        return FilteredPatch("", (), (), ())
    not_regular = irregular_patch_entries(patch_text)
    copied = copied_or_renamed_entries(patch_text)
    try:
        patch = PatchSet(patch_text)
    except UnidiffParseError as error:
        raise PatchError(f"the model patch is not a unified diff: {error}") from error
    if not len(patch) and ("\x00" in patch_text or "\ufffd" in patch_text):
        # Prose is an empty patch (nothing to grade); bytes that are not even text are garbage.
        raise PatchError(f"the model patch ({len(patch_text)} characters) is binary, not a unified diff")
    kept_text: list[str] = []
    kept: list[str] = []
    tamper: list[TamperRecord] = []
    artifacts: list[str] = []
    tamper += [TamperRecord(path, "copied_or_renamed_file") for path in copied]
    for patched_file in patch:
        path = _clean_path(patched_file.target_file if not patched_file.is_removed_file else patched_file.source_file)
        source = _clean_path(patched_file.source_file)
        why = "copied_or_renamed_file" if path in copied else _why_dropped(
            patched_file, path, source, rules, solution_paths, hidden_paths)
        if why == "artifact":
            artifacts.append(path)
        elif why:
            if TamperRecord(path, why) not in tamper:
                tamper.append(TamperRecord(path, why))
        else:
            kept.append(path)
            kept_text.append(patched_file)
    return FilteredPatch(plain_diff(kept_text), tuple(kept), tuple(tamper), tuple(artifacts), not_regular)


def _why_dropped(patched_file, path: str, source: str, rules: PatchRules,
                 solution_paths: tuple[str, ...], hidden_paths: tuple[str, ...]) -> str | None:
    if rules.is_artifact(path):
        return "artifact"
    if path in hidden_paths or source in hidden_paths or rules.is_hidden(path) or rules.is_hidden(source):
        return "test_file"
    if patched_file.is_binary_file:
        return "binary_file"
    if path != source and source != "/dev/null" and not patched_file.is_added_file:
        return "renamed_file"
    if patched_file.is_removed_file:
        return "deleted_file"
    if not renders(patched_file):
        return "unsafe_path" if len(patched_file) else "no_hunks"
    if path in solution_paths:
        return None
    if patched_file.is_added_file:
        if rules.keeps_new_file(path):
            return None
        return "new_file"
    return "build_or_config_file"


# git's extended headers that make a file from ANOTHER path (any path git can read: git does not
# check a copy's source), in every spelling git accepts; a tab may separate the words.
_COPY_OR_RENAME = re.compile(r"^(copy|rename)[ \t]+(from|to|old|new)[ \t]")


def copied_or_renamed_entries(patch_text: str) -> tuple[str, ...]:
    """The entries (their `diff --git` path) that carry a copy or rename header."""
    return header_entries(patch_text, lambda entry, line: entry if _COPY_OR_RENAME.match(line) else None)


_UNSAFE_NAME = re.compile(r"[\x00-\x1f\x7f\"\\]")


def is_plain_name(path: str) -> bool:
    """A relative path inside the tree: not absolute, no `..`, no quote, backslash or control character."""
    return (bool(path) and not path.startswith("/") and ".." not in path.split("/")
            and not _UNSAFE_NAME.search(path))


def renders(patched_file) -> bool:
    """A file diff that plain_diff can render: text hunks, one plain relative name (a new or
    removed file has /dev/null on the other side)."""
    if patched_file.is_binary_file or not len(patched_file):
        return False
    source, target = _clean_path(patched_file.source_file), _clean_path(patched_file.target_file)
    if patched_file.is_added_file:
        return is_plain_name(target)
    if patched_file.is_removed_file:
        return is_plain_name(source)
    return source == target and is_plain_name(target)


def plain_diff(patched_files: Iterable) -> str:
    """`patched_files` as traditional unified diffs: `--- a/P`, `+++ b/P` (/dev/null for a new or
    removed file) and the hunks, nothing else; entries plain_diff cannot render are left out."""
    chunks: list[str] = []
    for patched_file in patched_files:
        if not renders(patched_file):
            continue
        source, target = _clean_path(patched_file.source_file), _clean_path(patched_file.target_file)
        old = "/dev/null" if patched_file.is_added_file else f"a/{source}"
        new = "/dev/null" if patched_file.is_removed_file else f"b/{target}"
        body = "".join(str(hunk) for hunk in patched_file)
        chunks.append(f"--- {old}\n+++ {new}\n{body if body.endswith(chr(10)) else body + chr(10)}")
    return "".join(chunks)


def sanitized(patch_text: str) -> str:
    """Any patch as plain_diff renders it (PatchError when it is not a diff at all)."""
    try:
        return plain_diff(PatchSet(patch_text))
    except UnidiffParseError as error:
        raise PatchError(f"the patch is not a unified diff: {error}") from error


# Code in a kept file that could forge a verdict from inside the test process: ending it
# early, printing a runner's success summary, or reaching into the hidden tests or the test
# framework. Such lines do not change the verdict (legitimate code can match); they are
# listed in the result so a suspiciously easy resolve can be audited. The patterns are
# fragments by kind: the ones below belong to no one language; each language module adds
# its runner's own (LanguageSpec.suspicious). A line gets the first kind that matches, in
# the order of SUSPICIOUS_KINDS (with each kind's regex flags).
SUSPICIOUS_KINDS: dict[str, re.RegexFlag] = {
    "early_exit": re.RegexFlag(0),
    "runner_output": re.I,
    "test_framework": re.I,
    "runner_internals": re.I,  # reaching the runner's process, its arguments or its report
}
SuspiciousFragment = tuple[str, str]  # (kind, regex)
GENERIC_SUSPICIOUS: tuple[SuspiciousFragment, ...] = (
    ("early_exit", r"\b_?[Ee]xit\(0\)"),
    ("early_exit", r"\babort\(\)"),
    ("runner_output", r"\d+ passed"),
    ("runner_output", r"tests? (?:passed|successful)"),
    ("runner_internals", r"/proc/self"),
    ("runner_internals", r"\bfork\("),
    ("runner_internals", r"\.init_array"),
)


class SuspiciousPatternError(ValueError):
    """A suspicious-line fragment names no kind of SUSPICIOUS_KINDS."""


@dataclass(frozen=True)
class SuspiciousPatterns:
    """One regex per kind, in SUSPICIOUS_KINDS order: the alternation of its fragments."""
    by_kind: tuple[tuple[str, re.Pattern[str]], ...]

    @classmethod
    def of(cls, fragments: Iterable[SuspiciousFragment]) -> "SuspiciousPatterns":
        grouped: dict[str, list[str]] = {kind: [] for kind in SUSPICIOUS_KINDS}
        for kind, fragment in fragments:
            if kind not in grouped:
                raise SuspiciousPatternError(f"unknown suspicious-line kind {kind!r}; known: {', '.join(grouped)}")
            if fragment not in grouped[kind]:
                grouped[kind].append(fragment)
        return cls(tuple((kind, re.compile("|".join(f"(?:{fragment})" for fragment in found), SUSPICIOUS_KINDS[kind]))
                         for kind, found in grouped.items() if found))

    def kind_of(self, line: str) -> str | None:
        return next((kind for kind, pattern in self.by_kind if pattern.search(line)), None)


@dataclass(frozen=True)
class SuspiciousLine:
    path: str
    kind: str
    line: str


def audit_patch(kept_text: str, patterns: SuspiciousPatterns, limit: int = 20) -> tuple[SuspiciousLine, ...]:
    """Added lines of the kept patch that match one of `patterns` (at most `limit`)."""
    if not kept_text.strip():
        return ()
    found: list[SuspiciousLine] = []
    for patched_file in PatchSet(kept_text):
        path = _clean_path(patched_file.path)
        for hunk in patched_file:
            for line in hunk:
                if not line.is_added:
                    continue
                kind = patterns.kind_of(line.value)
                if kind is not None:
                    found.append(SuspiciousLine(path, kind, line.value.strip()[:200]))
                if len(found) >= limit:
                    return tuple(found)
    return tuple(found)


def apply_patch(tree: Path, patch_text: str) -> str:
    """Apply `patch_text` inside directory `tree`, as plain_diff renders it (content only:
    no header of it is obeyed); return the method that worked."""
    if not patch_text.strip():
        return "empty"
    patch_text = sanitized(patch_text)
    if not patch_text:
        return "empty"
    with tempfile.NamedTemporaryFile("w", suffix=".diff", delete=False) as handle:
        handle.write(patch_text)
        patch_file = handle.name
    attempts = [
        ("git apply", ["git", "apply", "--whitespace=nowarn", patch_file]),
        ("git apply --recount --ignore-whitespace",
         ["git", "apply", "--recount", "--ignore-whitespace", "--whitespace=nowarn", patch_file]),
        ("patch --fuzz=3", ["patch", "--batch", "--forward", "-p1", "--fuzz=3", "--no-backup-if-mismatch",
                            "-r", "-", "-i", patch_file]),
    ]
    errors = []
    try:
        for method, command in attempts:
            completed = subprocess.run(command, cwd=tree, capture_output=True, text=True,
                                       env={"PATH": "/usr/bin:/bin", "HOME": "/nonexistent",
                                            "GIT_CEILING_DIRECTORIES": str(tree.parent)})
            if completed.returncode == 0:
                return method
            # Each attempt is all-or-nothing here: git apply is atomic, and patch runs last.
            errors.append(f"{method}: {(completed.stderr or completed.stdout).strip().splitlines()[-1:]}")
    finally:
        Path(patch_file).unlink(missing_ok=True)
    raise PatchError("the patch does not apply: " + "; ".join(errors))


def guard_applied_files(tree: Path, pristine: Path, rules: PatchRules,
                        kept_paths: tuple[str, ...]) -> tuple[TamperRecord, ...]:
    """Run the language's guard on every file taken from the patch; a file it rejects is
    restored from `pristine` (or removed when new) and recorded as tamper."""
    records = []
    for path in kept_paths:
        target = tree / path
        if not is_regular(tree, path):
            continue
        why = rules.guard(path, read_regular(tree, path))
        if why is None:
            continue
        if is_regular(pristine, path):
            target.write_bytes(read_regular(pristine, path))
        else:
            target.unlink()
        records.append(TamperRecord(path, why))
    return tuple(records)
