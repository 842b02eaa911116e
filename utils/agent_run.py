"""The agent phase of one instance: base repo + agent in a container, run, collect the patch.

The agent contract (agent/README.md documents it for agent authors):
    cwd /testbed (the instance's base repo, tests absent), the agent at /agent,
    timeout T python /agent/run_task_agent.py --problem_statement ... --git_dir /testbed/
        --chat_history_file /agent/<instance_id>.md --base_commit <sha> --outdir /agent/
        --test_description ... --language <language> [--model M]
The timeout kills the agent's whole process group; then every process left in the
container is killed before anything is copied out, so nothing changes files mid-copy.
The patch is /agent/model_patch.diff when the agent wrote one, else the harness's own diff of
/testbed against the base commit (new files included, build artifacts excluded).
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass, field
from typing import Callable

import docker

from utils.agent_image import AGENT_DIR_IN_CONTAINER, PreparedAgent
from utils.dataset import Instance
from utils.languages import LanguageSpec
from utils.sandbox import Limits, Sandbox, Sandboxes, SandboxSpec

TESTBED = "/testbed"
PATCH_FILE = f"{AGENT_DIR_IN_CONTAINER}/model_patch.diff"
USAGE_FILE = f"{AGENT_DIR_IN_CONTAINER}/agent_usage.json"


@dataclass(frozen=True)
class AgentRunSettings:
    timeout: int = 600
    model: str | None = None
    network: str = "bridge"  # the agent talks to a model API; "host" reaches loopback servers
    environment: dict[str, str] = field(default_factory=dict)
    limits: Limits = field(default_factory=Limits)


@dataclass(frozen=True)
class AgentRun:
    patch: str
    patch_source: str           # "agent" | "harness"
    exit_code: int | None
    timed_out: bool
    seconds: float
    chat_history: str
    usage: dict
    output_tail: str


def test_description(spec: LanguageSpec) -> str:
    return (f"The tests are hidden from you. After you finish, the {spec.name} tests are run against the "
            f"solution files with every test enabled and the network off.")


def agent_sandbox_spec(image: str, agent: PreparedAgent, settings: AgentRunSettings) -> SandboxSpec:
    # Built-in agents call no model: no network, no secrets.
    if agent.builtin:
        return SandboxSpec(image=image, role="agent", network="none", limits=settings.limits)
    return SandboxSpec(image=image, role="agent", network=settings.network, limits=settings.limits,
                       environment=tuple(sorted(settings.environment.items())))


def run_agent(client: docker.DockerClient, image: str, agent: PreparedAgent, instance: Instance,
              spec: LanguageSpec, settings: AgentRunSettings, run_id: str,
              log: Callable[[str], None], sandboxes: Sandboxes | None = None) -> AgentRun:
    sandbox_spec = agent_sandbox_spec(image, agent, settings)
    network = sandbox_spec.network
    sandboxes = sandboxes or Sandboxes(client, run_id)
    with sandboxes.start(sandbox_spec, instance.instance_id) as box:
        log(f"agent container from {image} (network {network})")
        box.put_directory(instance.agent_repo_dir, TESTBED)
        if agent.name == "oracle":
            # The reference travels into a container only for the oracle agent.
            box.put_directory(instance.reference_dir, TESTBED)
            exit_code, timed_out, seconds, output = 0, False, 0.0, "oracle: reference solution copied"
        elif agent.name == "null":
            exit_code, timed_out, seconds, output = 0, False, 0.0, "null agent: no change"
        else:
            command = agent_command(instance, spec, settings)
            log(f"$ {command}")
            result = box.exec(command, settings.timeout, workdir=TESTBED,
                              environment={"POLYGLOT_PROBLEM_STATEMENT": instance.problem_statement,
                                           "POLYGLOT_TEST_DESCRIPTION": test_description(spec)})
            box.kill_all_processes()
            exit_code, timed_out, seconds, output = result.exit_code, result.timed_out, result.seconds, result.output
            log(f"agent exit {exit_code} timed_out={timed_out} after {seconds:.1f}s")
        patch, source = _collect_patch(box, instance, spec, agent, log)
        chat = box.get_files(f"{AGENT_DIR_IN_CONTAINER}/{instance.instance_id}.md").get(
            f"{instance.instance_id}.md", b"") if not agent.builtin else b""
        usage = _read_usage(box) if not agent.builtin else {}
    return AgentRun(patch, source, exit_code, timed_out, seconds, chat.decode("utf-8", "replace"), usage,
                    output[-20000:])


def agent_command(instance: Instance, spec: LanguageSpec, settings: AgentRunSettings) -> str:
    arguments = [
        "python", f"{AGENT_DIR_IN_CONTAINER}/run_task_agent.py",
        "--problem_statement", '"$POLYGLOT_PROBLEM_STATEMENT"',
        "--git_dir", f"{TESTBED}/",
        "--chat_history_file", shlex.quote(f"{AGENT_DIR_IN_CONTAINER}/{instance.instance_id}.md"),
        "--base_commit", instance.base_commit,
        "--outdir", f"{AGENT_DIR_IN_CONTAINER}/",
        "--test_description", '"$POLYGLOT_TEST_DESCRIPTION"',
        "--language", spec.name,
    ]
    if settings.model:
        arguments += ["--model", shlex.quote(settings.model)]
    return " ".join(arguments)


def _collect_patch(box: Sandbox, instance: Instance, spec: LanguageSpec, agent: PreparedAgent,
                   log: Callable[[str], None]) -> tuple[str, str]:
    if not agent.builtin:
        written = box.get_files(PATCH_FILE).get("model_patch.diff")
        if written is not None:
            return written.decode("utf-8", errors="replace"), "agent"
    excludes = " ".join(shlex.quote(f":(glob,exclude){pattern}") for pattern in spec.artifact_globs
                        if not pattern.startswith(".git/"))
    index = "/tmp/polyglot-harness-index"
    diff_file = "/tmp/polyglot-harness.diff"
    # A private index: whatever the agent did to the repo's own index or HEAD, the diff is
    # taken against the base commit.
    command = (f"export GIT_INDEX_FILE={index}; git read-tree {instance.base_commit} && "
               f"git add -A -- . {excludes} && "
               f"git diff --cached --binary --no-color {instance.base_commit} -- . {excludes} > {diff_file}")
    log(f"$ {command}")
    result = box.exec(command, 120, workdir=TESTBED)
    if result.exit_code != 0:
        log(f"harness diff failed (exit {result.exit_code}): {result.output[-500:]}")
        return "", "harness"
    diff = box.get_files(diff_file).get("polyglot-harness.diff", b"")
    return diff.decode("utf-8", errors="replace"), "harness"


def _read_usage(box: Sandbox) -> dict:
    raw = box.get_files(USAGE_FILE).get("agent_usage.json")
    if raw is None:
        return {}
    try:
        usage = json.loads(raw)
        return usage if isinstance(usage, dict) else {}
    except ValueError:
        return {}
