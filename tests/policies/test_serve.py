"""`rollbox serve` over real HTTP on localhost: a fake policy behind the server for the protocol,
and (slow) the real bundled model in a `rollbox serve` subprocess with OpenAIPolicy in front.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Sequence
from typing import Any

import aiohttp
import pytest

from rollbox.agent.types import Completion, Message, ToolCall
from rollbox.errors import ContextLengthError, PolicyError
from rollbox.policies.base import Policy
from rollbox.policies.openai import OpenAIPolicy
from rollbox.serve import PolicyServer, serve


class FakePolicy(Policy):
    """Echoes the last message, one token per word; some contents make it fail on purpose."""

    name = "fake"
    version = "v7"
    context_tokens = 4096

    def __init__(self, delay: float = 0.0) -> None:
        self.delay = delay
        self.calls: list[dict[str, Any]] = []
        self.in_flight = 0
        self.max_in_flight = 0

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[dict[str, Any]] | None = None,
        max_tokens: int = 512,
        temperature: float = 0.7,
        seed: int | None = None,
        stop: Sequence[str] | None = None,
    ) -> Completion:
        self.calls.append(
            {
                "messages": list(messages),
                "tools": tools,
                "max_tokens": max_tokens,
                "temperature": temperature,
                "seed": seed,
                "stop": stop,
            }
        )
        last = messages[-1].content
        if last == "too long":
            raise ContextLengthError("the prompt has 5000 tokens; the context holds 4096")
        if last == "crash":
            raise PolicyError("the model crashed")
        if last == "bug":
            raise RuntimeError("oops")
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            await asyncio.sleep(self.delay)
        finally:
            self.in_flight -= 1
        if last == "call a tool":
            call = ToolCall(name="bash", arguments={"cmd": "ls"}, id="call_1")
            return Completion(text="", tool_calls=(call,), finish_reason="tool_calls")
        words = f"echo {last}".split()[:max_tokens]
        ids = tuple(100 + i for i in range(len(words)))
        return Completion(
            text=" ".join(words),
            token_ids=ids,
            logprobs=tuple(-0.5 * (i + 1) for i in range(len(ids))),
            prompt_tokens=sum(len(m.content.split()) for m in messages),
            completion_tokens=len(ids),
            finish_reason="length" if len(words) == max_tokens else "stop",
            generate_s=0.01,
        )


@contextlib.asynccontextmanager
async def running(policy: Policy) -> AsyncIterator[PolicyServer]:
    async with PolicyServer(policy, port=0, shutdown_timeout_s=5) as server:
        yield server


async def post(url: str, body: Any) -> tuple[int, dict[str, Any]]:
    async with (
        aiohttp.ClientSession() as session,
        session.post(url + "/chat/completions", json=body) as resp,
    ):
        return resp.status, await resp.json()


async def get(url: str) -> tuple[int, dict[str, Any]]:
    async with aiohttp.ClientSession() as session, session.get(url) as resp:
        return resp.status, await resp.json()


def chat(content: str = "hello world", **kw: Any) -> dict[str, Any]:
    return {"model": "fake", "messages": [{"role": "user", "content": content}], **kw}


# -- the protocol, with a fake policy ---------------------------------------------------------


async def test_round_trip_through_openai_policy() -> None:
    fake = FakePolicy()
    conversation = [
        Message(role="system", content="you are terse"),
        Message(role="user", content="list files"),
        Message(
            role="assistant",
            content="",
            tool_calls=(ToolCall(name="bash", arguments={"cmd": "ls"}, id="c1"),),
        ),
        Message(role="tool", content="a.py b.py", tool_call_id="c1", name="bash"),
    ]
    async with running(fake) as server, OpenAIPolicy(server.url, api_key="") as client:
        await client.check()
        c = await client.complete(conversation, max_tokens=8, temperature=0.3, seed=4, stop=["!"])
    assert (client.name, client.version, client.context_tokens) == ("openai:fake", "fake@v7", 4096)
    assert c.text == "echo a.py b.py"
    assert c.token_ids == (100, 101, 102)
    assert c.logprobs == (-0.5, -1.0, -1.5)
    assert (c.prompt_tokens, c.completion_tokens, c.finish_reason) == (7, 3, "stop")
    [call] = fake.calls
    assert call["messages"] == conversation
    assert (call["max_tokens"], call["temperature"], call["seed"]) == (8, 0.3, 4)
    assert list(call["stop"]) == ["!"]


async def test_response_has_the_openai_shape_and_the_token_ids() -> None:
    async with running(FakePolicy()) as server:
        status, body = await post(server.url, chat("one two", logprobs=True, max_tokens=2))
        _, plain = await post(server.url, chat("one two", stop="two"))
    assert status == 200
    assert body["object"] == "chat.completion" and body["id"].startswith("chatcmpl-")
    assert body["model"] == "fake" and isinstance(body["created"], int)
    [choice] = body["choices"]
    assert choice["message"] == {"role": "assistant", "content": "echo one"}
    assert choice["finish_reason"] == "length"
    assert choice["token_ids"] == [100, 101]
    assert [(e["token"], e["logprob"]) for e in choice["logprobs"]["content"]] == [
        ("token_id:100", -0.5),
        ("token_id:101", -1.0),
    ]
    assert body["usage"] == {"prompt_tokens": 2, "completion_tokens": 2, "total_tokens": 4}
    assert body["rollbox"]["version"] == "v7"
    assert plain["choices"][0]["logprobs"] is None  # not asked for


async def test_stop_as_a_string_and_defaults_left_to_the_policy() -> None:
    fake = FakePolicy()
    async with running(fake) as server:
        await post(server.url, chat(stop="END"))
        await post(server.url, chat())
    assert list(fake.calls[0]["stop"]) == ["END"]
    assert fake.calls[1]["stop"] is None
    assert (fake.calls[1]["max_tokens"], fake.calls[1]["temperature"]) == (512, 0.7)


async def test_tool_calls_go_out_as_native_tool_calls() -> None:
    async with (
        running(FakePolicy()) as server,
        OpenAIPolicy(server.url, native_tools=True, api_key="") as client,
    ):
        c = await client.complete([Message(role="user", content="call a tool")])
    assert c.finish_reason == "tool_calls"
    assert [(t.name, t.arguments, t.id) for t in c.tool_calls] == [
        ("bash", {"cmd": "ls"}, "call_1")
    ]


@pytest.mark.parametrize(
    ("body", "param", "words"),
    [
        (chat(n=2), "n", "n > 1"),
        (chat(stream=True), "stream", "stream"),
        (chat(max_tokens="ten"), "max_tokens", "integer"),
        (chat(max_tokens=0), "max_tokens", "greater than or equal to 1"),
        (chat(logprobs="yes"), "logprobs", "boolean"),
        ({"model": "fake"}, "messages", "Field required"),
        ({"messages": []}, "messages", "at least 1"),
        ({"messages": [{"role": "wizard", "content": "hi"}]}, "messages", "role"),
        (
            {
                "messages": [
                    {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [{"function": {"name": "x", "arguments": "{bad"}}],
                    }
                ]
            },
            "messages",
            "not JSON",
        ),
    ],
)
async def test_bad_requests_are_400_in_openai_shape(body: Any, param: str, words: str) -> None:
    fake = FakePolicy()
    async with running(fake) as server:
        status, answer = await post(server.url, body)
    assert status == 400
    assert answer["error"]["type"] == "invalid_request_error"
    assert answer["error"]["param"] == param
    assert words in answer["error"]["message"]
    assert fake.calls == []


async def test_malformed_json_is_400() -> None:
    async with running(FakePolicy()) as server, aiohttp.ClientSession() as session:
        for raw in (b"{not json", b"[1, 2]"):
            async with session.post(server.url + "/chat/completions", data=raw) as resp:
                assert resp.status == 400
                assert (await resp.json())["error"]["type"] == "invalid_request_error"


async def test_policy_errors_map_to_400_and_500() -> None:
    async with running(FakePolicy()) as server:
        s1, too_long = await post(server.url, chat("too long"))
        s2, crash = await post(server.url, chat("crash"))
        s3, bug = await post(server.url, chat("bug"))
    assert s1 == 400 and too_long["error"]["code"] == "context_length_exceeded"
    assert "4096" in too_long["error"]["message"]
    assert s2 == 500 and crash["error"] == {
        "message": "the model crashed",
        "type": "server_error",
        "param": None,
        "code": "policy_error",
    }
    assert s3 == 500 and "RuntimeError: oops" in bug["error"]["message"]


async def test_the_client_sees_the_servers_errors_as_policy_errors() -> None:
    fake = FakePolicy()
    async with (
        running(fake) as server,
        OpenAIPolicy(server.url, api_key="", max_retries=1, backoff_s=0.01) as client,
    ):
        with pytest.raises(ContextLengthError, match="context holds 4096"):
            await client.complete([Message(role="user", content="too long")])
        with pytest.raises(PolicyError, match="HTTP 500: the model crashed"):
            await client.complete([Message(role="user", content="crash")])
    assert len(fake.calls) == 1 + 2  # a context error is not retried; a 500 is


async def test_models_health_and_unknown_routes() -> None:
    async with running(FakePolicy()) as server:
        base = server.url.removesuffix("/v1")
        _, models = await get(server.url + "/models")
        _, health = await get(base + "/health")
        status, missing = await get(base + "/v2/nothing")
    [entry] = models["data"]
    assert entry["id"] == "fake" and entry["max_model_len"] == 4096
    assert entry["rollbox"] == {"policy": "fake", "version": "v7"}
    assert health == {"status": "ok", "model": "fake", "in_flight": 0, "served": 0}
    assert status == 404 and missing["error"]["message"] == "Not Found"


async def test_concurrent_requests_reach_the_policy_concurrently() -> None:
    fake = FakePolicy(delay=0.3)
    async with (
        running(fake) as server,
        OpenAIPolicy(server.url, api_key="", concurrency=8) as client,
    ):
        t0 = time.monotonic()
        done = await asyncio.gather(
            *(client.complete([Message(role="user", content=f"n{i}")]) for i in range(8))
        )
        wall = time.monotonic() - t0
    assert sorted(c.text for c in done) == sorted(f"echo n{i}" for i in range(8))
    assert fake.max_in_flight == 8
    assert wall < 1.5, wall


async def test_close_lets_requests_in_flight_finish() -> None:
    fake = FakePolicy(delay=0.3)
    server = PolicyServer(fake, port=0)
    await server.start()
    pending = asyncio.create_task(post(server.url, chat("late")))
    while not fake.in_flight:
        await asyncio.sleep(0.01)
    await server.close()
    status, body = await pending
    assert status == 200 and body["choices"][0]["message"]["content"] == "echo late"
    await server.close()  # idempotent
    with pytest.raises(aiohttp.ClientConnectionError):
        await post(server.url, chat())


async def test_serve_stops_gracefully_on_sigterm() -> None:
    ready: asyncio.Future[PolicyServer] = asyncio.get_running_loop().create_future()
    task = asyncio.create_task(serve(FakePolicy(), port=0, on_ready=ready.set_result))
    server = await asyncio.wait_for(ready, 5)
    status, _ = await post(server.url, chat())
    assert status == 200
    os.kill(os.getpid(), signal.SIGTERM)
    await asyncio.wait_for(task, 5)
    with pytest.raises(aiohttp.ClientConnectionError):
        await post(server.url, chat())


# -- the command ------------------------------------------------------------------------------


def test_serve_on_a_port_in_use_is_one_line_and_no_traceback() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        res = subprocess.run(
            [sys.executable, "-m", "rollbox.cli", "serve", "--port", str(port)],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert res.returncode == 2
    assert "Traceback" not in res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    assert f"cannot listen on 127.0.0.1:{port}" in lines[0] and "in use" in lines[0]


@pytest.mark.slow
async def test_acceptance_rollbox_serve_with_the_bundled_model() -> None:
    """`rollbox serve --port 0` as a real process, the bundled model, OpenAIPolicy in front."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "rollbox.cli",
        "serve",
        "--port",
        "0",
        "--max-batch",
        "4",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    try:
        line = (await asyncio.wait_for(proc.stdout.readline(), 120)).decode()
        found = re.search(r"--policy openai:(http://\S+/v1)", line)
        assert found, line + (await proc.stderr.read()).decode()
        url = found.group(1)
        async with OpenAIPolicy(url, api_key="", timeout_s=60, max_retries=0) as policy:
            await policy.check()
            assert policy.name.startswith("openai:")
            ask = [Message(role="user", content="What is the capital of France?")]
            c = await policy.complete(ask, max_tokens=8, temperature=0.0, seed=0)
            assert c.text.strip()
            assert c.token_ids and c.logprobs and len(c.token_ids) == len(c.logprobs)
            assert 0 < c.completion_tokens <= 8 and c.prompt_tokens > 0
            assert all(lp <= 0 for lp in c.logprobs)
            many = await asyncio.gather(
                *(
                    policy.complete(
                        [Message(role="user", content=f"Count to {n}.")], max_tokens=4, seed=n
                    )
                    for n in range(4)
                )
            )
            assert all(m.token_ids and 0 < m.completion_tokens <= 4 for m in many)
        proc.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(proc.wait(), 30) == 0
        assert "Traceback" not in (await proc.stderr.read()).decode()
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
