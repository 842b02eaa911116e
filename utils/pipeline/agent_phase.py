"""The agent phase of one instance: base repo + agent in a container, run, collect the patch.

The agent contract (agent/README.md documents it for agent authors):
    cwd /testbed (the instance's base repo, tests absent), the agent at /agent,
    timeout T python /agent/run_task_agent.py --problem_statement ... --git_dir /testbed/
        --chat_history_file /agent/<instance_id>.md --base_commit <sha> --outdir /agent/
        --test_description ... --language <language> [--model M]
        [--test_feedback_file /feedback/test_feedback.md]   (a second try only; also in
                                                             $POLYGLOT_TEST_FEEDBACK_FILE)
A second try (TryStart) starts from the base repo with the previous try's patch applied (as
the agent left it; when it does not apply, from the base repo, and the feedback says so), and
gets the feedback file outside /testbed, so it never enters the patch.
The timeout kills the agent's whole process group; then every process left in the
container is killed before anything is copied out, so nothing changes files mid-copy.
Before the agent starts, /testbed/.git/info/exclude lists the language's build artifacts.
The patch is /agent/model_patch.diff when the agent wrote one (a regular file; symlinks are
not followed), else the harness's own diff of /testbed against the base commit (new files
included, build artifacts excluded).
"""

from __future__ import annotations

import json
import secrets
import shlex
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator
from contextlib import contextmanager


from ..seam.agent import AGENT_DIR_IN_CONTAINER, PreparedAgent
from ..records.dataset import Instance
from ..records.run_dir import transcript_name
from ..languages import LanguageSpec
from ..judging.patches import PatchError, apply_patch
from ..seam.protocol import ExecResult, Limits, Sandbox, SandboxSpec
from ..seam.errors import CommandNotStarted, SandboxError
from .pools import Sandboxes

TESTBED = "/testbed"
GIT_EXCLUDE = ".git/info/exclude"  # relative to TESTBED
PATCH_FILE = f"{AGENT_DIR_IN_CONTAINER}/model_patch.diff"
USAGE_FILE = f"{AGENT_DIR_IN_CONTAINER}/agent_usage.json"
FEEDBACK_DIR = "/feedback"
FEEDBACK_FILE = f"{FEEDBACK_DIR}/test_feedback.md"
FEEDBACK_ENV = "POLYGLOT_TEST_FEEDBACK_FILE"
# What the harness copies out of an agent container at most. A larger patch is the agent's
# output, not an infrastructure failure: `unresolved`, reason patch_too_large, with its size.
# A larger transcript or usage file is left behind (noted), so the harness's memory stays
# bounded whatever the agent writes.
MAX_PATCH_BYTES = 8 * 1024 * 1024
MAX_TRANSCRIPT_BYTES = 8 * 1024 * 1024
MAX_USAGE_BYTES = 1024 * 1024


class AgentNotStarted(SandboxError):
    """The engine refused to start the agent's command: nothing ran, a retry costs nothing."""


class AgentInterrupted(SandboxError):
    """The engine failed after the agent had started: its work is lost, and running it again
    costs model money, so the instance ends `incomplete` (a resume runs it again)."""


@dataclass(frozen=True)
class AgentRunSettings:
    timeout: int = 600
    model: str | None = None
    network: str = "bridge"  # the agent talks to a model API; "host" reaches loopback servers
    environment: dict[str, str] = field(default_factory=dict)
    limits: Limits = field(default_factory=Limits)


@dataclass(frozen=True)
class TryStart:
    """Where a try after the first begins (utils/run_instance.py decides when one runs)."""
    number: int    # 2 for Aider's second try
    patch: str     # the previous try's patch as produced (unfiltered): applied onto the base repo
    feedback: str  # utils/feedback.py's text, given to the agent as FEEDBACK_FILE


