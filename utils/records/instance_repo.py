"""Instance git repositories, written object by object.

An instance has two repositories (see `utils/records/dataset.py` for where they live):

- the agent repo: a normal repository whose `.git` holds only the base commit's objects,
  with its worktree and index at the base commit (branch `main`);
- the grading repo: a bare repository holding the base commit and its child, the test
  commit (branches `base` and `test`, HEAD at `test`).

Why objects are written here instead of with `git add`/`git commit`: one git process per
file is too slow for 225 exercises, and a user's git configuration (commit.gpgsign,
core.autocrlf, init.defaultBranch, templates, hooks) must not change the result. Objects
are hashed the way git hashes them (SHA-1 of `<type> <size>\\0<body>`) and stored in one
pack per repository, with a fixed identity and date, so the commit hashes depend only
on the files and messages.
"""

from __future__ import annotations

import hashlib
import itertools
import struct
import zlib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping, Sequence

import git

AGENT_BRANCH = "main"
GRADING_BASE_BRANCH = "base"
GRADING_TEST_BRANCH = "test"

# Every commit is authored and committed by this identity at 2000-01-01T00:00:00Z.
COMMIT_IDENTITY = "Polyglot Harness <polyglot-harness@example.invalid>"
COMMIT_TIMESTAMP = "946684800 +0000"

_REGULAR_MODE = 0o100644
_EXECUTABLE_MODE = 0o100755
_TREE_MODE = "40000"
_PACK_TYPE_CODES = {"commit": 1, "tree": 2, "blob": 3}
_EMPTY_BLOB_ABBREV = "0000000"


class InstanceRepoError(Exception):
    """An instance repository could not be written or read."""


@dataclass(frozen=True)
class RepoFile:
    """One file of a commit: POSIX path relative to the repo root, bytes, exec bit."""

    path: str
    content: bytes
    executable: bool = False

    @property
    def mode(self) -> int:
        return _EXECUTABLE_MODE if self.executable else _REGULAR_MODE


@dataclass(frozen=True)
class BlobEntry:
    path: str
    mode: int
    sha: str


@dataclass(frozen=True)
class InstanceCommits:
    base_commit: str
    test_commit: str
    # Blob ids of the files the test commit adds (for the diff's index lines).
    hidden_blobs: tuple[BlobEntry, ...]


class ObjectSet:
    """Objects bound for packs, keyed by id in insertion order, each deflated once."""

    def __init__(self) -> None:
        # object id -> its entry in a pack file (type/size header + deflated body)
        self.pack_entries: dict[str, bytes] = {}

    def add(self, kind: str, body: bytes) -> str:
        sha = hashlib.sha1(f"{kind} {len(body)}\0".encode() + body).hexdigest()
        if sha not in self.pack_entries:
            self.pack_entries[sha] = _pack_entry_header(_PACK_TYPE_CODES[kind], len(body)) + zlib.compress(body)
        return sha


def _pack_entry_header(type_code: int, size: int) -> bytes:
    header = bytearray()
    byte = (type_code << 4) | (size & 0x0F)
    size >>= 4
    while size:
        header.append(byte | 0x80)
        byte = size & 0x7F
        size >>= 7
    header.append(byte)
    return bytes(header)


def write_pack(objects_dir: Path, pack_entries: Mapping[str, bytes]) -> None:
    """One pack (+ version-2 index) holding exactly `pack_entries`, no deltas.

    A pack instead of loose objects: two files per repository instead of dozens keeps
    writing, deleting and copying (into containers) the 450 repositories fast.
    """
    pack = bytearray(b"PACK" + struct.pack(">II", 2, len(pack_entries)))
    offsets: dict[str, int] = {}
    for sha, entry in pack_entries.items():
        offsets[sha] = len(pack)
        pack += entry
    if len(pack) >= 2**31:
        raise InstanceRepoError(f"pack for {objects_dir} exceeds 2 GiB, which 4-byte index offsets cannot address")
    pack_checksum = hashlib.sha1(pack).digest()
    pack += pack_checksum
    ordered = sorted(pack_entries)
    first_byte_counts = Counter(int(sha[:2], 16) for sha in ordered)
    fanout = list(itertools.accumulate(first_byte_counts.get(byte, 0) for byte in range(256)))
    index = bytearray(b"\377tOc" + struct.pack(">I", 2) + struct.pack(">256I", *fanout))
    index += b"".join(bytes.fromhex(sha) for sha in ordered)
    index += b"".join(struct.pack(">I", zlib.crc32(pack_entries[sha])) for sha in ordered)
    index += b"".join(struct.pack(">I", offsets[sha]) for sha in ordered)  # packs stay far below 2 GiB
    index += pack_checksum
    index += hashlib.sha1(index).digest()
    pack_dir = objects_dir / "pack"
    pack_dir.mkdir(parents=True, exist_ok=True)
    name = f"pack-{pack_checksum.hex()}"
    # git discovers a pack through its .idx, so the .idx is written last.
    for suffix, data in ((".pack", pack), (".idx", index)):
        path = pack_dir / (name + suffix)
        path.write_bytes(bytes(data))
        path.chmod(0o444)


