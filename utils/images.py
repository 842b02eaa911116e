"""Images: base image ▶ common layer ▶ language image (▶ agent layer, see agent_image.py).

Every image built here is tagged by a content hash of everything that defines it: its
recipe directory under docker/, the id of the image it is built FROM, and (for the common
layer) the CA bundle's content. A tag that exists is never rebuilt; a missing one is built
under a cross-process file lock so two harness runs never build the same image at once.
Each build's output goes to a log file under CACHE_DIR/build-logs/.
"""

from __future__ import annotations

import fcntl
import hashlib
import io
import os
import shutil
import subprocess
import tarfile
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

import docker
import docker.errors
from docker.utils import kwargs_from_env

from utils.languages import LANGUAGES, LanguageSpec
from utils.tree_hash import hash_tree_into

PROJECT_ROOT = Path(__file__).resolve().parent.parent
RECIPES_DIR = PROJECT_ROOT / "docker"
CACHE_DIR = Path(os.environ.get("POLYGLOT_CACHE_DIR", Path.home() / ".cache" / "polyglot-harness"))
DEFAULT_BASE_IMAGE = os.environ.get("POLYGLOT_BASE_IMAGE", "debian:bookworm-slim")
DEBIAN_MIRROR = os.environ.get("POLYGLOT_DEBIAN_MIRROR", "http://deb.debian.org/debian")
CA_BUNDLE_ENV = "POLYGLOT_CA_BUNDLE"
SYSTEM_CA_BUNDLE = "/etc/ssl/certs/ca-certificates.crt"  # Debian's ca-certificates bundle
IMAGE_REPOSITORY = "polyglot-harness"
BUILD_TIMEOUT_S = 3600

Log = Callable[[str], None]


class ImageError(RuntimeError):
    """An image could not be found, pulled or built."""


@dataclass(frozen=True)
class ImageSettings:
    base_image: str = DEFAULT_BASE_IMAGE
    ca_bundle: Path | None = None  # PEM file installed into every image's trust store

    @staticmethod
    def from_env(base_image: str | None = None, ca_bundle: str | None = None) -> "ImageSettings":
        """`ca_bundle` (else $POLYGLOT_CA_BUNDLE): a PEM path, "none", or "auto" (the default:
        the host's system bundle when it exists, so TLS-intercepting proxies work)."""
        choice = ca_bundle if ca_bundle is not None else os.environ.get(CA_BUNDLE_ENV, "auto")
        if choice in ("", "none"):
            bundle = None
        elif choice == "auto":
            bundle = SYSTEM_CA_BUNDLE if Path(SYSTEM_CA_BUNDLE).is_file() else None
        elif Path(choice).is_file():
            bundle = choice
        else:
            raise ImageError(f"CA bundle {choice} is not a file (give a PEM path, 'auto' or 'none')")
        return ImageSettings(base_image=base_image or DEFAULT_BASE_IMAGE, ca_bundle=Path(bundle) if bundle else None)


@dataclass(frozen=True)
class ImageResult:
    name: str
    tag: str
    built: bool
    seconds: float
    log_path: Path | None


def docker_client(timeout: int = 120) -> docker.DockerClient:
    try:
        return docker.from_env(timeout=timeout)
    except docker.errors.DockerException as error:
        raise ImageError(f"cannot reach the Docker engine ({error}); run docker/ensure_engine.sh") from error


# --- base image ----------------------------------------------------------------------

def ensure_base_image(client: docker.DockerClient, tag: str, log: Log = print) -> ImageResult:
    """The base image under `tag`: present, pulled, or built with debootstrap (air-gapped)."""
    started = time.monotonic()
    if _image_exists(client, tag):
        return ImageResult("base", tag, False, time.monotonic() - started, None)
    with _build_lock(f"base-{tag}"):
        if _image_exists(client, tag):
            return ImageResult("base", tag, False, time.monotonic() - started, None)
        try:
            client.images.pull(tag)
            return ImageResult("base", tag, True, time.monotonic() - started, None)
        except docker.errors.APIError as error:
            log(f"base image {tag}: pull failed ({_first_line(error)}); building it with debootstrap instead")
        log_path = _log_path(f"base-{tag.replace(':', '-').replace('/', '-')}")
        _debootstrap_import(client, tag, log_path)
        return ImageResult("base", tag, True, time.monotonic() - started, log_path)


