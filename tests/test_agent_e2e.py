"""The default agent (agent/) end to end: inside each real language container, against a
scripted model on 127.0.0.1 (the agent container shares the host network), graded for real.

The scripted model solves the exercise the way a good model would: it looks at the stub,
writes the reference solution (read from the sample's .meta/), runs a command, finishes.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from polyglot_harness.utils.run import harness
from .scripted_model_server import (Delay, HttpError, ScriptedModelServer, ToolCalls, call,
                                         malformed_tool_call)

pytestmark = pytest.mark.docker

PROJECT_ROOT = Path(__file__).resolve().parent.parent
SAMPLES = PROJECT_ROOT / "samples"
DEFAULT_AGENT = str(PROJECT_ROOT / "agent")
MODEL = "scripted-e2e-model"
API_KEY = "sk-e2e-not-a-real-key"
CHECK_COMMAND = "git status --short"

# instance -> {solution path in the repo: reference file under the exercise}
SOLUTIONS = {
    "python__running-total": {"running_total.py": ".meta/example.py"},
    "go__word-tally": {"word_tally.go": ".meta/example.go"},
    "rust__checked-sum": {"src/lib.rs": ".meta/example.rs", "Cargo.toml": ".meta/Cargo-example.toml"},
    "javascript__clamp-list": {"clamp-list.js": ".meta/proof.ci.js"},
    "java__vowel-count": {"src/main/java/VowelCount.java": ".meta/src/reference/java/VowelCount.java"},
    "cpp__digit-sum": {"digit_sum.h": ".meta/example.h", "digit_sum.cpp": ".meta/example.cpp"},
}


def exercise_dir(instance_id: str) -> Path:
    language, slug = instance_id.split("__")
    return SAMPLES / language / "exercises" / "practice" / slug


def solution_files(instance_id: str) -> dict[str, str]:
    exercise = exercise_dir(instance_id)
    return {path: (exercise / source).read_text() for path, source in SOLUTIONS[instance_id].items()}


def changed_paths(instance_id: str) -> list[str]:
    """Solution files whose reference differs from the stub (cpp's header does not)."""
    exercise = exercise_dir(instance_id)
    return sorted(path for path, text in solution_files(instance_id).items() if (exercise / path).read_text() != text)


def solving_steps(instance_id: str) -> list:
    files = solution_files(instance_id)
    return [
        ToolCalls([call("view_file", path=next(iter(files)))], content="Let me look at the stub."),
        ToolCalls([call("create_file", path=path, content=text) for path, text in files.items()]),
        ToolCalls([call("shell", command=CHECK_COMMAND)]),
        ToolCalls([call("finish", summary="Implemented the solution.")]),
    ]


@pytest.fixture
def model_environment(monkeypatch):
    """Point the agent at a scripted server: returns a function taking the server."""

    def point_at(server: ScriptedModelServer, **settings: str) -> list[str]:
        variables = {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": API_KEY, "OPENAI_MODEL": MODEL,
                     **settings}
        for name, value in variables.items():
            monkeypatch.setenv(name, value)
        return sorted(variables)

    return point_at


def run_default_agent(sample_dataset: Path, tmp_path: Path, instance_id: str, pass_env: list[str] | None):
    return harness(dataset=sample_dataset, output_dir=tmp_path, progress=False, agent=DEFAULT_AGENT,
                   instance_ids=[instance_id], model_name_or_path="default-agent", agent_network="host",
                   pass_env=pass_env, agent_timeout=180, max_workers=1)


@pytest.mark.parametrize("instance_id", list(SOLUTIONS))
def test_default_agent_solves_in_the_language_container(
    sample_dataset, tmp_path, model_environment, instance_id, no_leftover_containers
):
    with ScriptedModelServer(solving_steps(instance_id)) as server:
        pass_env = model_environment(server)
        outcome = run_default_agent(sample_dataset, tmp_path, instance_id, pass_env)

    result = outcome.results[instance_id]
    assert (result.eval_result, result.reason) == ("resolved", "tests_passed"), (result.detail, result.error)
    assert result.patch_source == "agent" and result.agent_exit_code == 0 and not result.agent_timed_out
    assert sorted(result.kept_paths) == changed_paths(instance_id) and result.tamper == []
    usage = result.agent_usage
    assert (usage["stop_reason"], usage["model"], usage["calls"]) == ("finished", MODEL, 4)
    assert usage["prompt_tokens"] == server.usage_served.prompt_tokens
    assert usage["completion_tokens"] == server.usage_served.completion_tokens
    assert usage["total_tokens"] == server.usage_served.total_tokens
    assert all(request["model"] == MODEL for request in server.requests)
    view_result, *_, check_result = server.tool_results()
    assert view_result.startswith("     1\t")  # the stub, as the agent saw it in /testbed
    assert check_result.startswith("[exit code 0]") and changed_paths(instance_id)[0] in check_result
    transcript = (outcome.run_dir / f"{instance_id}.md").read_text()
    assert "## Stopped: finished" in transcript and "`create_file`" in transcript
    for path in outcome.run_dir.iterdir():
        assert API_KEY not in path.read_text(errors="replace"), f"the API key leaked into {path.name}"


@pytest.mark.parametrize("scenario", ["recovers", "gives_up"])
def test_default_agent_survives_a_misbehaving_model_and_its_work_is_graded(
    sample_dataset, tmp_path, model_environment, scenario, no_leftover_containers
):
    instance_id = "python__running-total"
    solve = solving_steps(instance_id)
    if scenario == "recovers":
        # malformed call (answered as a tool error), a 500 (retried), an answer slower than
        # the per-call timeout (retried; never seen), then a normal solving run.
        # The timeout leaves room for a normal answer on a loaded machine (at 1 s, CI saw a normal
        # call time out too: 6 calls served instead of 5); the slow answer comes far later.
        steps = [malformed_tool_call(), HttpError(500),
                 Delay(40, then=ToolCalls([call("finish", summary="too late")])), *solve]
        settings = {"AGENT_CALL_TIMEOUT": "8", "AGENT_RETRY_BASE_DELAY": "0.05"}
    else:
        # writes the solution, then the endpoint fails for good: the agent stops with api_error.
        # The harness's default pass_env must carry the agent's AGENT_* settings.
        steps = [solve[1], HttpError(500), HttpError(500)]
        settings = {"AGENT_MAX_RETRIES": "1", "AGENT_RETRY_BASE_DELAY": "0.05"}

    with ScriptedModelServer(steps) as server:
        pass_env = model_environment(server, **settings)
        outcome = run_default_agent(sample_dataset, tmp_path, instance_id,
                                    pass_env if scenario == "recovers" else None)

    result = outcome.results[instance_id]
    assert result.eval_result in ("resolved", "unresolved", "empty_patch"), (result.reason, result.error)
    assert result.eval_result == "resolved", result.detail
    usage = result.agent_usage
    if scenario == "recovers":
        assert (usage["stop_reason"], usage["failed_calls"], result.agent_exit_code) == ("finished", 2, 0)
        assert usage["calls"] == server.usage_served.calls == 5
        assert server.tool_results()[0].startswith("Error: arguments for create_file are not valid JSON")
        transcript = (outcome.run_dir / f"{instance_id}.md").read_text()
        assert "HTTP 500" in transcript and "model call timed out" in transcript and "too late" not in transcript
    else:
        assert (usage["stop_reason"], usage["calls"], result.agent_exit_code) == ("api_error", 1, 1)
        assert len(server.requests) == 3  # one call, then the first try and one retry
    assert json.loads((outcome.run_dir / f"{instance_id}.json").read_text())["agent_usage"] == usage