@dataclass(kw_only=True, frozen=True)
class AgentPhaseOutcome:
    """What the agent phase left: the patch, and how the agent's run went."""
    patch: str
    patch_source: str           # "agent" | "harness"
    exit_code: int | None
    timed_out: bool
    seconds: float
    chat_history: str
    usage: dict
    output_tail: str
    patch_bytes: int | None = None  # set when the patch was over MAX_PATCH_BYTES (and is then "")
    disk_limited: bool = False      # stopped for outgrowing Limits.disk; graded on what it left


def test_description(language: LanguageSpec) -> str:
    """The agent's --test_description: how the hidden tests run, and how to check work without
    them. The language's module is the one place that knows both; the agent cannot import it."""
    return (f"The tests are hidden from you. After you finish, the {language.display_name} tests are run "
            f"against the solution files with every test enabled and the network off.\n\n"
            f"How to check your work without them: {language.self_check_hint}")


def git_exclude(language: LanguageSpec, existing: str = "") -> str:
    """The text of /testbed/.git/info/exclude for the agent: `existing` plus the language's
    artifact globs, so git (and so any agent that builds its patch with git) ignores build
    artifacts, and no agent keeps a copy of the list."""
    lines = [f"# build artifacts of {language.name} (written by the harness)", *language.gitignore_lines()]
    return (existing if not existing or existing.endswith("\n") else existing + "\n") + "\n".join(lines) + "\n"


def _ignore_artifacts(box: Sandbox, repo: Path, language: LanguageSpec) -> None:
    """Writes git_exclude into the agent container's /testbed (the repo's own exclude file kept)."""
    existing = repo / GIT_EXCLUDE
    text = git_exclude(language, existing.read_text(encoding="utf-8") if existing.is_file() else "")
    with tempfile.TemporaryDirectory(prefix="polyglot-exclude-") as staging:
        exclude = Path(staging) / GIT_EXCLUDE
        exclude.parent.mkdir(parents=True)
        exclude.write_text(text, encoding="utf-8")
        box.put_directory(Path(staging), TESTBED)


def agent_sandbox_spec(image: str, agent: PreparedAgent, settings: AgentRunSettings) -> SandboxSpec:
    # Built-in agents call no model: no network, no secrets.
    if agent.builtin:
        return SandboxSpec(image=image, role="agent", network="none", limits=settings.limits)
    return SandboxSpec(image=image, role="agent", network=settings.network, limits=settings.limits,
                       environment=tuple(sorted(settings.environment.items())))


ATTEMPT_ENV = "POLYGLOT_ATTEMPT"  # which independent attempt (--attempts) this run is: 1, 2, ...


def run_agent(sandboxes: Sandboxes, image: str, agent: PreparedAgent, instance: Instance,
              language: LanguageSpec, settings: AgentRunSettings, log: Callable[[str], None],
              start: TryStart | None = None, attempt: int = 1) -> AgentPhaseOutcome:
    sandbox_spec = agent_sandbox_spec(image, agent, settings)
    network = sandbox_spec.network
    with sandboxes.start(sandbox_spec, instance.instance_id) as box, _starting_tree(instance, start, log) as tree:
        log(f"agent container from {image} (network {network})")
        box.put_directory(tree.repo, TESTBED)
        if start is not None:
            box.put_directory(tree.feedback_dir, FEEDBACK_DIR)
        if agent.builtin:
            return _run_builtin(box, instance, language, agent, log)
        _ignore_artifacts(box, tree.repo, language)
        try:
            return _run_agent_command(box, instance, language, agent, settings, log, start is not None, attempt)
        except AgentNotStarted:
            raise  # the agent never ran: retried like any start-up failure
        except SandboxError as error:
            raise AgentInterrupted(str(error)) from error


@dataclass(frozen=True)
class StartingTree:
    repo: Path          # what goes to /testbed
    feedback_dir: Path  # what goes to FEEDBACK_DIR (a try after the first)


