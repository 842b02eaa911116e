"""The default agent (agent/run_task_agent.py) run end to end against a scripted model.

Each test copies agent/ to a temporary <agent_dir> (as the harness does), runs it as a
subprocess in a small git repo holding a Python exercise stub, and checks what it leaves:
model_patch.diff, the markdown chat history and agent_usage.json. No Docker, no real model.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]

from .scripted_model_server import (  # noqa: E402
    Delay,
    HttpError,
    Message,
    ScriptedModelServer,
    ToolCalls,
    call,
    malformed_tool_call,
    solve_script,
)

import openai  # noqa: E402,F401 - the agent needs the openai SDK (requirements.txt installs it)

from polyglot_harness.utils.languages import get_language  # noqa: E402
from polyglot_harness.utils.pipeline.agent_phase import GIT_EXCLUDE, git_exclude  # noqa: E402

AGENT_SOURCE = REPO_ROOT / "agent"
INSTANCE_ID = "python__two-fer"
STUB = 'def two_fer(name="you"):\n    pass\n'
SOLUTION = 'def two_fer(name="you"):\n    return f"One for {name}, one for me."\n'
# py_compile writes __pycache__ even under PYTHONDONTWRITEBYTECODE: a build artifact to exclude.
CHECK_COMMAND = "python3 -m py_compile two_fer.py && python3 -c 'import two_fer; print(two_fer.two_fer(\"Bob\"))'"


@dataclass
class AgentOutputs:
    returncode: int
    stderr: str
    patch: str
    history: str
    usage: dict


def _git(repo: Path, *args: str) -> str:
    command = ["git", "-c", "user.name=test", "-c", "user.email=test@example.com", *args]
    return subprocess.run(command, cwd=repo, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def exercise(tmp_path: Path) -> tuple[Path, str]:
    """A git repo like the harness's /testbed: stub + docs committed, tests absent, and the
    language's build artifacts in .git/info/exclude."""
    repo = tmp_path / "testbed"
    (repo / ".docs").mkdir(parents=True)
    (repo / ".docs" / "instructions.md").write_text("# Two Fer\n\nReturn 'One for X, one for me.'\n")
    (repo / "two_fer.py").write_text(STUB)
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "stub")
    exclude = repo / GIT_EXCLUDE
    exclude.write_text(git_exclude(get_language("python"), exclude.read_text() if exclude.is_file() else ""))
    return repo, _git(repo, "rev-parse", "HEAD")


@pytest.fixture
def agent_dir(tmp_path: Path) -> Path:
    """The agent copied on its own, so it cannot lean on anything else in this repository."""
    target = tmp_path / "agent"
    shutil.copytree(AGENT_SOURCE, target, ignore=shutil.ignore_patterns("__pycache__", "*.md", "*.json", "*.diff"))
    return target


def _command(agent_dir: Path, repo: Path, base_commit: str, *extra: str) -> list[str]:
    return [
        sys.executable, str(agent_dir / "run_task_agent.py"),
        "--problem_statement", "Implement two_fer in two_fer.py. Use the above instructions to modify two_fer.py.",
        "--git_dir", f"{repo}/",
        "--chat_history_file", str(agent_dir / f"{INSTANCE_ID}.md"),
        "--base_commit", base_commit,
        "--outdir", f"{agent_dir}/",
        "--test_description", "The tests are run with pytest.",
        "--language", "python",
        "--model", "scripted-model",
        *extra,
    ]


def _environment(server: ScriptedModelServer | None, **overrides: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "AGENT_"))}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.update(OPENAI_API_KEY="sk-test-secret", AGENT_RETRY_BASE_DELAY="0.05")
    if server is not None:
        env["OPENAI_BASE_URL"] = server.base_url
    env.update(overrides)
    return env


