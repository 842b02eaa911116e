"""Images: base image ▶ common layer ▶ language image (▶ agent layer, see ensure_agent_image).

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
from pathlib import Path
from typing import Callable, Iterator

import docker
import docker.errors
from docker.utils import kwargs_from_env

from ...seam.errors import ImageError
from ...seam.image_settings import ImageResult, ImageSettings
from ...seam.agent import AGENT_DIR_IN_CONTAINER, PreparedAgent
from ...languages import LANGUAGES, LanguageSpec
from ...seam.protocol import RUNNER_UID
from ...seam.tree_hash import hash_tree_into
from ...checkout import RECIPES_DIR

CACHE_DIR = Path(os.environ.get("POLYGLOT_CACHE_DIR", Path.home() / ".cache" / "polyglot-harness"))
DEBIAN_MIRROR = os.environ.get("POLYGLOT_DEBIAN_MIRROR", "http://deb.debian.org/debian")
IMAGE_REPOSITORY = "polyglot-harness"
BUILD_TIMEOUT_S = 3600

Log = Callable[[str], None]


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


def parent_identity(client: docker.DockerClient, parent_tag: str) -> str:
    """What a recipe image's tag hashes of its parent: a parent built from our recipes by its
    tag (itself a content hash of the recipe chain down to the base), so every engine that
    builds the same recipes over the same base gets the same tags even though builds are not
    bit-reproducible; any other parent (the base) by its image id."""
    if parent_tag.startswith(f"{IMAGE_REPOSITORY}/"):
        return parent_tag
    try:
        return client.images.get(parent_tag).id
    except docker.errors.ImageNotFound as error:
        raise ImageError(f"the parent image {parent_tag} is missing") from error


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
    tag = f"{IMAGE_REPOSITORY}/{name}:{recipe_hash(recipe_dir, parent_identity(client, parent_tag), extra_files)}"
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
    client: docker.DockerClient, language: LanguageSpec, settings: ImageSettings, log: Log = print
) -> ImageResult:
    common = ensure_common_image(client, settings, log)
    recipe_dir = RECIPES_DIR / language.image_recipe
    return ensure_recipe_image(
        client, language.name, recipe_dir, common.tag, "COMMON_IMAGE", shared_sources(recipe_dir), log
    )


def shared_sources(recipe_dir: Path) -> dict[str, bytes]:
    """Files of docker/shared/ a recipe names in its `shared-sources` (one per line), added to
    its build context: one source for what several language images build (the grading
    launcher, docker/shared/polyglot-noexec.c) without touching the common image."""
    listing = recipe_dir / "shared-sources"
    if not listing.is_file():
        return {}
    names = [line.strip() for line in listing.read_text().splitlines() if line.strip()]
    return {name: (RECIPES_DIR / "shared" / name).read_bytes() for name in names}


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


# --- agent layers (the agent prepared by utils/agents/prepare.py, over a language image) ------------

AGENT_DOCKERFILE = f"""\
ARG LANGUAGE_IMAGE
FROM ${{LANGUAGE_IMAGE}}
# Requirements first, in their own layer: unchanged requirements cost no pip install.
COPY agent/requirements.txt /opt/agent-requirements.txt
RUN python3 -m venv --system-site-packages /opt/agent-venv \\
    && /opt/agent-venv/bin/pip install --no-cache-dir -r /opt/agent-requirements.txt
ENV PATH=/opt/agent-venv/bin:$PATH
# The agent runs as the images' unprivileged user and writes its outputs next to itself.
COPY --chown={RUNNER_UID}:{RUNNER_UID} agent/ {AGENT_DIR_IN_CONTAINER}/
"""


def ensure_agent_image(client: docker.DockerClient, agent: PreparedAgent, language: str,
                       language_image: str, workdir: Path, log=print) -> ImageResult:
    assert agent.tree is not None
    recipe = workdir / f"agent-recipe-{language}"
    if not recipe.exists():
        recipe.mkdir(parents=True)
        (recipe / "Dockerfile").write_text(AGENT_DOCKERFILE)
        shutil.copytree(agent.tree, recipe / "agent")
    return ensure_recipe_image(client, f"agent-{language}", recipe, language_image, "LANGUAGE_IMAGE", None, log)


def prune_agent_images(client: docker.DockerClient, keep: set[str] = frozenset(), log=print) -> int:
    """Remove agent layers (every generation of a self-improving loop leaves one per
    language) except the tags in `keep` and those a container still uses."""
    in_use = {container.attrs.get("Image") for container in client.containers.list(all=True, ignore_removed=True)}
    removed = 0
    for image in client.images.list(filters={"label": "polyglot-harness.recipe"}):
        for tag in image.tags:
            if not tag.startswith(f"{IMAGE_REPOSITORY}/agent-") or tag in keep or image.id in in_use:
                continue
            try:
                client.images.remove(tag)
                removed += 1
            except docker.errors.APIError as error:
                log(f"could not remove {tag}: {error}")
    return removed

