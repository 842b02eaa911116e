"""Shared build caches for grading (a language spec's `build_cache`, e.g. ccache for C++).

The cache lives in a named volume per (language, image). Trust model: a warm-up container
runs the spec's warm command on the PRISTINE test-commit tree (no patch, no agent code) with
the volume read-write; grading containers, which run code under test, mount it read-only.
So no solution can plant an entry that another instance's grading would use.
"""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path
from typing import Callable

from ..languages import LanguageSpec, matches_any
from ..seam.protocol import SHARED_CACHE_PREFIX, Limits, SandboxSpec, SandboxProvider
from ..seam.errors import SandboxError
from .pools import Sandboxes
from ..seam.tree_hash import tree_hash

_warmed: set[tuple[str, str]] = set()
_locks: dict[tuple[str, str], threading.Lock] = {}
_locks_guard = threading.Lock()
WARM_TIMEOUT_S = 300


def cache_volume(language: LanguageSpec, image: str) -> str:
    return f"{SHARED_CACHE_PREFIX}{language.name}-{hashlib.sha256(image.encode()).hexdigest()[:12]}"


def reader_mounts(language: LanguageSpec, image: str) -> tuple[tuple[str, str, str], ...]:
    if language.build_cache is None:
        return ()
    return ((cache_volume(language, image), language.build_cache.mount_path, "ro"),)


def reader_env(language: LanguageSpec) -> tuple[tuple[str, str], ...]:
    return language.build_cache.reader_env if language.build_cache else ()


def warm_key(language: LanguageSpec, test_tree: Path) -> str:
    """Hash of the key files (`key_globs`), each as the spec's `cache_key_content` sees it:
    the exercise's name, which does not change what the cached compile produces, left out."""
    assert language.build_cache is not None
    key_globs = language.build_cache.key_globs
    return tree_hash(test_tree, lambda relative: matches_any(relative, key_globs), language.cache_key_content)[:20]


def ensure_warm(sandboxes: Sandboxes, language: LanguageSpec, image: str, test_tree: Path, instance_id: str,
                limits: Limits, log: Callable[[str], None]) -> None:
    """Warm the cache for this test tree once per (volume, key); failures only cost speed."""
    if language.build_cache is None:
        return
    volume, key = cache_volume(language, image), warm_key(language, test_tree)
    with _locks_guard:
        lock = _locks.setdefault((volume, key), threading.Lock())
    with lock:
        if (volume, key) in _warmed:
            return
        command = language.build_cache.warm_command.format(key=key)
        log(f"warming the shared build cache {volume} ({key}) on the pristine test tree: {command}")
        warm_spec = SandboxSpec(image=image, role="cache-warm", network="none", limits=limits,
                                environment=language.build_cache.writer_env,
                                volumes=((volume, language.build_cache.mount_path, "rw"),),
                                user=None)  # root owns the cache; graders (the runner user) only read it
        try:
            with sandboxes.start(warm_spec, instance_id) as box:
                box.put_directory(test_tree, "/testbed")
                result = box.exec(command, WARM_TIMEOUT_S, workdir="/testbed")
        except SandboxError as error:
            log(f"cache warm-up failed ({error}); grading compiles without it")
            return
        if result.exit_code == 0:
            _warmed.add((volume, key))
        else:
            log(f"cache warm-up exited {result.exit_code}; grading compiles without it:\n{result.output[-2000:]}")


def prune_caches(provider: SandboxProvider) -> int:
    """Remove the provider's shared caches no sandbox uses (re-warmed on demand)."""
    removed = provider.remove_caches()
    with _locks_guard:
        _warmed.clear()
    return removed