@contextmanager
def _starting_tree(instance: Instance, start: TryStart | None, log: Callable[[str], None]) -> Iterator[StartingTree]:
    """The base repo, or for a later try a copy of it with the previous try's patch applied
    (never the dataset's own files), and the feedback file beside it."""
    if start is None:
        yield StartingTree(instance.agent_repo_dir, instance.agent_repo_dir)
        return
    with tempfile.TemporaryDirectory(prefix="polyglot-try-") as workdir:
        repo, feedback_dir = Path(workdir) / "repo", Path(workdir) / "feedback"
        shutil.copytree(instance.agent_repo_dir, repo, symlinks=True)
        feedback = start.feedback
        try:
            method = apply_patch(repo, start.patch)
            log(f"try {start.number} starts from the previous try's patch ({method})")
        except PatchError as error:
            shutil.rmtree(repo)
            shutil.copytree(instance.agent_repo_dir, repo, symlinks=True)
            log(f"try {start.number} starts from the base repo: the previous patch did not apply ({error})")
            feedback += ("\n[Your previous changes could not be restored (the patch did not apply): the "
                         "repository is at the base commit.]\n")
        feedback_dir.mkdir()
        (feedback_dir / Path(FEEDBACK_FILE).name).write_text(feedback, encoding="utf-8")
        yield StartingTree(repo, feedback_dir)


def _run_builtin(box: Sandbox, instance: Instance, language: LanguageSpec, agent: PreparedAgent,
                 log: Callable[[str], None]) -> AgentPhaseOutcome:
    if agent.name == "oracle":
        # The reference travels into a container only for the oracle agent.
        box.put_directory(instance.reference_dir, TESTBED)
    output = "oracle: reference solution copied" if agent.name == "oracle" else "null agent: no change"
    collected = _collect_outputs(box, instance, language, log)
    return AgentPhaseOutcome(patch=collected.patch, patch_source=collected.patch_source, exit_code=0, timed_out=False, seconds=0.0, chat_history="", usage={}, output_tail=output, patch_bytes=collected.patch_bytes)


def _run_agent_command(box: Sandbox, instance: Instance, language: LanguageSpec, agent: PreparedAgent,
                       settings: AgentRunSettings, log: Callable[[str], None],
                       with_feedback: bool = False, attempt: int = 1) -> AgentPhaseOutcome:
    command = agent_command(instance, language, settings, with_feedback, agent)
    log(f"$ {command}")
    environment = {"POLYGLOT_PROBLEM_STATEMENT": instance.problem_statement,
                   "POLYGLOT_TEST_DESCRIPTION": test_description(language),
                   ATTEMPT_ENV: str(attempt)}
    if with_feedback:
        environment[FEEDBACK_ENV] = FEEDBACK_FILE
    try:
        result = box.exec(command, settings.timeout, workdir=TESTBED, guard_disk=True, environment=environment)
    except CommandNotStarted as error:
        raise AgentNotStarted(str(error)) from error
    box.kill_all_processes()
    if result.disk_exceeded:
        log(f"the agent outgrew the {settings.limits.disk}-byte disk cap: stopped")
    log(f"agent exit {result.exit_code} timed_out={result.timed_out} after {result.seconds:.1f}s")
    collected = _collect_outputs(box, instance, language, log)
    chat = collected.chat
    if chat is None:
        chat = f"[the transcript holds {collected.sizes['chat']} bytes, over the harness's limit: not kept]\n".encode()
    return AgentPhaseOutcome(patch=collected.patch, patch_source=collected.patch_source, exit_code=result.exit_code, timed_out=result.timed_out, seconds=result.seconds,
                    chat_history=chat.decode("utf-8", "replace"), usage=_parse_usage(collected.usage), output_tail=result.output[-20000:],
                    patch_bytes=collected.patch_bytes, disk_limited=result.disk_exceeded)


