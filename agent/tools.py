"""The tools the model can call, their JSON schemas, and argument checking.

Every failure a model can cause (bad JSON, unknown tool, missing argument, a string that is
not in the file) comes back as a `ToolResult` with `is_error=True` so the model can correct
itself; nothing here raises into the loop.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

# The model's shell must not see the agent's credentials or its own knobs.
_PRIVATE_ENV_PREFIXES = ("OPENAI_", "AGENT_")
MAX_VIEW_LINES = 400


@dataclass(frozen=True)
class ToolResult:
    output: str
    is_error: bool = False
    finished: bool = False


class ToolError(Exception):
    """A problem with a tool call, reported to the model as the tool's answer."""


@dataclass(frozen=True)
class Param:
    type: str  # JSON schema type: "string" or "integer"
    description: str
    required: bool = True


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    params: dict[str, Param]
    handler: Callable[..., ToolResult]

    def schema(self) -> dict:
        properties = {
            name: {"type": param.type, "description": param.description}
            for name, param in self.params.items()
        }
        required = [name for name, param in self.params.items() if param.required]
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": {"type": "object", "properties": properties, "required": required},
            },
        }


def truncate_middle(text: str, limit: int) -> str:
    """Keep the head and the tail; say how much was cut so the model knows output is missing."""
    if len(text) <= limit:
        return text
    half = limit // 2
    cut = len(text) - 2 * half
    return f"{text[:half]}\n[... {cut} characters truncated ...]\n{text[-half:]}"


