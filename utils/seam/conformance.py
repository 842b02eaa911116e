"""What every sandbox backend must do: the conformance suite of the protocol in protocol.py.

    failures = run_conformance(provider, image)   # [] when the backend conforms

Each check plays the contract against the backend and raises ConformanceFailure naming what is
missing. `image` must have `sh`, coreutils and `python3` (every language image does).
tests/test_conformance.py runs the suite over every registered backend (utils/backends/*);
a new backend's author runs it and is told what is missing.
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from .protocol import KILL_GRACE_S, OUTPUT_CAP, RUNNER_UID, SOLUTION_UID, Limits, SandboxProvider, SandboxSpec
from .errors import SandboxError

WORK = "/conformance"


class ConformanceFailure(AssertionError):
    """The backend breaks the sandbox contract."""


@dataclass(frozen=True)
class Check:
    name: str
    run: Callable[[SandboxProvider, str, str], None]  # (provider, image, run id)


def _expect(condition: bool, message: str) -> None:
    if not condition:
        raise ConformanceFailure(message)


EXEC_REPEATS = 40


def _spec(image: str, **changes) -> SandboxSpec:
    settings = {"limits": Limits(cpus=1.0, memory="512m", pids=256), **changes}
    return SandboxSpec(image=image, role="conformance", **settings)


def check_exec_returns_exit_code_and_output(provider: SandboxProvider, image: str, run_id: str) -> None:
    # Repeated: a backend that copies stdout and stderr separately loses their order (and a
    # late stderr chunk its end marker) only now and then.
    with provider.sandbox(_spec(image), run_id, "exec") as box:
        results = [box.exec("echo one; echo two >&2; echo three; echo four >&2; exit 3", 30, workdir="/")
                   for _ in range(EXEC_REPEATS)]
    for result in results:
        _expect(result.exit_code == 3, f"exit code 3 expected, got {result.exit_code}")
        _expect(result.output == "one\ntwo\nthree\nfour\n",
                f"stdout and stderr expected, interleaved in order: {result.output!r}")
        _expect(not result.timed_out and not result.truncated, "a quick command is neither timed out nor truncated")
        _expect(result.complete, "the whole output arrived, so `complete` must be true")


def check_timeout_kills_the_whole_process_tree(provider: SandboxProvider, image: str, run_id: str) -> None:
    with tempfile.TemporaryDirectory() as source, provider.sandbox(_spec(image), run_id, "timeout") as box:
        box.put_directory(Path(source), WORK)
        started = time.monotonic()
        result = box.exec("(sleep 3; echo late > late.txt) & sleep 15", 1, workdir=WORK)
        elapsed = time.monotonic() - started
        time.sleep(4)
        left = box.get_files(WORK)
    _expect(result.timed_out, "a command past its timeout must say timed_out")
    _expect(elapsed < 1 + KILL_GRACE_S + 5, f"the timed-out command took {elapsed:.1f}s to end")
    _expect("late.txt" not in left, "a child of the timed-out command survived and wrote late.txt")


def check_output_is_capped_with_a_marker(provider: SandboxProvider, image: str, run_id: str) -> None:
    with provider.sandbox(_spec(image), run_id, "output-cap") as box:
        result = box.exec(f"head -c {3 * OUTPUT_CAP} /dev/zero | tr '\\0' x; echo; echo the-end", 60, workdir="/")
    _expect(result.truncated, "output over OUTPUT_CAP must be truncated")
    _expect("bytes of output dropped" in result.output, "the cut must be marked in the output")
    _expect(result.output.rstrip().endswith("the-end"), "the tail of the output must be kept")
    _expect(len(result.output) <= OUTPUT_CAP + 200, f"{len(result.output)} bytes of output kept")


def check_files_go_in_and_out_owned_by_the_user(provider: SandboxProvider, image: str, run_id: str) -> None:
    with tempfile.TemporaryDirectory() as source, provider.sandbox(_spec(image), run_id, "files") as box:
        (Path(source) / "dir").mkdir()
        (Path(source) / "dir" / "file.txt").write_text("content\n")
        box.put_directory(Path(source), WORK)
        result = box.exec("cat dir/file.txt; id -u; echo more >> dir/file.txt && mkdir new && echo writable",
                          30, workdir=WORK)
        files = box.get_files(f"{WORK}/dir")
    lines = result.output.split()
    _expect(lines[:1] == ["content"], f"the copied file must be readable: {result.output!r}")
    _expect(lines[1:2] == [str(RUNNER_UID)], f"commands must run as uid {RUNNER_UID}: {result.output!r}")
    _expect("writable" in lines, f"the copied tree must be the user's to write: {result.output!r}")
    _expect(files == {"file.txt": b"content\nmore\n"}, f"get_files returned {sorted(files)}")


def check_another_uid_is_kept_out_and_killed(provider: SandboxProvider, image: str, run_id: str) -> None:
    """exec(uid=SOLUTION_UID) runs as that uid, cannot read the user's 0700 directory, and
    kill_all_processes ends what it left running."""
    with tempfile.TemporaryDirectory() as source, provider.sandbox(_spec(image), run_id, "other-uid") as box:
        (Path(source) / "private").mkdir()
        (Path(source) / "private" / "secret.txt").write_text("secret\n")
        box.put_directory(Path(source), WORK)
        box.exec("chmod 700 private && mkdir shared && chmod 777 shared", 30, workdir=WORK)
        result = box.exec("id -u; cat private/secret.txt 2>/dev/null || echo refused", 30, workdir=WORK,
                          uid=SOLUTION_UID)
        box.exec("nohup sh -c 'while :; do echo tick >> other-ticks; sleep 0.1; done' > /dev/null 2>&1 &",
                 30, workdir=f"{WORK}/shared", uid=SOLUTION_UID)
        time.sleep(0.5)
        box.kill_all_processes()
        before = box.get_files(f"{WORK}/shared").get("other-ticks", b"")
        time.sleep(1)
        after = box.get_files(f"{WORK}/shared").get("other-ticks", b"")
    _expect(result.output.split() == [str(SOLUTION_UID), "refused"],
            f"exec(uid={SOLUTION_UID}) must run as that uid and be refused the user's 0700 files: {result.output!r}")
    _expect(before != b"", "the other uid's background writer never ran")
    _expect(before == after, "a process of the other uid survived kill_all_processes")


def _ticks_around_a_kill(box) -> tuple[bytes, bytes]:
    """A background writer started, kill_all_processes, then what it had written right after
    the kill and a second later (equal when nothing survived)."""
    with tempfile.TemporaryDirectory() as empty:
        box.put_directory(Path(empty), WORK)
    box.exec("nohup sh -c 'while :; do echo tick >> ticks.txt; sleep 0.1; done' > /dev/null 2>&1 &", 30,
             workdir=WORK)
    time.sleep(0.5)
    box.kill_all_processes()
    before = box.get_files(WORK).get("ticks.txt", b"")
    time.sleep(1)
    return before, box.get_files(WORK).get("ticks.txt", b"")


def check_kill_and_stop_keep_the_files(provider: SandboxProvider, image: str, run_id: str) -> None:
    with provider.sandbox(_spec(image), run_id, "kill") as box:
        before, after = _ticks_around_a_kill(box)
        alive = box.exec("echo alive", 30, workdir="/")
        box.stop()
        kept = box.get_files(WORK).get("ticks.txt")
        try:
            box.exec("echo after-stop", 10, workdir="/")
            ran_after_stop = True
        except SandboxError:
            ran_after_stop = False
    _expect(before != b"" and before == after, "after kill_all_processes nothing may keep writing")
    _expect(alive.output.strip() == "alive", "exec must work after kill_all_processes")
    _expect(kept == after, "files must survive stop()")
    _expect(not ran_after_stop, "exec after stop() must raise SandboxError")


def check_kill_ends_a_root_sandboxs_processes_too(provider: SandboxProvider, image: str, run_id: str) -> None:
    # A root sandbox (the build cache's warm-up) has no other user to spare: its processes
    # end as surely, and exec still works.
    with provider.sandbox(_spec(image, user=None), run_id, "kill-root") as box:
        before, after = _ticks_around_a_kill(box)
        alive = box.exec("id -u", 30, workdir="/")
    _expect(before != b"" and before == after, "after kill_all_processes nothing may keep writing")
    _expect(alive.output.strip() == "0", f"exec must work (as root) after kill_all_processes: {alive.output!r}")


def check_close_removes_and_clean_up_removes_the_run(provider: SandboxProvider, image: str, run_id: str) -> None:
    box = provider.sandbox(_spec(image), run_id, "close").start()
    _expect(len(provider.run_sandboxes(run_id)) == 1, "a started sandbox must be listed for its run")
    box.close()
    box.close()  # idempotent
    _expect(provider.run_sandboxes(run_id) == [], "close() must remove the sandbox")
    for name in ("left-a", "left-b"):
        provider.sandbox(_spec(image), run_id, name).start()
    removed = provider.clean_up_run(run_id)
    _expect(removed == 2 and provider.run_sandboxes(run_id) == [], f"clean_up_run removed {removed} of 2")


def check_network_none_has_no_interface(provider: SandboxProvider, image: str, run_id: str) -> None:
    with provider.sandbox(_spec(image, network="none"), run_id, "network") as box:
        result = box.exec("tail -n +3 /proc/net/dev | cut -d: -f1", 30, workdir="/")
    interfaces = sorted(result.output.split())
    _expect(interfaces == ["lo"], f"network none must leave only loopback, found {interfaces}")


def check_memory_and_pids_limits_apply(provider: SandboxProvider, image: str, run_id: str) -> None:
    with provider.sandbox(_spec(image), run_id, "limits") as box:
        memory = box.exec("python3 -c 'b = bytearray(2 << 30); print(\"allocated\")'", 60, workdir="/")
        pids = box.exec("python3 -c '\nimport os, time\nn = 0\ntry:\n    for _ in range(1000):\n"
                        "        if os.fork() == 0:\n            time.sleep(5); os._exit(0)\n        n += 1\n"
                        "except OSError:\n    pass\nprint(\"forked\", n)'", 60, workdir="/")
    _expect("allocated" not in memory.output, "2 GiB must not fit in a 512m sandbox")
    forked = int(pids.output.split()[-1]) if pids.output.split()[-2:-1] == ["forked"] else -1
    _expect(0 <= forked < 256, f"the pids limit (256) must stop a fork loop (forked {forked}): {pids.output[-300:]}")


def check_disk_guard_stops_a_writer(provider: SandboxProvider, image: str, run_id: str) -> None:
    spec = _spec(image, limits=Limits(cpus=1.0, memory="512m", pids=256, disk=64 << 20))
    with tempfile.TemporaryDirectory() as source, provider.sandbox(spec, run_id, "disk") as box:
        box.put_directory(Path(source), WORK)
        result = box.exec("while :; do head -c 8388608 /dev/zero >> big; done", 120, workdir=WORK, guard_disk=True)
    _expect(result.disk_exceeded and not result.timed_out, "a run past limits.disk must be stopped as disk_exceeded")


CHECKS = tuple(Check(name.removeprefix("check_"), function) for name, function in sorted(globals().items())
               if name.startswith("check_"))


def run_conformance(provider: SandboxProvider, image: str, run_id: str = "conformance",
                    only: tuple[str, ...] = ()) -> list[str]:
    """Run every check (or those named in `only`); '<check>: <what is missing>' per failure.
    Whatever a check leaves behind is removed with the run."""
    failures = []
    for check in CHECKS:
        if only and check.name not in only:
            continue
        try:
            check.run(provider, image, f"{run_id}-{check.name.replace('_', '-')[:20]}")
        except (ConformanceFailure, SandboxError) as error:
            failures.append(f"{check.name}: {type(error).__name__}: {error}")
        finally:
            provider.clean_up_run(f"{run_id}-{check.name.replace('_', '-')[:20]}")
    return failures
