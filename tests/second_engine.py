"""A second Docker engine beside the first, for tests that need two (the Ray backend's two
nodes): its own socket, data root, exec root, pidfile and bridge. No --default-address-pool:
with one, dockerd 20.10 removes the interface named docker0 at start-up, which is the FIRST
engine's bridge (its later builds then fail); without one, each engine picks subnets that do
not overlap the host's routes. Started and
stopped by the test; its data root stays (under the project's state directory) so a later
session reuses its images, like the first engine's.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import docker

from polyglot_harness.utils.backends.docker.engine import STATE_DIR

ROOT = STATE_DIR / "engine-b"
RUNTIME = Path("/run/polyglot-engine-b")  # short: the socket path must stay under 108 bytes
SOCKET = RUNTIME / "docker.sock"
HOST = f"unix://{SOCKET}"
BRIDGE = "polyglot-br-b"
BRIDGE_ADDRESS = "10.213.0.1/24"


def _run(*command: str) -> subprocess.CompletedProcess:
    return subprocess.run(command, capture_output=True, text=True)


def _ensure_bridge() -> None:
    if _run("ip", "link", "show", BRIDGE).returncode == 0:
        return
    for command in (("ip", "link", "add", "name", BRIDGE, "type", "bridge"),
                    ("ip", "addr", "add", BRIDGE_ADDRESS, "dev", BRIDGE),
                    ("ip", "link", "set", BRIDGE, "up")):
        completed = _run(*command)
        if completed.returncode != 0:
            raise RuntimeError(f"{' '.join(command)} failed: {completed.stderr.strip()}")


def answers() -> bool:
    try:
        client = docker.DockerClient(base_url=HOST, timeout=3)
        try:
            return bool(client.ping())
        finally:
            client.close()
    except Exception:  # noqa: BLE001
        return False


def start() -> subprocess.Popen | None:
    """Start the second engine (None: one already answers on its socket)."""
    if answers():
        return None
    _ensure_bridge()
    first_bridge = _run("ip", "link", "show", "docker0").returncode == 0
    for path in (ROOT / "data", ROOT / "exec", RUNTIME):
        path.mkdir(parents=True, exist_ok=True)
    log = ROOT / "dockerd.log"
    with open(log, "ab") as log_file, open(os.devnull, "rb") as devnull:
        process = subprocess.Popen(
            ["dockerd", "--host", HOST, "--data-root", str(ROOT / "data"), "--exec-root", str(ROOT / "exec"),
             "--pidfile", str(RUNTIME / "docker.pid"), "--bridge", BRIDGE],
            stdin=devnull, stdout=log_file, stderr=log_file, start_new_session=True, close_fds=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if answers():
            if first_bridge and _run("ip", "link", "show", "docker0").returncode != 0:
                stop(process)
                raise RuntimeError("starting the second dockerd removed the first engine's docker0 bridge")
            return process
        if process.poll() is not None:
            break
        time.sleep(0.25)
    tail = "\n".join(log.read_text(errors="replace").splitlines()[-20:])
    stop(process)
    raise RuntimeError(f"the second dockerd did not answer; its log:\n{tail}")


def stop(process: subprocess.Popen | None) -> None:
    """Stop the engine `start` started, and remove its bridge interface (nothing left on the host
    but its data root)."""
    if process is None or process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)
    _run("ip", "link", "delete", BRIDGE)