def write_blobs(store: ObjectSet, files: Iterable[RepoFile]) -> list[BlobEntry]:
    return [BlobEntry(f.path, f.mode, store.add("blob", f.content)) for f in files]


def write_tree(store: ObjectSet, entries: Iterable[BlobEntry]) -> str:
    root: dict = {}
    for entry in entries:
        *dirs, name = entry.path.split("/")
        node = root
        for directory in dirs:
            node = node.setdefault(directory, {})
        node[name] = entry
    return _write_tree_node(store, root)


def _write_tree_node(store: ObjectSet, node: dict) -> str:
    records: list[tuple[bytes, bytes]] = []
    for name, child in node.items():
        encoded = name.encode()
        if isinstance(child, dict):
            sha = _write_tree_node(store, child)
            # git orders a directory as if its name ended with "/"
            records.append((encoded + b"/", f"{_TREE_MODE} ".encode() + encoded + b"\0" + bytes.fromhex(sha)))
        else:
            records.append((encoded, f"{child.mode:o} ".encode() + encoded + b"\0" + bytes.fromhex(child.sha)))
    records.sort(key=lambda record: record[0])
    return store.add("tree", b"".join(body for _, body in records))


def write_commit(store: ObjectSet, tree: str, parent: str | None, message: str) -> str:
    lines = [f"tree {tree}"]
    if parent:
        lines.append(f"parent {parent}")
    lines.append(f"author {COMMIT_IDENTITY} {COMMIT_TIMESTAMP}")
    lines.append(f"committer {COMMIT_IDENTITY} {COMMIT_TIMESTAMP}")
    body = "\n".join(lines) + "\n\n" + message.rstrip("\n") + "\n"
    return store.add("commit", body.encode())


def init_git_dir(git_dir: Path, *, bare: bool, head_branch: str) -> None:
    """An empty repository: what `git init` makes, minus hooks, templates and user config."""
    (git_dir / "objects").mkdir(parents=True)
    (git_dir / "refs" / "heads").mkdir(parents=True)
    (git_dir / "HEAD").write_text(f"ref: refs/heads/{head_branch}\n")
    # Local settings win over the user's global ones when someone runs git here later.
    (git_dir / "config").write_text(
        "[core]\n"
        "\trepositoryformatversion = 0\n"
        "\tfilemode = true\n"
        f"\tbare = {'true' if bare else 'false'}\n"
        "\tautocrlf = false\n"
    )


def write_ref(git_dir: Path, branch: str, commit: str) -> None:
    (git_dir / "refs" / "heads" / branch).write_text(commit + "\n")


def write_index(git_dir: Path, entries: Sequence[BlobEntry]) -> None:
    """A version-2 index matching `entries`, with zeroed stat data.

    Zeroed stat data keeps the file identical on every machine; git re-reads the files
    once on the next `git status` (as it must anyway after the repo is copied).
    """
    ordered = sorted(entries, key=lambda entry: entry.path.encode())
    data = bytearray(b"DIRC" + struct.pack(">II", 2, len(ordered)))
    for entry in ordered:
        name = entry.path.encode()
        record = struct.pack(">10I", 0, 0, 0, 0, 0, 0, entry.mode, 0, 0, 0)
        record += bytes.fromhex(entry.sha) + struct.pack(">H", min(len(name), 0xFFF)) + name
        record += b"\0" * (8 - len(record) % 8)  # 1..8 NULs, as git pads
        data += record
    data += hashlib.sha1(data).digest()
    (git_dir / "index").write_bytes(bytes(data))


