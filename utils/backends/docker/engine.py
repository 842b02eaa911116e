"""Docker engine bring-up: make the Docker API answer, starting a local dockerd if needed.

Contract:
- If the API answers (DOCKER_HOST is honoured through the SDK's `from_env`), nothing happens.
- Otherwise, on Debian as root: install Debian's `docker.io` when `dockerd` is missing, start
  `dockerd` fully detached (its log in ENGINE_LOG), and wait (bounded) until it answers.
- The PID of a daemon we started is written to ENGINE_PIDFILE; `stop_engine` stops only that
  daemon, never one somebody else started.

Run as a script: docker/ensure_engine.sh [start|stop|status] runs main().
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import docker
import docker.errors

STATE_DIR = Path(os.environ.get("POLYGLOT_STATE_DIR", "/var/lib/polyglot-harness"))
ENGINE_LOG = Path(os.environ.get("POLYGLOT_DOCKERD_LOG", "/var/log/polyglot-harness/dockerd.log"))
ENGINE_PIDFILE = STATE_DIR / "dockerd.pid"
READY_TIMEOUT_S = 60.0


class EngineError(RuntimeError):
    """The Docker engine could not be reached or started."""


def engine_answers(timeout: float = 5.0) -> bool:
    try:
        client = docker.from_env(timeout=timeout)
        try:
            return bool(client.ping())
        finally:
            client.close()
    except (docker.errors.DockerException, OSError):
        return False


def ensure_engine(log=print) -> bool:
    """Make the Docker API answer. Returns True when this call started a daemon."""
    if engine_answers():
        return False
    if os.environ.get("DOCKER_HOST"):
        raise EngineError(f"DOCKER_HOST={os.environ['DOCKER_HOST']} does not answer; not starting a local daemon")
    if os.geteuid() != 0:
        raise EngineError("the Docker API does not answer and starting dockerd needs root")
    if shutil.which("dockerd") is None:
        _install_docker_io(log)
    _start_dockerd(log)
    return True


def _install_docker_io(log) -> None:
    log("dockerd not found: installing Debian's docker.io with apt-get")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    for command in (["apt-get", "update", "-q"], ["apt-get", "install", "-y", "-q", "docker.io"]):
        completed = subprocess.run(command, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True)
        if completed.returncode != 0:
            tail = "\n".join((completed.stdout + completed.stderr).splitlines()[-15:])
            raise EngineError(f"{' '.join(command)} failed (exit {completed.returncode}):\n{tail}")


def _start_dockerd(log) -> None:
    ENGINE_LOG.parent.mkdir(parents=True, exist_ok=True)
    STATE_DIR.mkdir(parents=True, exist_ok=True)
    log(f"starting dockerd (log: {ENGINE_LOG})")
    with open(ENGINE_LOG, "ab") as log_file, open(os.devnull, "rb") as devnull:
        # A new session and no inherited streams: the daemon must not hold a caller's
        # terminal or output pipe open (CI waits on those).
        process = subprocess.Popen(
            ["dockerd"], stdin=devnull, stdout=log_file, stderr=log_file, start_new_session=True, close_fds=True
        )
    ENGINE_PIDFILE.write_text(f"{process.pid}\n")
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if engine_answers(timeout=2.0):
            log(f"dockerd is ready (pid {process.pid})")
            return
        if process.poll() is not None:
            break
        time.sleep(0.25)
    raise EngineError(
        f"dockerd did not answer within {READY_TIMEOUT_S:.0f}s (exit={process.poll()}); last log lines:\n"
        + _log_tail()
    )


def _log_tail(lines: int = 25) -> str:
    try:
        return "\n".join(ENGINE_LOG.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def stop_engine(log=print) -> bool:
    """Stop the daemon that ensure_engine started (per the pidfile). Returns True if stopped."""
    try:
        pid = int(ENGINE_PIDFILE.read_text().strip())
    except (OSError, ValueError):
        return False
    ENGINE_PIDFILE.unlink(missing_ok=True)
    if not _is_dockerd(pid):
        return False
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and _is_dockerd(pid):
        time.sleep(0.2)
    if _is_dockerd(pid):
        os.kill(pid, signal.SIGKILL)
    log(f"stopped dockerd (pid {pid})")
    return True


def _is_dockerd(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip() == "dockerd"
    except OSError:
        return False


def main(argv: list[str]) -> int:
    action = argv[0] if argv else "start"
    try:
        if action == "start":
            if not ensure_engine():
                print("docker engine: already answering")
        elif action == "stop":
            if not stop_engine():
                print("docker engine: no daemon started by this project is running")
        elif action == "status":
            print("docker engine: answering" if engine_answers() else "docker engine: not answering")
            return 0 if engine_answers() else 1
        else:
            print(f"error: unknown action {action!r} (start|stop|status)", file=sys.stderr)
            return 2
    except EngineError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