def _collect(agent_dir: Path, returncode: int, stderr: str) -> AgentOutputs:
    return AgentOutputs(
        returncode=returncode,
        stderr=stderr,
        patch=(agent_dir / "model_patch.diff").read_text(),
        history=(agent_dir / f"{INSTANCE_ID}.md").read_text(),
        usage=json.loads((agent_dir / "agent_usage.json").read_text()),
    )


def run_agent(
    agent_dir: Path, exercise: tuple[Path, str], server: ScriptedModelServer | None, *extra: str, **env: str
) -> AgentOutputs:
    repo, base_commit = exercise
    completed = subprocess.run(
        _command(agent_dir, repo, base_commit, *extra),
        cwd=repo, env=_environment(server, **env), capture_output=True, text=True, timeout=30,
    )
    return _collect(agent_dir, completed.returncode, completed.stderr)


def test_solving_run_leaves_patch_history_and_usage(agent_dir: Path, exercise: tuple[Path, str]) -> None:
    repo, base_commit = exercise
    steps = solve_script("two_fer.py", SOLUTION, CHECK_COMMAND)
    steps.insert(3, ToolCalls([call("create_file", path="text_helpers.py", content="SELF = 'me'\n")]))
    with ScriptedModelServer(steps) as server:
        outputs = run_agent(agent_dir, exercise, server)

    assert outputs.returncode == 0, outputs.stderr
    assert '+    return f"One for {name}, one for me."' in outputs.patch
    assert "diff --git a/text_helpers.py b/text_helpers.py\nnew file mode" in outputs.patch
    assert (repo / "__pycache__").is_dir()
    assert "__pycache__" not in outputs.patch and ".pyc" not in outputs.patch

    clone = repo.parent / "clone"
    _git(repo.parent, "clone", "-q", str(repo), str(clone))
    _git(clone, "apply", "--check", str(agent_dir / "model_patch.diff"))
    # The repository's own index and HEAD are the harness's: untouched.
    assert _git(repo, "rev-parse", "HEAD") == base_commit
    assert _git(repo, "diff", "--cached", "--name-only") == ""

    for expected in ("`view_file`", "`create_file`", "`shell`", "`finish`", "One for Bob, one for me.", "## Stopped: finished"):
        assert expected in outputs.history

    assert outputs.usage["stop_reason"] == "finished"
    assert outputs.usage["model"] == "scripted-model"
    assert outputs.usage["calls"] == server.usage_served.calls == 5
    assert outputs.usage["prompt_tokens"] == server.usage_served.prompt_tokens
    assert outputs.usage["completion_tokens"] == server.usage_served.completion_tokens
    assert outputs.usage["total_tokens"] == server.usage_served.total_tokens
    assert outputs.usage["seconds"] > 0

    first_request = server.requests[0]
    assert first_request["model"] == "scripted-model"
    assert {tool["function"]["name"] for tool in first_request["tools"]} == {
        "shell", "view_file", "create_file", "str_replace", "finish"
    }
    assert "hidden" in first_request["messages"][0]["content"]
    view_result, _, check_result, *_ = server.tool_results()
    assert view_result.startswith("     1\tdef two_fer")
    assert check_result == "[exit code 0]\nOne for Bob, one for me.\n"


