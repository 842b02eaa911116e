#!/usr/bin/env python3
"""Default task agent: a small tool-calling loop over an OpenAI-compatible Chat Completions API.

    system prompt + task ──▶ model ──▶ tool calls ──▶ tools.py (shell, view, create, replace, finish)
                               ▲                          │
                               └──── tool results ◀───────┘   until finish or a limit
    every step: transcript (.md), agent_usage.json, model_patch.diff  (outputs.py)

The contract with the harness is documented in README.md next to this file.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
import traceback
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path

from outputs import GitError, Transcript, Usage, fenced, write_model_patch
from prompts import BUDGET_WARNING, NO_TOOL_CALL_NUDGE, system_prompt, task_message
from tools import Toolbox

EXIT_OK, EXIT_FAILED = 0, 1
# Stop reasons that mean the agent could not do its job (a non-zero exit code).
FAILED_STOPS = {"api_error", "agent_error", "config_error"}
BUDGET_WARNING_STEPS = 3
BUDGET_WARNING_SECONDS = 60
# The harness caps the feedback file well below this; a bigger file is cut, not refused.
MAX_FEEDBACK_CHARS = 20000


@dataclass(frozen=True)
class AgentConfig:
    problem_statement: str
    test_description: str
    language: str
    git_dir: Path
    base_commit: str
    outdir: Path
    chat_history_file: Path
    model: str
    base_url: str | None
    max_steps: int
    max_wall_time: float
    max_tokens: int
    call_timeout: float
    command_timeout: float
    max_retries: int
    retry_base_delay: float
    output_limit: int
    test_feedback: str = ""  # a second try: the previous try's test output (--test_feedback_file)


@dataclass(frozen=True)
class Stop:
    reason: str  # finished, max_steps, wall_time, max_tokens, api_error, no_tool_call, signal, ...
    detail: str = ""


class Interrupted(BaseException):
    """Raised from the signal handler; a BaseException so no `except Exception` swallows it."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def parse_config(argv: list[str] | None = None) -> AgentConfig:
    env = os.environ.get
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--problem_statement", required=True)
    parser.add_argument("--git_dir", required=True, type=Path)
    parser.add_argument("--chat_history_file", required=True, type=Path)
    parser.add_argument("--base_commit", required=True)
    parser.add_argument("--outdir", required=True, type=Path)
    parser.add_argument("--test_description", default="")
    parser.add_argument("--language", default="")
    parser.add_argument("--model", default=env("OPENAI_MODEL", ""))
    parser.add_argument("--base_url", default=env("OPENAI_BASE_URL"))
    # String defaults go through `type`, so a bad environment value fails like a bad flag.
    parser.add_argument("--max_steps", type=int, default=env("AGENT_MAX_STEPS", "40"))
    parser.add_argument("--max_wall_time", type=float, default=env("AGENT_MAX_WALL_TIME", "540"))
    parser.add_argument("--max_tokens", type=int, default=env("AGENT_MAX_TOKENS", "400000"))
    parser.add_argument("--call_timeout", type=float, default=env("AGENT_CALL_TIMEOUT", "120"))
    parser.add_argument("--command_timeout", type=float, default=env("AGENT_COMMAND_TIMEOUT", "120"))
    parser.add_argument("--max_retries", type=int, default=env("AGENT_MAX_RETRIES", "6"))
    parser.add_argument("--retry_base_delay", type=float, default=env("AGENT_RETRY_BASE_DELAY", "2"))
    parser.add_argument("--output_limit", type=int, default=env("AGENT_OUTPUT_LIMIT", "12000"))
    parser.add_argument("--test_feedback_file", type=Path, default=env("POLYGLOT_TEST_FEEDBACK_FILE") or None,
                        help="a second try: the previous try's test output (harness --tries 2)")
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        log(f"ignoring unknown arguments: {' '.join(unknown)}")
    return AgentConfig(
        problem_statement=args.problem_statement,
        test_description=args.test_description,
        language=args.language,
        git_dir=args.git_dir.resolve(),
        base_commit=args.base_commit,
        outdir=args.outdir.resolve(),
        chat_history_file=args.chat_history_file.resolve(),
        model=args.model,
        base_url=args.base_url or None,
        max_steps=args.max_steps,
        max_wall_time=args.max_wall_time,
        max_tokens=args.max_tokens,
        call_timeout=args.call_timeout,
        command_timeout=args.command_timeout,
        max_retries=args.max_retries,
        retry_base_delay=args.retry_base_delay,
        output_limit=args.output_limit,
        test_feedback=read_feedback(args.test_feedback_file),
    )


