"""The Rust image's prebuilt dependencies (docker/rust/seeds/) cover the real benchmark: every
dependency table an exercise's Cargo.toml or its reference's Cargo-example.toml declares has a
seed with the same table, so its crates are cargo "Fresh" hits in grading (a missing seed costs
only speed, but 6-14 s per such instance)."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

pytestmark = pytest.mark.beside_gate  # the benchmark's checkout only, nothing recorded: beside the gate's preparation

SEEDS_DIR = Path(__file__).resolve().parent.parent / "docker" / "rust" / "seeds"
DEPENDENCY_TABLES = ("dependencies", "dev-dependencies", "build-dependencies")


def dependency_table(manifest: Path) -> str:
    """The manifest's dependency tables as one canonical string ("" when it has none)."""
    parsed = tomllib.loads(manifest.read_text(encoding="utf-8"))
    tables = {name: parsed[name] for name in DEPENDENCY_TABLES if parsed.get(name)}
    return json.dumps(tables, sort_keys=True) if tables else ""


def test_seed_manifests_hold_dependency_tables_only():
    for manifest in SEEDS_DIR.glob("*/Cargo.toml"):
        parsed = tomllib.loads(manifest.read_text(encoding="utf-8"))
        assert set(parsed) <= {"package", *DEPENDENCY_TABLES}, manifest
        assert parsed["package"]["name"].startswith("polyglot-seed-"), manifest  # build-seeds drops these


def test_every_benchmark_dependency_table_has_a_seed(benchmark_checkout):
    seeds = {dependency_table(manifest) for manifest in SEEDS_DIR.glob("*/Cargo.toml")}
    practice = benchmark_checkout / "rust" / "exercises" / "practice"
    manifests = sorted(practice.glob("*/Cargo.toml")) + sorted(practice.glob("*/.meta/Cargo-example.toml"))
    assert len(manifests) > 30
    declared = {manifest.relative_to(practice).as_posix(): dependency_table(manifest) for manifest in manifests}
    missing = {path: table for path, table in declared.items() if table and table not in seeds}
    assert not missing, f"add a docker/rust/seeds/<name>/Cargo.toml for: {missing}"
    assert sum(bool(table) for table in declared.values()) >= 8
