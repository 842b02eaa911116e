"""The images: built from the recipes, content-addressed, cached, usable with the network off."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from polyglot_harness.utils.backends.docker import engine
from polyglot_harness.utils.backends.docker.images import ensure_language_image, recipe_hash
from polyglot_harness.utils.seam.image_settings import ImageSettings
from polyglot_harness.utils.languages import LANGUAGES
from polyglot_harness.utils.backends.docker.provider import DockerSandbox
from polyglot_harness.utils.seam.protocol import SandboxSpec

PROJECT_ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.docker
@pytest.mark.parametrize("language", sorted(LANGUAGES))
def test_toolchain_answers_with_network_off(language, docker_client, language_images, no_leftover_containers):
    spec = LANGUAGES[language]
    with DockerSandbox(docker_client, SandboxSpec(image=language_images[language], role="check"), "pytest-images", language) as box:
        toolchain = box.exec(spec.version_command, 60, workdir="/")
        agent_tools = box.exec("git --version && python3 --version", 60, workdir="/")
        network = box.exec("python3 -c \"import socket; socket.create_connection(('pypi.org', 443), 3)\"", 30,
                           workdir="/")
    assert toolchain.exit_code == 0, toolchain.output
    assert agent_tools.exit_code == 0, agent_tools.output
    assert network.exit_code != 0, "grading containers must have no network"


@pytest.mark.docker
def test_second_ensure_builds_nothing(docker_client, language_images, image_settings):
    started = time.monotonic()
    results = [ensure_language_image(docker_client, LANGUAGES[name], image_settings, log=lambda m: None)
               for name in sorted(LANGUAGES)]
    assert [result.built for result in results] == [False] * len(LANGUAGES)
    assert {result.name: result.tag for result in results} == language_images
    assert time.monotonic() - started < 10


def test_tag_changes_with_ca_bundle_content_not_its_path(tmp_path):
    recipe = PROJECT_ROOT / "docker" / "common"
    same_a = recipe_hash(recipe, "sha256:parent", {"ca-bundle.pem": b"-----BEGIN CERTIFICATE-----\nA\n"})
    same_b = recipe_hash(recipe, "sha256:parent", {"ca-bundle.pem": b"-----BEGIN CERTIFICATE-----\nA\n"})
    other = recipe_hash(recipe, "sha256:parent", {"ca-bundle.pem": b"-----BEGIN CERTIFICATE-----\nB\n"})
    assert same_a == same_b != other
    assert recipe_hash(recipe, "sha256:other-parent", {"ca-bundle.pem": b""}) != recipe_hash(
        recipe, "sha256:parent", {"ca-bundle.pem": b""})


def test_tag_changes_with_recipe_content(tmp_path):
    recipe = tmp_path / "recipe"
    recipe.mkdir()
    (recipe / "Dockerfile").write_text("FROM x\n")
    before = recipe_hash(recipe, "p", {})
    (recipe / "Dockerfile").write_text("FROM x\nRUN true\n")
    assert recipe_hash(recipe, "p", {}) != before


def test_ca_bundle_option_rejects_missing_file(tmp_path):
    with pytest.raises(Exception, match="is not a file"):
        ImageSettings.from_env(ca_bundle=str(tmp_path / "missing.pem"))
    assert ImageSettings.from_env(ca_bundle="none").ca_bundle is None


@pytest.mark.docker
def test_engine_bring_up_is_a_noop_when_the_engine_answers(docker_client, tmp_path, monkeypatch):
    monkeypatch.setattr(engine, "ENGINE_PIDFILE", tmp_path / "dockerd.pid")
    started = time.monotonic()
    assert engine.ensure_engine(log=lambda m: None) is False
    assert engine.ensure_engine(log=lambda m: None) is False
    assert time.monotonic() - started < 5


def test_stop_engine_never_kills_a_daemon_it_did_not_start(tmp_path, monkeypatch):
    monkeypatch.setattr(engine, "ENGINE_PIDFILE", tmp_path / "dockerd.pid")
    assert engine.stop_engine(log=lambda m: None) is False  # no pidfile: nothing of ours runs
    (tmp_path / "dockerd.pid").write_text("1\n")  # a pid that is not a dockerd we started
    assert engine.stop_engine(log=lambda m: None) is False