def read_feedback(path: Path | None) -> str:
    """The feedback file's text, cut at MAX_FEEDBACK_CHARS; "" without one (a first try) or
    when it cannot be read (noted on stderr: the try goes on without it)."""
    if path is None:
        return ""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read(MAX_FEEDBACK_CHARS)
    except OSError as error:
        log(f"cannot read the test feedback file {path}: {error}")
        return ""


def log(message: str) -> None:
    stamp = datetime.now(timezone.utc).strftime("%H:%M:%S")
    print(f"[agent {stamp}] {message}", file=sys.stderr, flush=True)


class AgentRun:
    def __init__(self, config: AgentConfig) -> None:
        self.config = config
        self.started = time.monotonic()
        self.deadline = self.started + config.max_wall_time
        self.finalizing = False
        self.patch_path = config.outdir / "model_patch.diff"
        self.usage_path = config.outdir / "agent_usage.json"
        self.usage = Usage(model=config.model)
        config.outdir.mkdir(parents=True, exist_ok=True)
        self.transcript = Transcript(config.chat_history_file)
        self.usage.write(self.usage_path)

    def execute(self) -> int:
        stop = Stop("agent_error", "stopped before the loop started")
        exit_code = EXIT_FAILED
        try:
            for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
                signal.signal(signum, self._on_signal)
            self._write_header()
            self._checkpoint()
            stop = self._run()
            exit_code = EXIT_FAILED if stop.reason in FAILED_STOPS else EXIT_OK
        except Interrupted as interrupt:
            stop = Stop("signal", f"received {interrupt}")
            exit_code = 128 + interrupt.signum
        except Exception:  # a bug in the agent must still leave the outputs behind
            stop = Stop("agent_error", traceback.format_exc())
        finally:
            self._finalize(stop)
        return exit_code

    def _on_signal(self, signum: int, frame: object) -> None:
        if self.finalizing:
            log(f"{signal.Signals(signum).name} while writing outputs; finishing that first")
            return
        raise Interrupted(signum)

    def _run(self) -> Stop:
        config = self.config
        if not config.model:
            return Stop("config_error", "no model: pass --model or set OPENAI_MODEL")
        # Imported only now, after the signal handlers: the SDK takes about a second to
        # import, and a SIGTERM in that second must still leave the outputs.
        from llm import ApiError, ChatModel, DeadlineReached, RetryPolicy

        model = ChatModel(
            config.model, config.base_url, os.environ.get("OPENAI_API_KEY"), config.call_timeout,
            RetryPolicy(config.max_retries, config.retry_base_delay), on_retry=self._on_retry,
        )
        toolbox = Toolbox(config.git_dir, config.command_timeout, config.output_limit, self._seconds_left)
        messages: list[dict] = [
            {"role": "system", "content": self._system_prompt()},
            {"role": "user", "content": task_message(config.problem_statement, config.test_description,
                                                     config.test_feedback)},
        ]
        nudged = False
        for step in range(1, config.max_steps + 1):
            if self.usage.total_tokens >= config.max_tokens:
                return Stop("max_tokens", f"{self.usage.total_tokens} tokens used, limit {config.max_tokens}")
            self.usage.steps = step
            self.transcript.heading(f"Step {step}")
            try:
                reply = model.complete(messages, toolbox.schemas, self.deadline)
            except DeadlineReached as error:
                return Stop("wall_time", str(error))
            except ApiError as error:
                return Stop("api_error", str(error))
            finally:
                self.usage.failed_calls = model.failed_calls
            self._record_reply(reply, messages)
            if not reply.tool_calls:
                if nudged:
                    return Stop("no_tool_call", "two replies in a row without a tool call")
                nudged = True
                self.transcript.note(f"No tool call (finish_reason={reply.finish_reason}); nudging.")
                messages.append({"role": "user", "content": NO_TOOL_CALL_NUDGE})
                continue
            nudged = False
            finished = self._run_tool_calls(reply.tool_calls, toolbox, messages, step)
            self._checkpoint()
            names = ", ".join(call.name for call in reply.tool_calls)
            log(f"step {step}: {names}; {self.usage.total_tokens} tokens so far")
            if finished:
                return Stop("finished")
        return Stop("max_steps", f"reached the limit of {config.max_steps} model calls")

    def _record_reply(self, reply, messages: list[dict]) -> None:
        self.usage.calls += 1
        self.usage.prompt_tokens += reply.prompt_tokens
        self.usage.completion_tokens += reply.completion_tokens
        self.usage.total_tokens += reply.total_tokens
        if reply.content:
            self.transcript.text(reply.content)
        assistant: dict = {"role": "assistant", "content": reply.content}
        if reply.tool_calls:
            assistant["tool_calls"] = [_tool_call_message(call) for call in reply.tool_calls]
        messages.append(assistant)

    def _run_tool_calls(self, tool_calls, toolbox: Toolbox, messages: list[dict], step: int) -> bool:
        """Answer every call (the API wants one tool message per call id); True if one was finish."""
        finished = False
        for call in tool_calls:
            self.transcript.text(
                f"**Tool call** `{call.name}` (id `{call.id}`)\n\n{_render_arguments(call.arguments)}"
            )
            result = toolbox.run(call.name, call.arguments)
            finished = finished or result.finished
            self.transcript.block("Error" if result.is_error else "Result", result.output)
            messages.append({"role": "tool", "tool_call_id": call.id, "content": result.output})
        warning = self._budget_warning(step)
        if warning and not finished:
            messages[-1]["content"] += f"\n\n{warning}"
            self.transcript.note(warning)
        return finished

    def _budget_warning(self, step: int) -> str:
        steps_left = self.config.max_steps - step
        seconds_left = max(0.0, self._seconds_left())
        if steps_left > BUDGET_WARNING_STEPS and seconds_left >= BUDGET_WARNING_SECONDS:
            return ""
        return BUDGET_WARNING.format(steps_left=steps_left, seconds_left=seconds_left)

    def _seconds_left(self) -> float:
        return self.deadline - time.monotonic()

    def _on_retry(self, message: str) -> None:
        log(message)
        self.transcript.note(f"API: {message}")

    def _system_prompt(self) -> str:
        config = self.config
        return system_prompt(str(config.git_dir), config.max_steps, config.max_wall_time)

    def _write_header(self) -> None:
        config = self.config
        started = datetime.now(timezone.utc).isoformat(timespec="seconds")
        self.transcript.text(
            f"# Agent run: {config.chat_history_file.stem}\n\n"
            f"- model: `{config.model}`\n- language: {config.language}\n"
            f"- base commit: `{config.base_commit}`\n- started: {started}\n"
            f"- limits: {config.max_steps} steps, {config.max_wall_time:.0f} s, {config.max_tokens} tokens, "
            f"{config.call_timeout:.0f} s per model call"
        )
        self.transcript.block("System prompt", self._system_prompt(), "text")
        task = task_message(config.problem_statement, config.test_description, config.test_feedback)
        self.transcript.block("Task", task, "markdown")

    def _checkpoint(self) -> None:
        self.usage.seconds = round(time.monotonic() - self.started, 3)
        try:
            config = self.config
            write_model_patch(config.git_dir, config.base_commit, self.patch_path, self._own_paths())
        except (GitError, OSError, ValueError) as error:
            log(f"could not write the patch: {error}")
            self.transcript.note(f"Could not write model_patch.diff: {error}")
            if not self.patch_path.exists():
                self.patch_path.write_text("")
        self.usage.write(self.usage_path)

    def _own_paths(self) -> tuple[str, ...]:
        """The agent's own outputs, if they live inside the repository, stay out of the patch."""
        globs = []
        for path, pattern in ((self.config.outdir, "{}/**"), (self.config.chat_history_file, "{}")):
            if path.is_relative_to(self.config.git_dir) and path != self.config.git_dir:
                globs.append(pattern.format(path.relative_to(self.config.git_dir).as_posix()))
        return tuple(globs)

    def _finalize(self, stop: Stop) -> None:
        self.finalizing = True
        self.usage.stop_reason = stop.reason
        self.usage.stop_detail = stop.detail
        self._checkpoint()
        log(f"stopped: {stop.reason} {stop.detail}".rstrip())
        self.transcript.heading(f"Stopped: {stop.reason}")
        if stop.detail:
            self.transcript.text(fenced(stop.detail, "text"))
        self.transcript.block("Usage", json.dumps(asdict(self.usage), indent=2), "json")
        self.transcript.close()


def _tool_call_message(call) -> dict:
    arguments = call.arguments
    try:
        json.loads(arguments or "{}")
    except json.JSONDecodeError:
        # Some servers reject history with invalid JSON arguments; the tool's error answer
        # already quotes what the model sent.
        arguments = "{}"
    return {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": arguments}}


def _render_arguments(raw_arguments: str) -> str:
    try:
        arguments = json.loads(raw_arguments or "{}")
    except json.JSONDecodeError:
        return fenced(raw_arguments, "text")
    if not isinstance(arguments, dict):
        return fenced(raw_arguments, "json")
    lines = []
    for name, value in arguments.items():
        text = value if isinstance(value, str) else json.dumps(value)
        if "\n" in text or "`" in text or len(text) > 100:
            lines.append(f"- {name}:\n\n{fenced(text)}\n")
        else:
            lines.append(f"- {name}: `{text}`")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    return AgentRun(parse_config(argv)).execute()


if __name__ == "__main__":
    sys.exit(main())