def _debootstrap_import(client: docker.DockerClient, tag: str, log_path: Path) -> None:
    if shutil.which("debootstrap") is None:
        _run_logged(["apt-get", "update", "-q"], log_path)
        _run_logged(["apt-get", "install", "-y", "-q", "debootstrap"], log_path)
    suite = tag.split(":", 1)[1].split("-")[0] if ":" in tag else "bookworm"
    with tempfile.TemporaryDirectory(prefix="polyglot-rootfs-") as rootfs:
        _run_logged(["debootstrap", "--variant=minbase", suite, rootfs, DEBIAN_MIRROR], log_path)
        for cache in ("var/cache/apt/archives", "var/lib/apt/lists"):
            for entry in Path(rootfs, cache).glob("*.deb" if "archives" in cache else "*_*"):
                entry.unlink(missing_ok=True)
        archive = subprocess.Popen(["tar", "-C", rootfs, "--numeric-owner", "-c", "."], stdout=subprocess.PIPE)
        assert archive.stdout is not None
        repository, _, image_tag = tag.partition(":")
        client.api.import_image_from_stream(archive.stdout, repository=repository, tag=image_tag or "latest")
        if archive.wait() != 0:
            raise ImageError(f"tar of the debootstrap tree failed; see {log_path}")
    if not _image_exists(client, tag):
        raise ImageError(f"docker import of {tag} did not produce the image; see {log_path}")


