"""Where the checkout's own folders are, and where its default data lives: the one owner of
both (not of a run's files: utils/records/run_dir.py owns those).

The checkout is a package wherever it sits: its own repository, HyperAgents'
`domains/polyglot/` or DGM's `polyglot/`; the source paths here are relative to that folder.

Nothing secret is written inside the checkout by default. The loops copy their whole repository,
this checkout included, into the repository their meta agent edits (HyperAgents'
`setup_initial_gen` leaves out only a few names); a dataset there (reference solutions, the
instance repos with the hidden tests) or a run's files (test output) would let a meta agent write
the answers into its task agent. So the default dataset and run output live in the checkout's
data folder, outside it: `<POLYGLOT_HARNESS_HOME, else $XDG_DATA_HOME/polyglot-harness, else
~/.local/share/polyglot-harness>/<checkout key>/`, the key naming the checkout's resolved path (two
checkouts never share a default dataset; the same checkout always finds its own)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Mapping

PROJECT_ROOT = Path(__file__).resolve().parent.parent
RECIPES_DIR = PROJECT_ROOT / "docker"  # docker/<language>/ and docker/common/: the image recipes
SUBSETS_DIR = PROJECT_ROOT / "subsets"
DEFAULT_AGENT_DIR = PROJECT_ROOT / "agent"

HOME_VARIABLE = "POLYGLOT_HARNESS_HOME"  # the folder holding every checkout's data folder
DATA_DIRNAME = "polyglot-harness"  # under $XDG_DATA_HOME or ~/.local/share


def checkout_key(checkout: Path) -> str:
    """`<folder name>-<12 hex digits of the resolved path's sha256>`: the name for people, the
    digest so that two checkouts with the same folder name stay apart."""
    resolved = Path(checkout).resolve()
    return f"{resolved.name}-{hashlib.sha256(str(resolved).encode('utf-8')).hexdigest()[:12]}"


def data_home(checkout: Path = PROJECT_ROOT, environ: Mapping[str, str] = os.environ) -> Path:
    """The data folder of `checkout`: its default dataset and run output (the module says why)."""
    base = environ.get(HOME_VARIABLE) or ""
    if not base:
        share = environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
        base = str(Path(share) / DATA_DIRNAME)
    return Path(base).expanduser().absolute() / checkout_key(checkout)


def default_dataset_dir(checkout: Path = PROJECT_ROOT, environ: Mapping[str, str] = os.environ) -> Path:
    return data_home(checkout, environ) / "datasets" / "polyglot"


def default_output_dir(checkout: Path = PROJECT_ROOT, environ: Mapping[str, str] = os.environ) -> Path:
    return data_home(checkout, environ) / "runs"


DATA_HOME = data_home()
DEFAULT_DATASET_DIR = default_dataset_dir()
DEFAULT_OUTPUT_DIR = default_output_dir()
# Where HyperAgents' and DGM's own preparation left the metadata, and their loop code reads it
# (DGM's self_improve_step opens polyglot/polyglot_benchmark_metadata.json): a link to the
# default dataset's, made by the preparation. The file holds the answers (reference_answers,
# reference_tests); both hosts keep this name out of agents' copies: HyperAgents'
# setup_initial_gen leaves out `polyglot/polyglot_benchmark_metadata.json`, DGM's .dockerignore
# the whole `polyglot/`.
UPSTREAM_METADATA_LINK = PROJECT_ROOT / "polyglot_benchmark_metadata.json"


def is_inside_checkout(path: Path) -> bool:
    return Path(path).resolve().is_relative_to(PROJECT_ROOT)
