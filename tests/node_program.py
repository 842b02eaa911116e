"""A node program run on the host that prints one JSON object: the JavaScript bridge's pure
parts (wire.js, shared.js) tested without Docker. Node is one of the host's toolchains: in CI
its absence fails the test, elsewhere it skips."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from .conftest import IN_CI


def node_results(program: str) -> dict:
    node = shutil.which("node")
    if node is None:
        (pytest.fail if IN_CI else pytest.skip)("no node on this machine")
    out = subprocess.run([node, "-e", program], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)
