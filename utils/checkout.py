"""Where the checkout's own folders are: the one owner of paths inside the project itself
(not of a run's files: utils/records/run_dir.py owns those).

The checkout is a package wherever it sits: its own repository, HyperAgents'
`domains/polyglot/` or DGM's `polyglot/`; every path here is relative to that folder."""

from __future__ import annotations

from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
RECIPES_DIR = PROJECT_ROOT / "docker"  # docker/<language>/ and docker/common/: the image recipes
SUBSETS_DIR = PROJECT_ROOT / "subsets"
DEFAULT_AGENT_DIR = PROJECT_ROOT / "agent"
DEFAULT_DATASET_DIR = PROJECT_ROOT / "datasets" / "polyglot"
DEFAULT_OUTPUT_DIR = PROJECT_ROOT / "runs"
# Where HyperAgents' and DGM's own preparation left the metadata, and their loop code reads it
# (DGM's self_improve_step opens polyglot/polyglot_benchmark_metadata.json): a link to the
# default dataset's, made by the preparation. Both hosts keep this name out of agents' copies.
UPSTREAM_METADATA_LINK = PROJECT_ROOT / "polyglot_benchmark_metadata.json"