def write_worktree(root: Path, files: Iterable[RepoFile]) -> None:
    for repo_file in files:
        path = root / repo_file.path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(repo_file.content)
        path.chmod(0o755 if repo_file.executable else 0o644)


def write_instance_repos(
    agent_dir: Path,
    grading_dir: Path,
    instance_id: str,
    base_files: Sequence[RepoFile],
    hidden_files: Sequence[RepoFile],
) -> InstanceCommits:
    """Write the agent repo (base only) and the grading repo (base + test commit)."""
    agent_git = agent_dir / ".git"
    init_git_dir(agent_git, bare=False, head_branch=AGENT_BRANCH)
    init_git_dir(grading_dir, bare=True, head_branch=GRADING_TEST_BRANCH)

    base = ObjectSet()
    base_blobs = write_blobs(base, base_files)
    base_commit = write_commit(base, write_tree(base, base_blobs), None, f"Base of {instance_id}")
    tests = ObjectSet()
    hidden_blobs = write_blobs(tests, hidden_files)
    test_tree = write_tree(tests, base_blobs + hidden_blobs)
    test_commit = write_commit(tests, test_tree, base_commit, f"Tests of {instance_id}")

    write_pack(agent_git / "objects", base.pack_entries)
    write_pack(grading_dir / "objects", base.pack_entries | tests.pack_entries)
    write_ref(agent_git, AGENT_BRANCH, base_commit)
    write_index(agent_git, base_blobs)
    write_worktree(agent_dir, base_files)
    write_ref(grading_dir, GRADING_BASE_BRANCH, base_commit)
    write_ref(grading_dir, GRADING_TEST_BRANCH, test_commit)
    return InstanceCommits(base_commit, test_commit, tuple(hidden_blobs))


def new_files_patch(files: Sequence[RepoFile], blobs: Sequence[BlobEntry]) -> str:
    """The `git diff` (default options) of a commit that only adds `files`."""
    shas = {blob.path: blob.sha for blob in blobs}
    ordered = sorted(files, key=lambda repo_file: repo_file.path.encode())
    return "".join(_new_file_diff(repo_file, shas[repo_file.path]) for repo_file in ordered)


def _new_file_diff(repo_file: RepoFile, sha: str) -> str:
    path = repo_file.path
    header = f"diff --git a/{path} b/{path}\nnew file mode {repo_file.mode:o}\nindex {_EMPTY_BLOB_ABBREV}..{sha[:7]}\n"
    if not repo_file.content:
        return header
    if b"\0" in repo_file.content[:8000]:
        return header + f"Binary files /dev/null and b/{path} differ\n"
    text = repo_file.content.decode("utf-8")
    lines = text.split("\n")
    missing_newline = lines[-1] != ""
    if not missing_newline:
        lines.pop()
    tab = "\t" if " " in path else ""  # git marks names with spaces this way
    hunk = "@@ -0,0 +1 @@\n" if len(lines) == 1 else f"@@ -0,0 +1,{len(lines)} @@\n"
    body = "".join(f"+{line}\n" for line in lines)
    if missing_newline:
        body += "\\ No newline at end of file\n"
    return header + f"--- /dev/null\n+++ b/{path}{tab}\n" + hunk + body


def read_commit_files(git_dir: Path, commit: str) -> list[RepoFile]:
    """Every file of `commit` (for grading: the test commit's tree)."""
    try:
        repo = git.Repo(git_dir)
        try:
            blobs = [item for item in repo.commit(commit).tree.traverse() if item.type == "blob"]
            return [
                RepoFile(blob.path, blob.data_stream.read(), blob.mode == _EXECUTABLE_MODE)
                for blob in blobs
            ]
        finally:
            repo.close()
    except (git.GitError, ValueError) as error:
        raise InstanceRepoError(f"cannot read commit {commit} of {git_dir}: {error}") from error


def checkout_commit(git_dir: Path, commit: str, dest: Path) -> list[RepoFile]:
    """Write the tree of `commit` into `dest` (no .git), keeping exec bits."""
    files = read_commit_files(git_dir, commit)
    write_worktree(dest, files)
    return files
