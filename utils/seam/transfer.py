"""Helpers every backend shares: capped output, the end marker, sandbox names, tar in and out."""

from __future__ import annotations

import io
import tarfile
import time
from pathlib import Path

from ..judging.regular_files import NotARegularFile
from .protocol import OUTPUT_CAP
from .errors import SandboxError

class CappedOutput:
    """Keeps the first and last `cap/2` bytes of a stream."""

    def __init__(self, cap: int = OUTPUT_CAP) -> None:
        self.half = cap // 2
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped = 0

    def add(self, chunk: bytes) -> None:
        if len(self.head) < self.half:
            room = self.half - len(self.head)
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            if len(self.tail) > self.half:
                excess = len(self.tail) - self.half
                self.dropped += excess
                del self.tail[:excess]

    @property
    def truncated(self) -> bool:
        return self.dropped > 0

    def text(self) -> str:
        marker = f"\n[... {self.dropped} bytes of output dropped ...]\n".encode() if self.dropped else b""
        return (bytes(self.head) + marker + bytes(self.tail)).decode("utf-8", errors="replace")


def strip_end_marker(output: str, marker: str) -> tuple[str, bool]:
    """(output without the trailing end marker line, whether the marker was there)."""
    suffix = f"\n{marker}\n"
    if output.endswith(suffix):
        return output[:-len(suffix)], True
    return output, False


def sandbox_name(run_id: str, instance_id: str, role: str, suffix: str) -> str:
    safe_instance = "".join(c if c.isalnum() or c in "-_." else "-" for c in instance_id)
    return f"polyglot-{run_id}-{safe_instance}-{role}-{suffix}"


def _parent_entries(tar: tarfile.TarFile, prefix: str, owner: int | None) -> None:
    parts = [part for part in prefix.split("/") if part]
    for depth in range(1, len(parts) + 1):
        info = tarfile.TarInfo("/".join(parts[:depth]))
        info.type = tarfile.DIRTYPE
        info.mode = 0o755
        info.mtime = int(time.time())
        tar.addfile(_owned(info, owner if depth == len(parts) else None))


def _owned(info: tarfile.TarInfo, owner: int | None) -> tarfile.TarInfo:
    """The entry owned by `owner` (uid and gid), or by root."""
    info.uid = info.gid = owner or 0
    info.uname = info.gname = ""
    return info


def _joined(prefix: str, name: str) -> str:
    return f"{prefix}/{name}" if prefix else name


def tar_directory(source: Path, prefix: str = "", owner: int | None = None) -> bytes:
    """`source`'s contents under `prefix`, every entry owned by `owner` (None: root); the
    parents of `prefix` are root's, `prefix` itself is the owner's."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        _parent_entries(tar, prefix, owner)
        for path in sorted(source.rglob("*")):
            info = tar.gettarinfo(path, arcname=_joined(prefix, path.relative_to(source).as_posix()))
            if info.isreg():
                with path.open("rb") as content:
                    tar.addfile(_owned(info, owner), content)
            elif info.isdir():
                tar.addfile(_owned(info, owner))
            else:
                # Only regular files and directories ever enter a sandbox (a link would point
                # at whatever the sandbox holds under that name).
                raise NotARegularFile(f"{path.relative_to(source).as_posix()} is not a regular file or a directory")
    return buffer.getvalue()


def files_from_tar(archive: bytes, path: str, max_bytes: int) -> dict[str, bytes]:
    """Regular files of a tar of `path` (its top entry being `path`'s own name) as
    {name relative to path: content}; more than `max_bytes` in all is a SandboxError."""
    files: dict[str, bytes] = {}
    if not archive:
        return files
    total = 0
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        for member in tar.getmembers():
            if not member.isfile():
                continue
            total += member.size
            if total > max_bytes:
                raise SandboxError(f"{path} holds more than {max_bytes} bytes")
            name = member.name.split("/", 1)[1] if "/" in member.name else member.name
            files[name] = tar.extractfile(member).read()
    return files
