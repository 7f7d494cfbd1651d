"""OpenAIPolicy over real HTTP on localhost, against tiny aiohttp servers that misbehave on cue."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import web

from rollbox.agent.types import Message
from rollbox.errors import ConfigError, ContextLengthError, PolicyError
from rollbox.policies.openai import OpenAIPolicy

Reply = tuple[int, Any, dict[str, str]]  # status, JSON body (or text), headers

USER = [Message(role="user", content="hello")]


def answer(
    text: str = "hi there",
    *,
    tool_calls: list[dict[str, Any]] | None = None,
    finish_reason: str = "stop",
    logprobs: list[dict[str, Any]] | None = None,
    token_ids: list[int] | None = None,
    usage: dict[str, int] | None = None,
) -> Reply:
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if tool_calls is not None:
        message["tool_calls"] = tool_calls
    choice: dict[str, Any] = {
        "index": 0,
        "message": message,
        "finish_reason": finish_reason,
        "logprobs": {"content": logprobs} if logprobs is not None else None,
    }
    if token_ids is not None:
        choice["token_ids"] = token_ids
    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "m1",
        "choices": [choice],
        "usage": usage
        if usage is not None
        else {"prompt_tokens": 7, "completion_tokens": 2, "total_tokens": 9},
    }
    return (200, body, {})


def error(status: int, message: str, headers: dict[str, str] | None = None) -> Reply:
    return (status, {"error": {"message": message, "type": "x", "code": None}}, headers or {})


class Endpoint:
    """An OpenAI-ish server: replies in order (the last one repeats), recording every request."""

    def __init__(
        self,
        *replies: Reply,
        delay: float = 0.0,
        models: Any = None,
        models_status: int = 200,
    ) -> None:
        self.replies = list(replies) or [answer()]
        self.delay = delay
        self.models = models if models is not None else {"object": "list", "data": [{"id": "m1"}]}
        self.models_status = models_status
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.times: list[float] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.url = ""

    async def chat(self, request: web.Request) -> web.StreamResponse:
        self.requests.append(await request.json())
        self.headers.append(dict(request.headers))
        self.times.append(time.monotonic())
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            await asyncio.sleep(self.delay)
        finally:
            self.in_flight -= 1
        status, body, headers = self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]
        if isinstance(body, str):
            return web.Response(text=body, status=status, headers=headers)
        return web.json_response(body, status=status, headers=headers)

    async def list_models(self, request: web.Request) -> web.StreamResponse:
        self.headers.append(dict(request.headers))
        if isinstance(self.models, str):
            return web.Response(text=self.models, status=self.models_status)
        return web.json_response(self.models, status=self.models_status)


@contextlib.asynccontextmanager
async def serving(endpoint: Endpoint) -> AsyncIterator[str]:
    app = web.Application()
    app.router.add_post("/v1/chat/completions", endpoint.chat)
    app.router.add_get("/v1/models", endpoint.list_models)
    runner = web.AppRunner(app, shutdown_timeout=0.2)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    endpoint.url = f"http://127.0.0.1:{port}/v1"
    try:
        yield endpoint.url
    finally:
        await runner.cleanup()


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def fast(url: str, **kw: Any) -> OpenAIPolicy:
    kw.setdefault("backoff_s", 0.01)
    kw.setdefault("api_key", "")
    return OpenAIPolicy(url, **kw)


# -- reaching the endpoint --------------------------------------------------------------------


async def test_unreachable_endpoint_is_one_clear_line_quickly() -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    policy = fast(url, max_retries=2)
    t0 = time.monotonic()
    with pytest.raises(PolicyError) as e:
        await policy.check()
    assert str(e.value) == f"cannot reach {url}: connection refused"
    with pytest.raises(PolicyError) as e:
        await policy.complete(USER)
    assert str(e.value) == f"cannot reach {url}: connection refused (3 attempts)"
    assert time.monotonic() - t0 < 2
    await policy.close()


async def test_unreachable_with_a_model_given_fails_in_complete_too() -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    async with fast(url, model="m1", max_retries=1) as policy:
        with pytest.raises(PolicyError, match="connection refused"):
            await policy.complete(USER)


@pytest.mark.parametrize(
    ("models", "status", "expected"),
    [
        ("<html>hello</html>", 200, "not an OpenAI-compatible endpoint"),
        ({"models": []}, 200, "no 'data' list"),
        ("not found", 404, "does the URL need /v1"),
        ({"object": "list", "data": []}, 200, "serves no models"),
    ],
)
async def test_check_says_when_the_endpoint_is_not_openai_compatible(
    models: Any, status: int, expected: str
) -> None:
    endpoint = Endpoint(models=models, models_status=status)
    async with serving(endpoint) as url, fast(url) as policy:
        with pytest.raises(PolicyError, match=expected) as e:
            await policy.check()
        assert "\n" not in str(e.value)


async def test_model_is_resolved_from_the_listing_with_its_version() -> None:
    models = {
        "data": [
            {"id": "qwen", "root": "/weights/qwen-step-40", "max_model_len": 8192},
            {"id": "other"},
        ]
    }
    endpoint = Endpoint(models=models)
    async with serving(endpoint) as url, fast(url) as policy:
        await policy.complete(USER)
        assert policy.model == "qwen"
        assert endpoint.requests[0]["model"] == "qwen"
        assert policy.name == "openai:qwen"
        assert policy.version == "qwen@/weights/qwen-step-40"
        assert policy.context_tokens == 8192


async def test_check_rejects_a_model_the_endpoint_does_not_serve() -> None:
    async with serving(Endpoint()) as url, fast(url, model="gpt-9") as policy:
        with pytest.raises(PolicyError, match=r"does not serve model 'gpt-9' \(it has m1\)"):
            await policy.check()


async def test_api_key_from_argument_or_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    endpoint = Endpoint()
    async with serving(endpoint) as url:
        async with OpenAIPolicy(url, api_key="sk-given") as policy:
            await policy.complete(USER)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
        async with OpenAIPolicy(url) as policy:
            await policy.complete(USER)
        monkeypatch.delenv("OPENAI_API_KEY")
        async with OpenAIPolicy(url) as policy:
            await policy.complete(USER)
    auth = [h.get("Authorization") for h in endpoint.headers]
    assert auth == ["Bearer sk-given"] * 2 + ["Bearer sk-env"] * 2 + [None] * 2


def test_bad_options_are_config_errors() -> None:
    with pytest.raises(ConfigError, match="not an http"):
        OpenAIPolicy("localhost:8000/v1")
    with pytest.raises(ConfigError, match="concurrency"):
        OpenAIPolicy("http://x/v1", concurrency=0)


# -- retries and errors -----------------------------------------------------------------------


async def test_retries_5xx_then_succeeds() -> None:
    endpoint = Endpoint(error(503, "warming up"), error(502, "bad gateway"), answer("ok"))
    async with serving(endpoint) as url, fast(url, model="m1", max_retries=4) as policy:
        c = await policy.complete(USER)
    assert c.text == "ok"
    assert len(endpoint.requests) == 3


async def test_gives_up_after_max_retries_with_the_servers_message() -> None:
    endpoint = Endpoint(error(503, "model is overloaded"))
    async with serving(endpoint) as url, fast(url, model="m1", max_retries=2) as policy:
        with pytest.raises(PolicyError) as e:
            await policy.complete(USER)
    assert len(endpoint.requests) == 3
    assert "HTTP 503: model is overloaded (3 attempts)" in str(e.value)


async def test_retry_after_is_honoured_on_429() -> None:
    endpoint = Endpoint(error(429, "slow down", {"Retry-After": "1"}), answer("ok"))
    async with serving(endpoint) as url, fast(url, model="m1", backoff_s=0.001) as policy:
        c = await policy.complete(USER)
    assert c.text == "ok"
    gap = endpoint.times[1] - endpoint.times[0]
    assert 0.95 <= gap < 3, gap


async def test_backoff_grows_between_attempts() -> None:
    endpoint = Endpoint(error(500, "a"), error(500, "b"), error(500, "c"), answer())
    async with serving(endpoint) as url, fast(url, model="m1", backoff_s=0.1) as policy:
        await policy.complete(USER)
    gaps = [b - a for a, b in zip(endpoint.times, endpoint.times[1:], strict=False)]
    # attempt k waits backoff * 2**k * U(0.5, 1): [0.05, 0.1], [0.1, 0.2], [0.2, 0.4]
    assert 0.04 <= gaps[0] <= 0.3 and 0.09 <= gaps[1] <= 0.4 and 0.19 <= gaps[2] <= 0.6, gaps


async def test_other_4xx_fail_at_once_with_the_servers_message() -> None:
    endpoint = Endpoint(error(400, "'stop' must be a list of at most 4 strings"))
    async with serving(endpoint) as url, fast(url, model="m1") as policy:
        with pytest.raises(PolicyError) as e:
            await policy.complete(USER)
    assert not isinstance(e.value, ContextLengthError)
    assert "HTTP 400: 'stop' must be a list of at most 4 strings" in str(e.value)
    assert len(endpoint.requests) == 1


@pytest.mark.parametrize(
    "message",
    [
        "This model's maximum context length is 2048 tokens. However, you requested 3000 tokens",
        "The input (5000 tokens) is longer than the model's context length (4096 tokens).",
    ],
)
async def test_context_length_400_is_a_context_length_error(message: str) -> None:
    endpoint = Endpoint(error(400, message))
    async with serving(endpoint) as url, fast(url, model="m1") as policy:
        with pytest.raises(ContextLengthError, match="context length"):
            await policy.complete(USER)
    assert len(endpoint.requests) == 1


async def test_unauthorised_is_not_retried() -> None:
    endpoint = Endpoint(error(401, "Incorrect API key provided"))
    async with serving(endpoint) as url, fast(url, model="m1") as policy:
        with pytest.raises(PolicyError, match=r"refused the API key \(HTTP 401\)"):
            await policy.complete(USER)
    assert len(endpoint.requests) == 1


async def test_timeout_is_a_policy_error_after_retries() -> None:
    endpoint = Endpoint(delay=5)
    async with (
        serving(endpoint) as url,
        fast(url, model="m1", timeout_s=0.2, max_retries=1) as policy,
    ):
        t0 = time.monotonic()
        with pytest.raises(PolicyError, match=r"no answer within 0\.2 s \(2 attempts\)"):
            await policy.complete(USER)
        assert time.monotonic() - t0 < 2
    assert len(endpoint.requests) == 2


async def test_concurrency_limit_holds() -> None:
    endpoint = Endpoint(delay=0.1)
    async with serving(endpoint) as url, fast(url, model="m1", concurrency=3) as policy:
        done = await asyncio.gather(*(policy.complete(USER) for _ in range(10)))
    assert len(done) == 10 and len(endpoint.requests) == 10
    assert endpoint.max_in_flight == 3


# -- what is sent and what is parsed ----------------------------------------------------------


async def test_request_carries_the_options() -> None:
    endpoint = Endpoint()
    tools = [{"type": "function", "function": {"name": "bash", "parameters": {}}}]
    messages = [
        Message(role="system", content="be brief"),
        Message(role="user", content="list files"),
    ]
    async with serving(endpoint) as url:
        async with fast(url, model="m1", extra_body={"return_token_ids": True}) as policy:
            await policy.complete(
                messages, tools=tools, max_tokens=64, temperature=0.2, seed=5, stop=["</x>"]
            )
        async with fast(url, model="m1", native_tools=True, logprobs=False) as policy:
            await policy.complete(messages, tools=tools)
    first, second = endpoint.requests
    assert first == {
        "model": "m1",
        "messages": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "list files"},
        ],
        "max_tokens": 64,
        "temperature": 0.2,
        "seed": 5,
        "stop": ["</x>"],
        "logprobs": True,
        "return_token_ids": True,
    }
    assert second["tools"] == tools and "logprobs" not in second and "seed" not in second


async def test_logprobs_token_ids_usage_and_finish_reason_are_parsed() -> None:
    lps = [{"token": "token_id:11", "logprob": -0.5}, {"token": "token_id:12", "logprob": -1.5}]
    endpoint = Endpoint(
        answer("ab", logprobs=lps, finish_reason="length"),
        answer("ab", logprobs=lps, token_ids=[21, 22]),
        answer("ab", logprobs=[{"token": "a", "logprob": -0.25}], usage={}),
    )
    async with serving(endpoint) as url, fast(url, model="m1") as policy:
        from_tokens = await policy.complete(USER)
        from_field = await policy.complete(USER)
        no_ids = await policy.complete(USER)
    assert from_tokens.token_ids == (11, 12) and from_tokens.logprobs == (-0.5, -1.5)
    assert from_tokens.finish_reason == "length"
    assert (from_tokens.prompt_tokens, from_tokens.completion_tokens) == (7, 2)
    assert from_tokens.generate_s > 0
    assert from_field.token_ids == (21, 22) and from_field.finish_reason == "stop"
    assert no_ids.token_ids is None and no_ids.logprobs == (-0.25,)
    assert (no_ids.prompt_tokens, no_ids.completion_tokens) == (0, 1)


async def test_native_tool_calls_are_parsed() -> None:
    call = {
        "id": "call_7",
        "type": "function",
        "function": {"name": "bash", "arguments": json.dumps({"cmd": "ls -la"})},
    }
    no_args = {"id": "call_8", "type": "function", "function": {"name": "submit", "arguments": ""}}
    endpoint = Endpoint(answer("", tool_calls=[call, no_args], finish_reason="tool_calls"))
    async with serving(endpoint) as url, fast(url, model="m1", native_tools=True) as policy:
        c = await policy.complete(USER)
    assert c.finish_reason == "tool_calls" and c.text == ""
    assert [(t.name, t.arguments, t.id) for t in c.tool_calls] == [
        ("bash", {"cmd": "ls -la"}, "call_7"),
        ("submit", {}, "call_8"),
    ]


async def test_bad_tool_call_arguments_leave_no_tool_call_and_keep_the_text() -> None:
    bad = {"id": "c", "type": "function", "function": {"name": "bash", "arguments": "{cmd: ls"}}
    endpoint = Endpoint(answer("let me look", tool_calls=[bad], finish_reason="tool_calls"))
    async with serving(endpoint) as url, fast(url, model="m1", native_tools=True) as policy:
        c = await policy.complete(USER)
    assert c.tool_calls == () and c.text == "let me look" and c.finish_reason == "stop"


async def test_a_200_that_is_not_a_completion_is_a_policy_error() -> None:
    endpoint = Endpoint((200, "<html>proxy login</html>", {}), (200, {"choices": []}, {}))
    async with serving(endpoint) as url, fast(url, model="m1") as policy:
        with pytest.raises(PolicyError, match="not an OpenAI-compatible endpoint"):
            await policy.complete(USER)
        with pytest.raises(PolicyError, match="without choices"):
            await policy.complete(USER)
