"""The benchmark fetched when no checkout is given: a shallow clone, cached and reused."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Callable

from .exercises import CheckoutError


DEFAULT_BENCHMARK_URL = "https://github.com/Aider-AI/polyglot-benchmark"
CLONE_TIMEOUT_S = 900


def default_cache_root() -> Path:
    cache_home = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache_home) / "polyglot-harness" / "benchmarks"


def fetch_benchmark(url: str, cache_root: Path | None = None, log: Callable[[str], None] = print) -> Path:
    """A shallow clone of `url`, made once and reused (keyed by a hash of the URL)."""
    cache_root = cache_root or default_cache_root()
    checkout = cache_root / hashlib.sha256(url.encode()).hexdigest()[:16]
    if (checkout / ".git").exists():
        log(f"Using the cached clone of {url} in {checkout}")
        return checkout
    log(f"Cloning {url} into {checkout}")
    cache_root.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".clone-", dir=cache_root))
    try:
        _shallow_clone(url, staging / "checkout")
        if not checkout.exists():
            os.rename(staging / "checkout", checkout)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return checkout


def _shallow_clone(url: str, destination: Path) -> None:
    # core.autocrlf/eol: file bytes (and so commit hashes) must not depend on user config.
    command = ["git", "-c", "core.autocrlf=false", "-c", "core.eol=lf", "clone", "--depth", "1", "--quiet", "--", url, str(destination)]
    hint = "without network access, pass --benchmark_dir with a local checkout"
    try:
        result = subprocess.run(
            command, capture_output=True, text=True, timeout=CLONE_TIMEOUT_S,
            env={**os.environ, "GIT_TERMINAL_PROMPT": "0"},
        )
    except FileNotFoundError:
        raise CheckoutError(f"cannot clone {url}: git is not installed; {hint}") from None
    except subprocess.TimeoutExpired:
        raise CheckoutError(f"cannot clone {url}: no answer within {CLONE_TIMEOUT_S}s; {hint}") from None
    if result.returncode != 0:
        lines = [line.strip() for line in result.stderr.splitlines() if line.strip()]
        reason = lines[-1] if lines else f"git exited with {result.returncode}"
        raise CheckoutError(f"cannot clone {url}: {reason}; {hint}")