def agent_command(instance: Instance, language: LanguageSpec, settings: AgentRunSettings,
                  with_feedback: bool = False, agent: PreparedAgent | None = None) -> str:
    """The contract's command line (agent/README.md) for the agent's entry point (a host loop's
    layout names its own, and may take no --model)."""
    entry_point = agent.entry_point if agent is not None else "run_task_agent.py"
    arguments = [
        "python", f"{AGENT_DIR_IN_CONTAINER}/{entry_point}",
        "--problem_statement", '"$POLYGLOT_PROBLEM_STATEMENT"',
        "--git_dir", f"{TESTBED}/",
        "--chat_history_file", shlex.quote(f"{AGENT_DIR_IN_CONTAINER}/{transcript_name(instance.instance_id)}"),
        "--base_commit", instance.base_commit,
        "--outdir", f"{AGENT_DIR_IN_CONTAINER}/",
        "--test_description", '"$POLYGLOT_TEST_DESCRIPTION"',
        "--language", language.name,
    ]
    if settings.model and (agent is None or agent.passes_model):
        arguments += ["--model", shlex.quote(settings.model)]
    if with_feedback:
        arguments += ["--test_feedback_file", FEEDBACK_FILE]
    return " ".join(arguments)


@dataclass(frozen=True)
class CollectedOutputs:
    patch: str
    patch_source: str         # "agent" (its model_patch.diff) | "harness" (the harness's own diff)
    patch_bytes: int | None   # the patch's size when over MAX_PATCH_BYTES (patch is then "")
    chat: bytes | None        # b"" when there is none; None when over MAX_TRANSCRIPT_BYTES
    usage: bytes | None       # likewise, MAX_USAGE_BYTES
    sizes: dict[str, int]     # of the files found: "patch", "chat", "usage", "diff"


def _agent_files(instance: Instance) -> tuple[tuple[str, str, int], ...]:
    """(name, path in the container, byte limit) of each file an agent may leave."""
    return (("patch", PATCH_FILE, MAX_PATCH_BYTES),
            ("chat", f"{AGENT_DIR_IN_CONTAINER}/{transcript_name(instance.instance_id)}", MAX_TRANSCRIPT_BYTES),
            ("usage", USAGE_FILE, MAX_USAGE_BYTES))


def _collection_script(instance: Instance, language: LanguageSpec, outbox: str, size_tag: str) -> str:
    """Copies each agent file that is a regular file within its limit into `outbox` and prints
    `size_tag NAME SIZE` for each one found; without a patch file, writes the harness's own
    diff there as `diff` (printed likewise, removed when over the limit)."""
    steps = [f"rm -rf {outbox} && mkdir -m 700 {outbox} || exit 97", "wrote=0"]
    for name, path, limit in _agent_files(instance):
        quoted = shlex.quote(path)
        steps.append(f"if [ -f {quoted} ] && [ ! -L {quoted} ]; then size=$(stat -c %s {quoted}); "
                     f"echo \"{size_tag} {name} $size\"; " + ("wrote=1; " if name == "patch" else "")
                     + f"if [ \"$size\" -le {limit} ]; then cp {quoted} {outbox}/{name} || exit 98; fi; fi")
    steps.append("if [ $wrote = 1 ]; then exit 0; fi")
    # No patch file: the harness's own diff. A private index: whatever the agent did to the
    # repo's own index or HEAD, the diff is taken against the base commit. Files too large for
    # any patch are removed first: hashing them into git's object store would copy them once
    # more (disk) and take minutes; they are listed in the log.
    excludes = " ".join(shlex.quote(f":(glob,exclude){pattern}") for pattern in language.artifact_globs
                        if not pattern.startswith(".git/"))
    diff = f"{outbox}/diff"
    steps.append(f"find . -type f -size +{MAX_PATCH_BYTES // 1024}k -not -path './.git/*' -print -delete "
                 f"| sed 's/^/removed oversized file: /'; "
                 f"export GIT_INDEX_FILE={outbox}/index; git read-tree {instance.base_commit} && "
                 f"git add -A -- . {excludes} && "
                 f"git diff --cached --binary --no-color {instance.base_commit} -- . {excludes} > {diff} || exit 99; "
                 f"rm -f {outbox}/index; size=$(wc -c < {diff}); echo \"{size_tag} diff $size\"; "
                 f"if [ \"$size\" -gt {MAX_PATCH_BYTES} ]; then rm -f {diff}; fi")
    return "\n".join(steps)