def test_tool_errors_are_answered_not_fatal(agent_dir: Path, exercise: tuple[Path, str]) -> None:
    one_reply = ToolCalls([
        call("create_file", path="dup.py", content="X = 1\nX = 1\n"),
        call("str_replace", path="dup.py", old_str="X = 1", new_str="Y = 2"),
        call("str_replace", path="two_fer.py", old_str="no such text", new_str="x"),
        call("view_file"),
        call("view_file", path="two_fer.py", start_line=2, end_line=2),
        call("shell", command="python3 -c \"print('x' * 50000)\""),
        call("shell", command="sleep 20", timeout=1),
        call("shell", command='echo "key=${OPENAI_API_KEY:-unset}"; exit 3'),
        call("str_replace", path="two_fer.py", old_str="    pass", new_str="    return 'ok'"),
    ])
    with ScriptedModelServer([one_reply, ToolCalls([call("finish")])]) as server:
        started = time.monotonic()
        outputs = run_agent(agent_dir, exercise, server, AGENT_OUTPUT_LIMIT="2000")

    assert time.monotonic() - started < 10
    assert outputs.usage["stop_reason"] == "finished"
    created, duplicate, missing, no_path, ranged, flood, slow, failing, replaced = server.tool_results()
    assert created.startswith("Created dup.py")
    assert "occurs 2 times" in duplicate and "lines 1, 2" in duplicate
    assert "not found" in missing
    assert "missing required argument 'path'" in no_path
    assert ranged == "     2\t    pass"
    assert "bytes truncated ...]" in flood
    assert len(flood) <= 2000
    assert slow.startswith("[timed out after")
    assert failing == "[exit code 3]\nkey=unset\n"
    assert replaced.startswith("Replaced 1 occurrence")
    assert "+    return 'ok'" in outputs.patch
    assert "sk-test-secret" not in outputs.history


def test_recovers_from_malformed_call_server_errors_and_slow_answer(
    agent_dir: Path, exercise: tuple[Path, str]
) -> None:
    steps = [
        malformed_tool_call(),
        ToolCalls([call("no_such_tool", x=1)]),
        HttpError(500),
        HttpError(429, "slow down"),
        Delay(3, then=ToolCalls([call("finish", summary="too late")])),
        *solve_script("two_fer.py", SOLUTION, CHECK_COMMAND),
    ]
    with ScriptedModelServer(steps) as server:
        outputs = run_agent(agent_dir, exercise, server, AGENT_CALL_TIMEOUT="1")

    assert outputs.usage["stop_reason"] == "finished", outputs.history
    assert outputs.usage["failed_calls"] == 3
    assert outputs.usage["calls"] == server.usage_served.calls == 6
    assert outputs.usage["total_tokens"] == server.usage_served.total_tokens
    bad_json, unknown_tool, *_ = server.tool_results()
    assert bad_json.startswith("Error: arguments for create_file are not valid JSON")
    assert unknown_tool.startswith("Error: unknown tool 'no_such_tool'")
    assert "HTTP 500" in outputs.history and "HTTP 429" in outputs.history
    assert "model call timed out; retry 3/" in outputs.history
    assert "too late" not in outputs.history
    assert '+    return f"One for {name}, one for me."' in outputs.patch


@pytest.mark.parametrize(("status", "expected_requests"), [(503, 3), (401, 1)])
def test_persistent_api_errors_stop_with_api_error(
    agent_dir: Path, exercise: tuple[Path, str], status: int, expected_requests: int
) -> None:
    with ScriptedModelServer([HttpError(status)] * 5) as server:
        outputs = run_agent(agent_dir, exercise, server, AGENT_MAX_RETRIES="2")

    assert outputs.returncode == 1
    assert len(server.requests) == expected_requests
    assert outputs.usage["stop_reason"] == "api_error"
    assert f"HTTP {status}" in outputs.usage["stop_detail"]
    assert outputs.usage["calls"] == 0 and outputs.usage["failed_calls"] == expected_requests
    assert outputs.patch == ""
    assert "## Stopped: api_error" in outputs.history


def test_step_limit_stops_with_max_steps(agent_dir: Path, exercise: tuple[Path, str]) -> None:
    with ScriptedModelServer([ToolCalls([call("view_file", path="two_fer.py")])] * 5) as server:
        outputs = run_agent(agent_dir, exercise, server, "--max_steps", "3")

    assert outputs.returncode == 0
    assert outputs.usage["stop_reason"] == "max_steps"
    assert outputs.usage["calls"] == len(server.requests) == 3
    assert "Budget: 0 model call(s)" in outputs.history