def _run_logged(command: list[str], log_path: Path) -> None:
    with open(log_path, "ab") as log_file:
        log_file.write(f"$ {' '.join(command)}\n".encode())
        log_file.flush()
        completed = subprocess.run(command, stdout=log_file, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    if completed.returncode != 0:
        raise ImageError(f"{' '.join(command[:2])} failed (exit {completed.returncode}); see {log_path}")


# --- recipe images ---------------------------------------------------------------------

def recipe_hash(recipe_dir: Path, parent_image_id: str, extra_files: dict[str, bytes]) -> str:
    """Hash of the recipe files (paths + contents + modes), the parent image id and extras."""
    digest = hashlib.sha256()
    digest.update(f"parent {parent_image_id}\n".encode())
    hash_tree_into(digest, recipe_dir)
    for name in sorted(extra_files):
        digest.update(f"extra {name}\n".encode())
        digest.update(hashlib.sha256(extra_files[name]).hexdigest().encode())
    return digest.hexdigest()[:16]


def ensure_recipe_image(
    client: docker.DockerClient,
    name: str,
    recipe_dir: Path,
    parent_tag: str,
    parent_arg: str,
    extra_files: dict[str, bytes] | None = None,
    log: Log = print,
) -> ImageResult:
    """Build `recipe_dir` FROM `parent_tag` (passed as build-arg `parent_arg`) unless cached."""
    started = time.monotonic()
    extra_files = extra_files or {}
    parent_id = client.images.get(parent_tag).id
    tag = f"{IMAGE_REPOSITORY}/{name}:{recipe_hash(recipe_dir, parent_id, extra_files)}"
    if _image_exists(client, tag):
        return ImageResult(name, tag, False, time.monotonic() - started, None)
    with _build_lock(tag):
        if _image_exists(client, tag):
            return ImageResult(name, tag, False, time.monotonic() - started, None)
        log_path = _log_path(tag.replace("/", "-").replace(":", "-"))
        context = _build_context(recipe_dir, extra_files)
        _build(tag, context, {parent_arg: parent_tag}, {"polyglot-harness.recipe": name}, log_path)
        return ImageResult(name, tag, True, time.monotonic() - started, log_path)


def _build_context(recipe_dir: Path, extra_files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for path in sorted(recipe_dir.rglob("*")):
            tar.add(path, arcname=path.relative_to(recipe_dir).as_posix(), recursive=False)
        for name, content in sorted(extra_files.items()):
            info = tarfile.TarInfo(name)
            info.size = len(content)
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(content))
    return buffer.getvalue()


def _build(tag: str, context: bytes, buildargs: dict[str, str], labels: dict[str, str], log_path: Path) -> None:
    api = docker.APIClient(**_api_kwargs())
    with open(log_path, "w", encoding="utf-8") as log_file:
        log_file.write(f"# docker build -t {tag} (build args {buildargs})\n")
        try:
            stream = api.build(
                fileobj=io.BytesIO(context), custom_context=True, tag=tag, buildargs=buildargs,
                labels=labels, rm=True, forcerm=True, pull=False, decode=True,
            )
            for chunk in stream:
                if "stream" in chunk:
                    log_file.write(chunk["stream"])
                elif "error" in chunk:
                    log_file.write(f"ERROR: {chunk['error']}\n")
                    raise ImageError(f"building {tag} failed: {_first_line(chunk['error'])} (log: {log_path})")
                elif "status" in chunk:
                    log_file.write(f"{chunk['status']}\n")
                log_file.flush()
        except docker.errors.APIError as error:
            raise ImageError(f"building {tag} failed: {_first_line(error)} (log: {log_path})") from error
        finally:
            api.close()


def _api_kwargs() -> dict:
    # The SDK's env parsing (DOCKER_HOST, TLS) with a long timeout: some build steps are
    # quiet for minutes.
    return dict(kwargs_from_env(), timeout=BUILD_TIMEOUT_S)


# --- language images -------------------------------------------------------------------

def ca_bundle_bytes(settings: ImageSettings) -> bytes:
    return settings.ca_bundle.read_bytes() if settings.ca_bundle else b""


def ensure_common_image(client: docker.DockerClient, settings: ImageSettings, log: Log = print) -> ImageResult:
    ensure_base_image(client, settings.base_image, log)
    return ensure_recipe_image(
        client, "common", RECIPES_DIR / "common", settings.base_image, "BASE_IMAGE",
        {"ca-bundle.pem": ca_bundle_bytes(settings)}, log,
    )


def ensure_language_image(
    client: docker.DockerClient, spec: LanguageSpec, settings: ImageSettings, log: Log = print
) -> ImageResult:
    common = ensure_common_image(client, settings, log)
    return ensure_recipe_image(
        client, spec.name, RECIPES_DIR / spec.image_recipe, common.tag, "COMMON_IMAGE", None, log
    )


def ensure_all_images(
    client: docker.DockerClient, settings: ImageSettings, languages: list[str] | None = None, log: Log = print
) -> list[ImageResult]:
    results = [ensure_base_image(client, settings.base_image, log), ensure_common_image(client, settings, log)]
    for name in languages or list(LANGUAGES):
        results.append(ensure_language_image(client, LANGUAGES[name], settings, log))
    return results


# --- helpers -------------------------------------------------------------------------------

def _image_exists(client: docker.DockerClient, tag: str) -> bool:
    try:
        client.images.get(tag)
        return True
    except docker.errors.ImageNotFound:
        return False


@contextmanager
def _build_lock(key: str) -> Iterator[None]:
    lock_dir = CACHE_DIR / "locks"
    lock_dir.mkdir(parents=True, exist_ok=True)
    safe = hashlib.sha256(key.encode()).hexdigest()[:24]
    with open(lock_dir / f"{safe}.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _log_path(stem: str) -> Path:
    log_dir = CACHE_DIR / "build-logs"
    log_dir.mkdir(parents=True, exist_ok=True)
    return log_dir / f"{stem}.{time.strftime('%Y%m%dT%H%M%S')}.log"


def _first_line(error: object) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__
