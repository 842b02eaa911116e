"""Content hashes of directory trees: image recipes, the agent, build-cache keys.

Every tree hash is made the same way: the regular files under the root in path order, each
as `file <POSIX path relative to root> <executable bits, octal>` and the sha256 of its
content. What a caller leaves out (`include`) or rewrites (`content`) is its own business.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Callable, Protocol


class Digest(Protocol):
    def update(self, data: bytes, /) -> None: ...


def _every_file(relative: str) -> bool:
    return True


def _as_is(relative: str, content: bytes) -> bytes:
    return content


def hash_tree_into(digest: Digest, root: Path, include: Callable[[str], bool] = _every_file,
                   content: Callable[[str, bytes], bytes] = _as_is) -> None:
    """Feed the files under `root` that `include` accepts (by relative path) into `digest`,
    each file's bytes passed through `content` first. Links are followed."""
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        relative = path.relative_to(root).as_posix()
        if not include(relative):
            continue
        digest.update(f"file {relative} {path.stat().st_mode & 0o111:o}\n".encode())
        digest.update(hashlib.sha256(content(relative, path.read_bytes())).hexdigest().encode())


def tree_hash(root: Path, include: Callable[[str], bool] = _every_file,
              content: Callable[[str, bytes], bytes] = _as_is) -> str:
    """The sha256 hex digest of the tree alone (see `hash_tree_into`)."""
    digest = hashlib.sha256()
    hash_tree_into(digest, root, include, content)
    return digest.hexdigest()
