"""Image timings: warm checks, cold builds (opt-in, destructive) and the agent layer.

- Warm check: `ensure_language_image` on images that exist — what every harness start pays
  per language (hashing the recipe, looking the tags up).
- Cold build (`--cold_images` only): every polyglot-harness/* image and the base image are
  removed first, then base, common layer and each language image are built in turn; the
  seconds are the `ImageResult.seconds` of each step.
- Agent layer: a copy of agent/ in a temporary directory is built over the python image
  (`prepare_agent` + `ensure_agent_image`), then rebuilt after a one-line change to its code
  and again after a change to its requirements.txt. Each change carries a fresh token, so
  every run measures a real rebuild; the images built for the changes are removed after.
"""

from __future__ import annotations

import secrets
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import docker
import docker.errors

import _standalone  # noqa: F401,E402 - the checkout as the package polyglot_harness
from polyglot_harness.utils.agents.prepare import prepare_agent
from polyglot_harness.utils.backends.docker.images import (IMAGE_REPOSITORY, ensure_agent_image, ensure_base_image,
                                                           ensure_common_image, ensure_language_image)
from polyglot_harness.utils.seam.errors import ImageError
from polyglot_harness.utils.seam.image_settings import ImageSettings
from polyglot_harness.utils.languages import LANGUAGES

PROJECT_ROOT = Path(__file__).resolve().parent.parent
AGENT_SOURCE = PROJECT_ROOT / "agent"
RECIPE_LABEL = "polyglot-harness.recipe"

Log = Callable[[str], None]


@dataclass(frozen=True)
class ImageTiming:
    name: str
    seconds: float | None
    built: bool
    tag: str = ""
    error: str = ""


def warm_checks(client: docker.DockerClient, languages: list[str], settings: ImageSettings,
                log: Log) -> dict[str, ImageTiming]:
    timings: dict[str, ImageTiming] = {}
    for language in languages:
        started = time.monotonic()
        result = ensure_language_image(client, LANGUAGES[language], settings, log)
        timings[language] = ImageTiming(language, round(time.monotonic() - started, 3), result.built, result.tag)
    return timings


# --- cold builds ---------------------------------------------------------------------------

def cold_image_tags(client: docker.DockerClient, settings: ImageSettings) -> list[str]:
    """Every polyglot-harness/* tag (agent layers first) and the base image's tag."""
    tags = [tag for image in client.images.list() for tag in image.tags
            if tag.startswith(f"{IMAGE_REPOSITORY}/")]
    # Children before parents: agent layers, then language images, then the common layer.
    order = {f"{IMAGE_REPOSITORY}/agent-": 0, f"{IMAGE_REPOSITORY}/common:": 2}
    tags.sort(key=lambda tag: (next((rank for prefix, rank in order.items() if tag.startswith(prefix)), 1), tag))
    return tags + [settings.base_image]


def warn_cold(tags: list[str], pause_seconds: int) -> None:
    bar = "!" * 78
    print(f"\n{bar}\n!! WARNING: --cold_images REMOVES {len(tags)} IMAGE TAG(S) FROM THIS DOCKER ENGINE:\n"
          + "".join(f"!!   {tag}\n" for tag in tags)
          + "!! and rebuilds them (needs the Debian mirror, PyPI, npm, crates.io, Go proxy, Maven\n"
            "!! Central, or debootstrap for the base image). Other harness runs on this engine\n"
            f"!! will rebuild or fail meanwhile. Ctrl-C within {pause_seconds} s to abort.\n{bar}\n",
          file=sys.stderr, flush=True)
    time.sleep(pause_seconds)


def remove_images(client: docker.DockerClient, tags: list[str], log: Log) -> None:
    image_ids = set()
    for tag in tags:
        try:
            image_ids.add(client.images.get(tag).id)
        except docker.errors.ImageNotFound:
            pass
    users = [container.name for container in client.containers.list(all=True, ignore_removed=True)
             if container.attrs.get("Image") in image_ids]
    if users:
        raise ImageError(f"cannot remove the images for a cold build: container(s) {', '.join(users[:5])} "
                         f"use them; let those runs finish first")
    for tag in tags:
        try:
            client.images.remove(tag, noprune=False)
            log(f"removed image {tag}")
        except docker.errors.ImageNotFound:
            pass
        except docker.errors.APIError as error:
            raise ImageError(f"cannot remove image {tag}: {error}") from error
    # Untagged leftovers of earlier builds could still serve as build cache.
    client.images.prune(filters={"dangling": True, "label": RECIPE_LABEL})


def cold_builds(client: docker.DockerClient, languages: list[str], settings: ImageSettings,
                log: Log) -> dict[str, ImageTiming]:
    timings: dict[str, ImageTiming] = {}
    base = ensure_base_image(client, settings.base_image, log)
    timings["base"] = ImageTiming("base", round(base.seconds, 3), base.built, base.tag)
    common = ensure_common_image(client, settings, log)
    timings["common"] = ImageTiming("common", round(common.seconds, 3), common.built, common.tag)
    for language in languages:
        log(f"images: cold build of {language}")
        result = ensure_language_image(client, LANGUAGES[language], settings, log)
        timings[language] = ImageTiming(language, round(result.seconds, 3), result.built, result.tag)
    return timings


# --- the agent layer -------------------------------------------------------------------------

def agent_layer_timings(client: docker.DockerClient, python_image: str, log: Log) -> dict[str, ImageTiming]:
    token = f"{time.strftime('%Y%m%dT%H%M%S')}-{secrets.token_hex(4)}"
    timings: dict[str, ImageTiming] = {}
    built_for_bench: list[str] = []
    with tempfile.TemporaryDirectory(prefix="polyglot-bench-agent-") as workdir:
        source = Path(workdir) / "agent"
        shutil.copytree(AGENT_SOURCE, source, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        timings["initial"] = _build_agent(client, source, Path(workdir) / "initial", python_image, "initial", log)
        with open(source / "run_task_agent.py", "a", encoding="utf-8") as handle:
            handle.write(f"# bench: one-line code change {token}\n")
        timings["code_change"] = _build_agent(client, source, Path(workdir) / "code", python_image, "code_change", log)
        built_for_bench.append(timings["code_change"].tag)
        with open(source / "requirements.txt", "a", encoding="utf-8") as handle:
            handle.write(f"# bench: requirements change {token}\n")
        timings["requirements_change"] = _build_agent(client, source, Path(workdir) / "requirements", python_image,
                                                      "requirements_change", log)
        built_for_bench.append(timings["requirements_change"].tag)
    for tag in filter(None, built_for_bench):
        try:
            client.images.remove(tag, noprune=False)
        except docker.errors.APIError as error:
            log(f"warning: could not remove the bench's agent image {tag}: {error}")
    return timings


def _build_agent(client: docker.DockerClient, source: Path, workdir: Path, python_image: str, name: str,
                 log: Log) -> ImageTiming:
    workdir.mkdir(parents=True)
    prepared = prepare_agent(str(source), [], workdir)
    try:
        result = ensure_agent_image(client, prepared, "python", python_image, workdir, log)
    except ImageError as error:
        log(f"images: agent layer ({name}) failed: {error}")
        return ImageTiming(name, None, False, "", str(error))
    log(f"images: agent layer ({name}) {'built' if result.built else 'cached'} in {result.seconds:.1f}s")
    return ImageTiming(name, round(result.seconds, 3), result.built, result.tag)
