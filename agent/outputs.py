"""What the agent leaves behind: the markdown transcript, agent_usage.json, model_patch.diff.

All three are written as the run goes, so a process killed at any point still leaves them.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

@dataclass
class Usage:
    model: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    calls: int = 0  # model calls that returned an answer
    failed_calls: int = 0  # model calls that errored or timed out (retried or not)
    steps: int = 0
    stop_reason: str = "running"
    stop_detail: str = ""
    seconds: float = 0.0

    def write(self, path: Path) -> None:
        _write_atomically(path, json.dumps(asdict(self), indent=2) + "\n")


class Transcript:
    """Readable markdown, appended and flushed entry by entry."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._handle = open(path, "w", encoding="utf-8")

    def heading(self, text: str) -> None:
        self._write(f"## {text}\n\n")

    def text(self, text: str) -> None:
        self._write(f"{text}\n\n")

    def block(self, title: str, body: str, language: str = "") -> None:
        self._write(f"**{title}**\n\n{fenced(body, language)}\n\n")

    def note(self, text: str) -> None:
        self._write(f"> {text}\n\n")

    def close(self) -> None:
        if not self._handle.closed:
            self._handle.close()

    def _write(self, text: str) -> None:
        if not self._handle.closed:
            self._handle.write(text)
            self._handle.flush()


def fenced(body: str, language: str = "") -> str:
    """A code fence longer than any backtick run in the body, so output cannot break out."""
    longest = max((len(run) for run in re.findall(r"`+", body)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{body.rstrip()}\n{fence}"


class GitError(Exception):
    """A git command failed while the model patch was being written."""


def write_model_patch(git_dir: Path, base_commit: str, patch_path: Path, excluded: tuple[str, ...] = ()) -> str:
    """Diff the working tree (untracked files included) against base_commit into patch_path.

    A throwaway index keeps the repository's real index and HEAD untouched. Build artifacts
    stay out because git ignores them: the harness lists the language's in the repository's
    .git/info/exclude before the agent starts (agent/README.md). `excluded` are extra paths
    (relative to git_dir) to leave out, e.g. the agent's own outputs.
    """
    pathspec = ["."] + [f":(exclude,glob){glob}" for glob in excluded]
    with tempfile.TemporaryDirectory(prefix="agent-index-") as index_dir:
        env = {**os.environ, "GIT_INDEX_FILE": str(Path(index_dir) / "index")}
        _git(git_dir, env, "read-tree", base_commit)
        _git(git_dir, env, "add", "-A", "--", *pathspec)
        diff = _git(
            git_dir, env, "diff", "--cached", "--binary", "--no-color", "--no-ext-diff",
            "--no-renames", "--src-prefix=a/", "--dst-prefix=b/", base_commit,
        )
    # Bytes end to end: solution files need not be UTF-8.
    _write_atomically(patch_path, diff)
    return diff.decode("utf-8", errors="replace")


def _git(git_dir: Path, env: dict[str, str], *args: str) -> bytes:
    command = ["git", "-c", "safe.directory=*", "-c", "core.quotePath=false", *args]
    completed = subprocess.run(command, cwd=git_dir, env=env, capture_output=True, timeout=60)
    if completed.returncode != 0:
        stderr = completed.stderr.decode("utf-8", errors="replace").strip()
        raise GitError(f"git {' '.join(args[:2])} failed: {stderr}")
    return completed.stdout


def _write_atomically(path: Path, content: str | bytes) -> None:
    temporary = path.with_name(f".{path.name}.tmp")
    data = content.encode("utf-8") if isinstance(content, str) else content
    temporary.write_bytes(data)
    os.replace(temporary, path)
