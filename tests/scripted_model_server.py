"""A scripted OpenAI-compatible Chat Completions server that plays the model in tests.

Each request to POST /v1/chat/completions consumes the next scripted step, in order, whatever
the request says. A step is one of:

- `ToolCalls([call("view_file", path="x.py"), ...])`: an assistant message with tool calls
- `Message("text")`: a plain assistant message without tool calls
- `HttpError(500)`: an error status with an OpenAI-style error body (429, 500, 503, ...)
- `Delay(seconds, then=step)`: wait, then answer with `then` (to trip client timeouts)
- `malformed_tool_call()` / `RawToolCall(name, arguments_text)`: arguments that are not valid JSON

When the script runs out the server answers HTTP 400 "script exhausted" (not retryable), so a
test with a too-short script fails fast and visibly. Every request body is recorded in
`requests`; `usage_served` sums the usage of the answers actually sent.

    with ScriptedModelServer(solve_script("two_fer.py", SOLUTION, "python3 check.py")) as server:
        run_agent(env={"OPENAI_BASE_URL": server.base_url, ...})
        assert "[exit code 0]" in server.tool_results()[2]

For an agent in a Docker container on the host network, pass `host="0.0.0.0"`; `base_url`
still names 127.0.0.1, which the container reaches through the host network.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Union


@dataclass(frozen=True)
class RawToolCall:
    """A tool call whose arguments text is sent verbatim (e.g. invalid JSON)."""

    name: str
    arguments: str
    id: str | None = None


def call(name: str, **arguments: Any) -> RawToolCall:
    """A well-formed tool call."""
    return RawToolCall(name, json.dumps(arguments))


@dataclass(frozen=True)
class ToolCalls:
    calls: list[RawToolCall]
    content: str | None = None
    prompt_tokens: int = 100
    completion_tokens: int = 20


@dataclass(frozen=True)
class Message:
    content: str
    prompt_tokens: int = 100
    completion_tokens: int = 20


@dataclass(frozen=True)
class HttpError:
    status: int
    message: str = "scripted error"
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Delay:
    seconds: float
    then: "Step"


Step = Union[ToolCalls, Message, HttpError, Delay]


def malformed_tool_call(name: str = "create_file") -> ToolCalls:
    return ToolCalls([RawToolCall(name, '{"path": "oops.py", "content": "unterminated')])


def solve_script(solution_path: str, solution_text: str, check_command: str) -> list[Step]:
    """The four steps of a model that solves an exercise: view, write, check, finish."""
    return [
        ToolCalls([call("view_file", path=solution_path)], content="Let me look at the stub."),
        ToolCalls([call("create_file", path=solution_path, content=solution_text)]),
        ToolCalls([call("shell", command=check_command)]),
        ToolCalls([call("finish", summary=f"Implemented {solution_path}.")]),
    ]


@dataclass
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class ScriptedModelServer:
    def __init__(self, script: list[Step], host: str = "127.0.0.1", port: int = 0) -> None:
        self.script = list(script)
        self.requests: list[dict] = []
        self.usage_served = Usage()
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._httpd = ThreadingHTTPServer((host, port), _handler_for(self))
        self._httpd.daemon_threads = True  # a delayed answer must not hold up shutdown
        self._httpd.block_on_close = False
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def exhausted(self) -> bool:
        return not self.script

    def __enter__(self) -> "ScriptedModelServer":
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def tool_results(self, request_index: int = -1) -> list[str]:
        """Contents of the tool messages the agent had sent by the given request, in order."""
        if not self.requests:
            return []
        messages = self.requests[request_index].get("messages", [])
        return [str(message.get("content")) for message in messages if message.get("role") == "tool"]

    def _next_step(self, request: dict) -> Step | None:
        with self._lock:
            self.requests.append(request)
            return self.script.pop(0) if self.script else None

    def _answer(self, step: Step | None, request: dict) -> tuple[int, dict, dict[str, str]]:
        while isinstance(step, Delay):
            time.sleep(step.seconds)
            step = step.then
        if step is None:
            return 400, _error_body("scripted model server: script exhausted", "invalid_request_error"), {}
        if isinstance(step, HttpError):
            return step.status, _error_body(step.message, "server_error"), step.headers
        if isinstance(step, Message):
            message = {"role": "assistant", "content": step.content}
            finish_reason = "stop"
        else:
            message = {
                "role": "assistant",
                "content": step.content,
                "tool_calls": [
                    {
                        "id": tool_call.id or f"call_{next(self._ids)}",
                        "type": "function",
                        "function": {"name": tool_call.name, "arguments": tool_call.arguments},
                    }
                    for tool_call in step.calls
                ],
            }
            finish_reason = "tool_calls"
        with self._lock:
            self.usage_served.prompt_tokens += step.prompt_tokens
            self.usage_served.completion_tokens += step.completion_tokens
            self.usage_served.calls += 1
        body = {
            "id": f"chatcmpl-scripted-{next(self._ids)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request.get("model", "scripted"),
            "choices": [{"index": 0, "message": message, "finish_reason": finish_reason, "logprobs": None}],
            "usage": {
                "prompt_tokens": step.prompt_tokens,
                "completion_tokens": step.completion_tokens,
                "total_tokens": step.prompt_tokens + step.completion_tokens,
            },
        }
        return 200, body, {}


def _error_body(message: str, error_type: str) -> dict:
    return {"error": {"message": message, "type": error_type, "param": None, "code": None}}


def _handler_for(server: ScriptedModelServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
            if self.path.rstrip("/") == "/v1/models":  # some clients probe this first
                self._send(200, {"object": "list", "data": [{"id": "scripted", "object": "model"}]}, {})
            else:
                self._send(404, _error_body(f"no route {self.path}", "invalid_request_error"), {})

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("Content-Length") or 0)
            try:
                request = json.loads(self.rfile.read(length) or b"{}")
            except json.JSONDecodeError:
                self._send(400, _error_body("request body is not JSON", "invalid_request_error"), {})
                return
            if self.path.rstrip("/") != "/v1/chat/completions":
                self._send(404, _error_body(f"no route {self.path}", "invalid_request_error"), {})
                return
            if request.get("stream"):
                self._send(400, _error_body("streaming is not scripted", "invalid_request_error"), {})
                return
            status, body, headers = server._answer(server._next_step(request), request)
            self._send(status, body, headers)

        def _send(self, status: int, body: dict, headers: dict[str, str]) -> None:
            payload = json.dumps(body).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (timeout) before a delayed answer came

        def log_message(self, format: str, *args: object) -> None:
            pass  # keep test output quiet

    return Handler