@dataclass
class Toolbox:
    workdir: Path
    command_timeout: float
    output_limit: int
    # Seconds left before the agent's wall-time limit; shell commands never outlive it.
    seconds_left: Callable[[], float] = field(default=lambda: float("inf"))

    def __post_init__(self) -> None:
        self.specs: dict[str, ToolSpec] = {spec.name: spec for spec in self._specs()}

    @property
    def schemas(self) -> list[dict]:
        return [spec.schema() for spec in self.specs.values()]

    def run(self, name: str, raw_arguments: str) -> ToolResult:
        try:
            spec = self.specs.get(name)
            if spec is None:
                raise ToolError(f"unknown tool {name!r}; available tools: {', '.join(self.specs)}")
            arguments = _parse_arguments(spec, raw_arguments)
            result = spec.handler(**arguments)
        except ToolError as error:
            result = ToolResult(f"Error: {error}", is_error=True)
        except Exception as error:  # e.g. OSError, a NUL byte in a path: still the model's to fix
            result = ToolResult(f"Error: {type(error).__name__}: {error}", is_error=True)
        return ToolResult(truncate_middle(result.output, self.output_limit), result.is_error, result.finished)

    def _specs(self) -> list[ToolSpec]:
        return [
            ToolSpec(
                "shell",
                "Run a bash command in the repository root and return its exit code and combined "
                "stdout/stderr (long output is truncated in the middle). No network, no stdin. "
                f"Default timeout {self.command_timeout:.0f} s; the whole process group is killed on timeout.",
                {
                    "command": Param("string", "The bash command to run."),
                    "timeout": Param("integer", "Timeout in seconds (optional).", required=False),
                },
                self.shell,
            ),
            ToolSpec(
                "view_file",
                "Show a text file with line numbers (or list a directory). Use start_line/end_line "
                f"(1-based, inclusive) for large files; at most {MAX_VIEW_LINES} lines are shown at once.",
                {
                    "path": Param("string", "File path, relative to the repository root or absolute."),
                    "start_line": Param("integer", "First line to show (optional).", required=False),
                    "end_line": Param("integer", "Last line to show (optional).", required=False),
                },
                self.view_file,
            ),
            ToolSpec(
                "create_file",
                "Create a file, or overwrite it entirely, with the given content. Parent directories are created.",
                {
                    "path": Param("string", "File path, relative to the repository root or absolute."),
                    "content": Param("string", "The complete new content of the file."),
                },
                self.create_file,
            ),
            ToolSpec(
                "str_replace",
                "Replace one exact occurrence of old_str in a file with new_str. old_str must match "
                "exactly (whitespace included) and occur exactly once; add surrounding lines to make it unique.",
                {
                    "path": Param("string", "File path, relative to the repository root or absolute."),
                    "old_str": Param("string", "The exact text to replace."),
                    "new_str": Param("string", "The replacement text."),
                },
                self.str_replace,
            ),
            ToolSpec(
                "finish",
                "Call when the solution is complete (or you cannot make more progress). Ends the session.",
                {"summary": Param("string", "A short summary of what you changed.", required=False)},
                self.finish,
            ),
        ]

    # --- tools -------------------------------------------------------------------------

    def shell(self, command: str, timeout: int | None = None) -> ToolResult:
        seconds_left = self.seconds_left()
        if seconds_left <= 1:
            raise ToolError("no time left to run commands; call finish")
        budget = min(max(1.0, float(timeout or self.command_timeout)), seconds_left)
        env = {k: v for k, v in os.environ.items() if not k.startswith(_PRIVATE_ENV_PREFIXES)}
        env.update(PAGER="cat", GIT_PAGER="cat", TERM="dumb")
        # Output goes to a file, not a pipe: a background child holding a pipe open
        # would otherwise block us past the timeout.
        with tempfile.TemporaryFile() as output_file:
            process = subprocess.Popen(
                ["bash", "-c", command],
                cwd=self.workdir,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=output_file,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            started = time.monotonic()
            timed_out = False
            try:
                process.wait(timeout=budget)
            except subprocess.TimeoutExpired:
                timed_out = True
            finally:
                _kill_process_group(process)  # also runs when a signal interrupts the wait
            # Leave room for the header, so the final cap in run() doesn't cut the marker.
            output = _read_capped(output_file, max(200, self.output_limit - 200))
        if timed_out:
            header = f"[timed out after {time.monotonic() - started:.0f} s; process group killed]"
        else:
            header = f"[exit code {process.returncode}]"
        return ToolResult(f"{header}\n{output}", is_error=timed_out or process.returncode != 0)

    def view_file(self, path: str, start_line: int | None = None, end_line: int | None = None) -> ToolResult:
        target = self._resolve(path)
        if target.is_dir():
            entries = sorted(p.name + ("/" if p.is_dir() else "") for p in target.iterdir() if p.name != ".git")
            return ToolResult(f"Directory {path}:\n" + "\n".join(entries))
        text = _read_text(target)
        lines = text.splitlines()
        first = max(1, start_line or 1)
        last = min(len(lines), end_line or len(lines), first + MAX_VIEW_LINES - 1)
        if lines and first > len(lines):
            raise ToolError(f"start_line {first} is past the end of {path} ({len(lines)} lines)")
        if end_line is not None and end_line < first:
            raise ToolError(f"end_line {end_line} is before start_line {first}")
        numbered = [f"{number:6}\t{lines[number - 1]}" for number in range(first, last + 1)]
        footer = ""
        if last < len(lines):
            footer = f"\n[{path} has {len(lines)} lines; showing {first}-{last}. Use start_line/end_line to see more.]"
        return ToolResult("\n".join(numbered) + footer if numbered else f"[{path} is empty]")

    def create_file(self, path: str, content: str) -> ToolResult:
        target = self._resolve(path)
        if ".git" in target.parts:
            raise ToolError("writing inside .git is not allowed")
        existed = target.exists()
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(target, "w", encoding="utf-8", newline="") as handle:
            handle.write(content)
        verb = "Overwrote" if existed else "Created"
        return ToolResult(f"{verb} {path} ({len(content.splitlines())} lines).")

    def str_replace(self, path: str, old_str: str, new_str: str) -> ToolResult:
        target = self._resolve(path)
        if not old_str:
            raise ToolError("old_str is empty; use create_file to write a whole file")
        text = _read_text(target)
        count = text.count(old_str)
        if count == 0:
            raise ToolError(
                f"old_str not found in {path}; view the file and copy the text exactly "
                "(whitespace and indentation matter)"
            )
        if count > 1:
            lines = _occurrence_lines(text, old_str)
            raise ToolError(
                f"old_str occurs {count} times in {path} (starting on lines {lines}); "
                "include more surrounding text to make it unique"
            )
        with open(target, "w", encoding="utf-8", newline="") as handle:
            handle.write(text.replace(old_str, new_str, 1))
        line = text[: text.index(old_str)].count("\n") + 1
        return ToolResult(f"Replaced 1 occurrence in {path} at line {line}.")

    def finish(self, summary: str = "") -> ToolResult:
        return ToolResult(f"Finished. {summary}".strip(), finished=True)

    def _resolve(self, path: str) -> Path:
        if not path.strip():
            raise ToolError("path is empty")
        candidate = Path(path)
        return candidate if candidate.is_absolute() else self.workdir / candidate


def _parse_arguments(spec: ToolSpec, raw_arguments: str) -> dict:
    try:
        arguments = json.loads(raw_arguments or "{}")
    except json.JSONDecodeError as error:
        raise ToolError(
            f"arguments for {spec.name} are not valid JSON ({error}): {truncate_middle(raw_arguments, 200)}"
        ) from None
    if not isinstance(arguments, dict):
        raise ToolError(f"arguments for {spec.name} must be a JSON object")
    unknown = sorted(set(arguments) - set(spec.params))
    if unknown:
        raise ToolError(f"unknown argument(s) for {spec.name}: {', '.join(unknown)}")
    for name, param in spec.params.items():
        value = arguments.get(name)
        if value is None:
            if param.required:
                raise ToolError(f"missing required argument {name!r} for {spec.name}")
            arguments.pop(name, None)
        elif param.type == "integer":
            if isinstance(value, bool) or not isinstance(value, (int, float, str)):
                raise ToolError(f"argument {name!r} must be an integer")
            try:
                arguments[name] = int(value)
            except ValueError:
                raise ToolError(f"argument {name!r} must be an integer") from None
        elif not isinstance(value, str):
            raise ToolError(f"argument {name!r} must be a string")
    return arguments


def _read_text(target: Path) -> str:
    if not target.exists():
        raise ToolError(f"{target} does not exist")
    data = target.read_bytes()
    if b"\0" in data[:8192]:
        raise ToolError(f"{target} looks like a binary file")
    return data.decode("utf-8", errors="replace")


def _occurrence_lines(text: str, needle: str) -> str:
    lines, start = [], 0
    while (index := text.find(needle, start)) != -1:
        lines.append(str(text.count("\n", 0, index) + 1))
        start = index + 1
    return ", ".join(lines[:10])


def _read_capped(output_file, limit: int) -> str:
    """Read at most ~limit characters: the head and the tail of a possibly huge file."""
    size = output_file.seek(0, os.SEEK_END)
    output_file.seek(0)
    if size <= limit:
        return output_file.read().decode("utf-8", errors="replace")
    half = limit // 2
    head = output_file.read(half).decode("utf-8", errors="replace")
    output_file.seek(size - half)
    tail = output_file.read(half).decode("utf-8", errors="replace")
    return f"{head}\n[... {size - 2 * half} bytes truncated ...]\n{tail}"


def _kill_process_group(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait()