def test_token_limit_stops_with_max_tokens(agent_dir: Path, exercise: tuple[Path, str]) -> None:
    with ScriptedModelServer([ToolCalls([call("view_file", path="two_fer.py")])] * 5) as server:
        outputs = run_agent(agent_dir, exercise, server, AGENT_MAX_TOKENS="150")

    assert outputs.usage["stop_reason"] == "max_tokens"
    assert outputs.usage["calls"] == 2 and outputs.usage["total_tokens"] == 240


def test_wall_time_limit_cuts_a_long_command(agent_dir: Path, exercise: tuple[Path, str]) -> None:
    steps = [
        ToolCalls([call("create_file", path="two_fer.py", content=SOLUTION)]),
        ToolCalls([call("shell", command="sleep 30", timeout=60)]),
        ToolCalls([call("finish")]),
    ]
    with ScriptedModelServer(steps) as server:
        started = time.monotonic()
        outputs = run_agent(agent_dir, exercise, server, AGENT_MAX_WALL_TIME="4")

    assert time.monotonic() - started < 12
    assert outputs.usage["stop_reason"] == "wall_time"
    assert "[timed out after" in outputs.history
    assert len(server.requests) == 2  # no model call once the wall time is used up
    assert '+    return f"One for {name}, one for me."' in outputs.patch


def test_replies_without_tool_calls_get_one_nudge(agent_dir: Path, exercise: tuple[Path, str]) -> None:
    with ScriptedModelServer([Message("I think it's done."), Message("Really done.")]) as server:
        outputs = run_agent(agent_dir, exercise, server)

    assert outputs.usage["stop_reason"] == "no_tool_call"
    assert len(server.requests) == 2
    assert "no tool call" in server.requests[1]["messages"][-1]["content"]


def test_missing_model_is_a_config_error_with_outputs(agent_dir: Path, exercise: tuple[Path, str]) -> None:
    repo, base_commit = exercise
    command = [part for part in _command(agent_dir, repo, base_commit) if part not in ("--model", "scripted-model")]
    completed = subprocess.run(command, cwd=repo, env=_environment(None), capture_output=True, text=True, timeout=30)
    outputs = _collect(agent_dir, completed.returncode, completed.stderr)

    assert outputs.returncode == 1
    assert outputs.usage["stop_reason"] == "config_error"
    assert outputs.patch == ""


@pytest.mark.parametrize("interrupted_during", ["shell_command", "model_call"])
def test_sigterm_mid_run_still_leaves_outputs(
    agent_dir: Path, exercise: tuple[Path, str], tmp_path: Path, interrupted_during: str
) -> None:
    repo, base_commit = exercise
    pid_file = tmp_path / "shell.pid"
    second_step = {
        "shell_command": ToolCalls([call("shell", command=f"echo $$ > {pid_file}; sleep 30")]),
        "model_call": Delay(30, then=ToolCalls([call("finish")])),
    }[interrupted_during]
    steps = [ToolCalls([call("create_file", path="two_fer.py", content=SOLUTION)]), second_step]
    with ScriptedModelServer(steps) as server:
        process = subprocess.Popen(
            _command(agent_dir, repo, base_commit), cwd=repo, env=_environment(server),
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        )
        try:
            _wait_for(lambda: len(server.requests) == 2 and (interrupted_during == "model_call" or pid_file.exists()))
            time.sleep(0.3)
            process.send_signal(signal.SIGTERM)
            _, stderr = process.communicate(timeout=10)
        finally:
            process.kill()
    outputs = _collect(agent_dir, process.returncode, stderr)

    assert outputs.returncode == 128 + signal.SIGTERM
    assert outputs.usage["stop_reason"] == "signal"
    assert "SIGTERM" in outputs.usage["stop_detail"]
    assert '+    return f"One for {name}, one for me."' in outputs.patch
    assert "## Stopped: signal" in outputs.history
    if interrupted_during == "shell_command":
        assert not _alive(int(pid_file.read_text())), "the shell command's process group must be killed"


def _wait_for(condition, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        time.sleep(0.05)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"