def _collect_outputs(box: Sandbox, instance: Instance, language: LanguageSpec,
                     log: Callable[[str], None]) -> CollectedOutputs:
    """What the agent left, in one command and one copy-out (every engine operation costs
    ~40 ms of CPU): its model_patch.diff, transcript and usage file when each is a regular
    file within its limit, else the harness's own diff of /testbed against the base commit.
    Run after every agent process is gone, so nothing changes files meanwhile."""
    token = secrets.token_hex(6)
    outbox, size_tag = f"/tmp/polyglot-harness-out-{token}", f"polyglot-size-{token}"
    command = _collection_script(instance, language, outbox, size_tag)
    log(f"$ {command}")
    result = exec_whole(box, command, 120, TESTBED, log)
    sizes: dict[str, int] = {}
    other = []
    for line in result.output.splitlines():
        tag, _, rest = line.partition(" ")
        name, _, size = rest.partition(" ")
        if tag == size_tag and size.strip().isdigit():
            sizes[name] = int(size)
        elif line.strip():
            other.append(line)
    if other:
        log("\n".join(other)[-2000:])
    if result.exit_code != 0:
        log(f"collecting the agent's files failed (exit {result.exit_code}, {result.seconds:.2f}s): "
            f"{result.output[-500:]!r}")
        return CollectedOutputs("", "harness", None, b"", b"", sizes)
    files = box.get_files(outbox)
    content: dict[str, bytes | None] = {}  # b"": not there; None: over its limit, not copied
    for name, path, limit in _agent_files(instance):
        if name in sizes and sizes[name] > limit:
            log(f"{path} holds {sizes[name]} bytes, over the {limit}-byte limit: not copied")
            content[name] = None
        else:
            content[name] = files.get(name, b"")
    chat, usage = content["chat"], content["usage"]
    if "patch" in sizes:
        patch = content["patch"]
        return CollectedOutputs((patch or b"").decode("utf-8", errors="replace"), "agent",
                                sizes["patch"] if patch is None else None, chat, usage, sizes)
    if "diff" not in sizes:
        log(f"harness diff failed: no size reported: {result.output[-500:]!r}")
        return CollectedOutputs("", "harness", None, chat, usage, sizes)
    if sizes["diff"] > MAX_PATCH_BYTES:
        log(f"the agent's changes make a {sizes['diff']}-byte diff, over the {MAX_PATCH_BYTES}-byte limit: not copied")
        return CollectedOutputs("", "harness", sizes["diff"], chat, usage, sizes)
    return CollectedOutputs(files.get("diff", b"").decode("utf-8", errors="replace"), "harness", None, chat, usage,
                            sizes)


def exec_whole(box: Sandbox, command: str, timeout: int, workdir: str, log: Callable[[str], None],
               attempts: int = 3) -> ExecResult:
    """An idempotent harness command, run again when its output stream arrived cut short
    (ExecResult.complete): its output decides what is graded."""
    for attempt in range(1, attempts + 1):
        result = box.exec(command, timeout, workdir=workdir)
        if result.complete or result.timed_out:
            return result
        log(f"the output of a harness command arrived incomplete (attempt {attempt}); running it again")
    return result


def _parse_usage(raw: bytes | None) -> dict:
    if not raw:
        return {}
    try:
        usage = json.loads(raw)
        return usage if isinstance(usage, dict) else {}
    except ValueError:
        return {}
