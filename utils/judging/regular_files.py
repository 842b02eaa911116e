"""Regular files only: how the host reads a tree a patch touched, and the patch itself.

A patch may carry nothing but regular files (issue 31). A symlink, a submodule, or a mode
change to either is a CHANNEL: the host code that lists, reads, copies or tars the tree would
follow it to any file of the host (the dataset's reference, a secret) and hand its bytes to the
solution. So:
- `irregular_patch_entries` reads every header line of the patch text the appliers would obey
  (git's `new file mode`, `old mode`/`new mode`, `deleted file mode`, the mode on an `index`
  line): any mode but a regular file's makes the instance `not_a_regular_file`, before anything
  is applied, read or run;
- `irregular_entries` walks a tree without following anything (lstat): a tree holding anything
  but regular files and directories is refused the same way, whatever made it;
- `regular_files` and `read_regular` are the readers every host-side consumer of a patched
  tree uses (guard, source policy, canary planter, un-skip, the solution copy, tar): they
  refuse a link (NotARegularFile) instead of resolving it, even where the walk above already
  ran, so a reader added later that forgets the walk still cannot follow one.
The list of those readers, and the test of each, is in docs/verdict.md ("Regular files only").
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import Callable, Iterator

# git's modes of a regular file (644 and 755 as git writes them, and the short forms old
# patches and `patch` accept).
REGULAR_MODES = frozenset({"100644", "100755", "100664", "644", "755", "664"})
_MODE_LINE = re.compile(r"^(new[ \t]+file[ \t]+mode|deleted[ \t]+file[ \t]+mode|old[ \t]+mode|new[ \t]+mode"
                        r"|index[ \t]+[0-9a-fA-F]+\.\.[0-9a-fA-F]+)[ \t]+([0-7]+)\s*$")
_DIFF_GIT = re.compile(r"^diff --git (?:a/)?(\S+)")
_KINDS = {"120000": "symlink", "160000": "submodule", "040000": "directory", "40000": "directory"}


class NotARegularFile(OSError):
    """A path in a patched tree is not a regular file (or a directory, where one is walked)."""


def mode_kind(mode: str) -> str:
    return _KINDS.get(mode, f"mode {mode}")


def header_entries(patch_text: str, describe: Callable[[str, str], str | None]) -> tuple[str, ...]:
    """What `describe(entry path, header line)` says of each header line of `patch_text` (None:
    nothing), in order, once each; the entry is the path of the `diff --git` line above it.
    A hunk line always starts with ' ', '+', '-' or '\\', so a line that starts like a header
    is one the appliers obey."""
    found: list[str] = []
    current = "?"
    for line in patch_text.splitlines():
        header = _DIFF_GIT.match(line)
        if header:
            current = header.group(1)
            continue
        said = describe(current, line.rstrip("\r"))
        if said is not None and said not in found:
            found.append(said)
    return tuple(found)


def _not_regular_mode(entry: str, line: str) -> str | None:
    mode_line = _MODE_LINE.match(line)
    if mode_line is None or mode_line.group(2) in REGULAR_MODES:
        return None
    return f"{entry} ({mode_kind(mode_line.group(2))}, git mode {mode_line.group(2)})"


def irregular_patch_entries(patch_text: str) -> tuple[str, ...]:
    """Entries of `patch_text` that would make anything but a regular file ("path (symlink,
    git mode 120000)"), read from the header lines themselves."""
    return header_entries(patch_text, _not_regular_mode)


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISLNK, "symlink"), (stat.S_ISFIFO, "fifo"), (stat.S_ISSOCK, "socket"),
                       (stat.S_ISCHR, "character device"), (stat.S_ISBLK, "block device")):
        if test(mode):
            return name
    return "special file"


def _walk(tree: Path) -> Iterator[tuple[str, os.stat_result]]:
    """(relative posix path, lstat) of every entry under `tree`, never entering a link."""
    pending = [tree]
    while pending:
        directory = pending.pop()
        with os.scandir(directory) as entries:
            for entry in sorted(entries, key=lambda item: item.name):
                status = entry.stat(follow_symlinks=False)
                relative = Path(entry.path).relative_to(tree).as_posix()
                yield relative, status
                if stat.S_ISDIR(status.st_mode):
                    pending.append(Path(entry.path))


def irregular_entries(tree: Path) -> tuple[str, ...]:
    """Everything under `tree` that is neither a regular file nor a directory ("path (symlink)"),
    found without following anything."""
    return tuple(f"{relative} ({_kind(status.st_mode)})" for relative, status in _walk(tree)
                 if not (stat.S_ISREG(status.st_mode) or stat.S_ISDIR(status.st_mode)))


def regular_files(tree: Path) -> list[str]:
    """The regular files under `tree` (sorted relative posix paths); NotARegularFile on any
    other entry but a directory."""
    files: list[str] = []
    for relative, status in _walk(tree):
        if stat.S_ISREG(status.st_mode):
            files.append(relative)
        elif not stat.S_ISDIR(status.st_mode):
            raise NotARegularFile(f"{relative} is a {_kind(status.st_mode)}, not a regular file")
    return sorted(files)


def _check_parents(root: Path, relative: str) -> None:
    current = root
    for part in Path(relative).parts[:-1]:
        current = current / part
        if os.path.islink(current):
            raise NotARegularFile(f"{Path(relative).parent.as_posix()} passes through a symlink ({current.name})")


def read_regular(root: Path, relative: str) -> bytes:
    """The bytes of `root/relative` when it is a regular file reached through no link."""
    _check_parents(root, relative)
    try:
        descriptor = os.open(root / relative, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as error:
        if os.path.islink(root / relative):
            raise NotARegularFile(f"{relative} is a symlink, not a regular file") from error
        raise
    with os.fdopen(descriptor, "rb") as handle:
        status = os.fstat(handle.fileno())
        if not stat.S_ISREG(status.st_mode):
            raise NotARegularFile(f"{relative} is a {_kind(status.st_mode)}, not a regular file")
        return handle.read()


def is_regular(root: Path, relative: str) -> bool:
    """Whether `root/relative` is a regular file reached through no link (no exception)."""
    try:
        _check_parents(root, relative)
        return stat.S_ISREG(os.lstat(root / relative).st_mode)
    except (NotARegularFile, OSError):
        return False
