"""A Policy behind any OpenAI-compatible chat-completions endpoint (vLLM, SGLang, a provider,
or `rollbox serve`).

    OpenAIPolicy(base_url) ──POST {base_url}/chat/completions──► server ──► Completion

What crosses the wire:

- the request: messages (`Message.to_openai()`), `max_tokens`, `temperature`, `seed`, `stop`,
  `logprobs` (unless turned off), `tools` only when `native_tools=True`, plus `extra_body`
  (e.g. vLLM's `{"return_token_ids": True}`);
- the answer: the text; native tool calls (arguments decoded from JSON; when any call's
  arguments are not a JSON object, no tool call is returned at all and the text is kept as the
  model wrote it, so the agent reports a parse error instead of running half a call); the
  finish reason; token counts; per-token log-probabilities (`logprobs.content[].logprob`);
  generated token ids where the server gives them (`choices[0].token_ids`, which both vLLM's
  `return_token_ids` and `rollbox serve` fill, or vLLM's `token_id:<n>` token strings).

Failures: connection errors, time-outs, 408, 429 (its `Retry-After` honoured) and 5xx are retried
with exponential back-off and jitter; any other 4xx is the caller's fault and raised at once as
a PolicyError carrying the server's message (ContextLengthError when the prompt does not fit).
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import re
import socket
import time
from collections.abc import Mapping, Sequence
from email.utils import parsedate_to_datetime
from typing import Any

import aiohttp

from rollbox.agent.types import Completion, FinishReason, Message, ToolCall
from rollbox.errors import ConfigError, ContextLengthError, PolicyError
from rollbox.policies.base import Policy

MAX_RETRY_AFTER_S = 60.0  # the longest a Retry-After header makes us wait
MAX_BACKOFF_S = 30.0

_CONTEXT_RE = re.compile(
    r"context[ _-]?length|context window|maximum model length|max_model_len"
    r"|prompt is too long|too many tokens|longer than the model",
    re.IGNORECASE,
)
_TOKEN_ID_RE = re.compile(r"token_id:(\d+)")
_FINISH: dict[str, FinishReason] = {
    "stop": "stop",
    "eos": "stop",
    "length": "length",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "error": "error",
    "abort": "error",
    "content_filter": "error",
}


class OpenAIPolicy(Policy):
    """A model behind an OpenAI-compatible endpoint.

    `base_url` ends where the API's paths begin (usually in `/v1`). `model=None` takes the first
    model the endpoint lists. `api_key=None` reads `$OPENAI_API_KEY` (none when unset).
    `concurrency` bounds the requests in flight from this object (retries and their waits
    included). The aiohttp session is made on first use, in the running event loop.
    """

    def __init__(
        self,
        base_url: str,
        *,
        model: str | None = None,
        api_key: str | None = None,
        timeout_s: float = 120.0,
        max_retries: int = 4,
        backoff_s: float = 0.5,
        concurrency: int = 8,
        native_tools: bool = False,
        logprobs: bool = True,
        extra_body: Mapping[str, Any] | None = None,
    ) -> None:
        if not re.match(r"^https?://[^/\s]+", base_url):
            raise ConfigError(f"not an http(s) URL: {base_url!r} (e.g. http://127.0.0.1:8000/v1)")
        if timeout_s <= 0 or max_retries < 0 or backoff_s < 0 or concurrency < 1:
            raise ConfigError(
                "OpenAIPolicy needs timeout_s > 0, max_retries >= 0, backoff_s >= 0 and "
                "concurrency >= 1"
            )
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.concurrency = concurrency
        self.native_tools = native_tools
        self.logprobs = logprobs
        self.extra_body = dict(extra_body or {})
        self.name = f"openai:{model}" if model else f"openai:{self.base_url}"
        self.version = model or "unknown"
        self._resolved = model is not None  # the model id is known (given, or listed)
        self._session: aiohttp.ClientSession | None = None
        self._sem: asyncio.Semaphore | None = None
        self._model_lock: asyncio.Lock | None = None

    # -- lifecycle --------------------------------------------------------------------------

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
            self._session = aiohttp.ClientSession(
                headers=headers,
                timeout=aiohttp.ClientTimeout(total=self.timeout_s),
                connector=aiohttp.TCPConnector(limit=0),
            )
            self._sem = asyncio.Semaphore(self.concurrency)
            self._model_lock = asyncio.Lock()
        return self._session

    async def close(self) -> None:
        """Close the HTTP session (idempotent)."""
        session, self._session = self._session, None
        if session is not None and not session.closed:
            await asyncio.shield(session.close())

    async def check(self) -> None:
        """Ping `GET /models` once; resolve the model (and this policy's name and version).

        Raises PolicyError with one line saying what is wrong: unreachable, not
        OpenAI-compatible, the key rejected, or the model not served there.
        """
        models = await self._models(retry=False)
        self._adopt(models)

    async def _ensure_model(self) -> str:
        if not self._resolved:
            self._client()
            assert self._model_lock is not None
            async with self._model_lock:
                if not self._resolved:
                    self._adopt(await self._models(retry=True))
        assert self.model is not None
        return self.model

    def _adopt(self, models: list[dict[str, Any]]) -> None:
        ids = [m.get("id") for m in models]
        if self.model is None:
            if not models or not isinstance(ids[0], str):
                raise PolicyError(f"{self.base_url} serves no models (GET /models is empty)")
            self.model = ids[0]
        entry = next((m for m in models if m.get("id") == self.model), None)
        if entry is None and models:
            shown = ", ".join(str(i) for i in ids[:5])
            raise PolicyError(
                f"{self.base_url} does not serve model {self.model!r} (it has {shown})"
            )
        self.name = f"openai:{self.model}"
        self.version = _version(self.model, entry or {})
        if entry is not None and isinstance(entry.get("max_model_len"), int):
            self.context_tokens = entry["max_model_len"]
        self._resolved = True

    async def _models(self, *, retry: bool) -> list[dict[str, Any]]:
        data = await self._request("GET", "/models", None, retry=retry)
        models = data.get("data")
        if not isinstance(models, list) or not all(isinstance(m, dict) for m in models):
            raise PolicyError(
                f"{self.base_url} is not an OpenAI-compatible endpoint: "
                "GET /models has no 'data' list"
            )
        return models

    # -- completions ------------------------------------------------------------------------

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
        """One chat completion; see the module docstring for what is sent and parsed."""
        model = await self._ensure_model()
        body: dict[str, Any] = {
            "model": model,
            "messages": [m.to_openai() for m in messages],
            "max_tokens": max_tokens,
            "temperature": temperature,
        }
        if seed is not None:
            body["seed"] = seed
        if stop:
            body["stop"] = list(stop)
        if tools and self.native_tools:
            body["tools"] = list(tools)
        if self.logprobs:
            body["logprobs"] = True
        body.update(self.extra_body)
        t0 = time.perf_counter()
        data = await self._request("POST", "/chat/completions", body, retry=True)
        completion = self._parse(data, time.perf_counter() - t0)
        ext = data.get("rollbox")
        if isinstance(ext, dict) and isinstance(ext.get("version"), str):
            self.version = f"{model}@{ext['version']}"
        return completion

    def _parse(self, data: dict[str, Any], generate_s: float) -> Completion:
        choices = data.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise PolicyError(f"{self.base_url} answered without choices: {_clip(data)}")
        choice: dict[str, Any] = choices[0]
        message = choice.get("message")
        if not isinstance(message, dict):
            raise PolicyError(f"{self.base_url} answered without a message: {_clip(choice)}")
        text = message.get("content") or ""
        if not isinstance(text, str):
            text = _join_parts(text)
        calls = _tool_calls(message.get("tool_calls"))
        finish = _FINISH.get(str(choice.get("finish_reason")), "stop")
        if finish == "tool_calls" and not calls:
            finish = "stop"
        logprobs, token_ids = _logprobs_and_ids(choice)
        usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
        assert isinstance(usage, dict)
        generated = token_ids if token_ids is not None else logprobs
        return Completion(
            text=text,
            tool_calls=calls,
            token_ids=token_ids,
            logprobs=logprobs,
            prompt_tokens=_int(usage.get("prompt_tokens")),
            completion_tokens=_int(usage.get("completion_tokens"))
            or (len(generated) if generated else 0),
            finish_reason=finish,
            generate_s=generate_s,
        )

    # -- HTTP -------------------------------------------------------------------------------

    async def _request(
        self, method: str, path: str, body: dict[str, Any] | None, *, retry: bool
    ) -> dict[str, Any]:
        session = self._client()
        assert self._sem is not None
        url = self.base_url + path
        attempts = self.max_retries + 1 if retry else 1
        failure = ""  # the last attempt's failure, as the error will say it
        async with self._sem:
            for attempt in range(attempts):
                wait: float | None = None
                try:
                    async with session.request(method, url, json=body) as resp:
                        raw = await resp.read()
                        if resp.status == 200:
                            return self._decode(raw, method, path)
                        message, code = _error_message(raw)
                        if resp.status not in (408, 429) and resp.status < 500:
                            raise self._refused(resp.status, message, code, method, path)
                        failure = f"{method} {url} failed: HTTP {resp.status}: {message}"
                        wait = _retry_after(resp.headers)
                except TimeoutError:
                    failure = f"{method} {url}: no answer within {self.timeout_s:g} s"
                except aiohttp.InvalidURL as e:
                    raise PolicyError(f"bad URL {url!r}: {e}") from None
                except (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError) as e:
                    failure = f"cannot reach {self.base_url}: {_describe(e)}"
                if attempt + 1 < attempts:
                    await asyncio.sleep(wait if wait is not None else self._backoff(attempt))
        raise PolicyError(failure + (f" ({attempts} attempts)" if attempts > 1 else ""))

    def _backoff(self, attempt: int) -> float:
        return min(MAX_BACKOFF_S, self.backoff_s * 2.0**attempt) * random.uniform(0.5, 1.0)

    def _decode(self, raw: bytes, method: str, path: str) -> dict[str, Any]:
        try:
            data = json.loads(raw)
        except ValueError:
            data = None
        if not isinstance(data, dict):
            raise PolicyError(
                f"{self.base_url} is not an OpenAI-compatible endpoint: {method} {path} "
                f"answered {_clip(raw.decode(errors='replace'))}"
            )
        return data

    def _refused(self, status: int, message: str, code: str, method: str, path: str) -> PolicyError:
        if status in (400, 413, 422) and (
            code == "context_length_exceeded" or _CONTEXT_RE.search(message)
        ):
            return ContextLengthError(f"{self.base_url}: {message}")
        if status in (401, 403):
            return PolicyError(f"{self.base_url} refused the API key (HTTP {status}): {message}")
        if status in (404, 405) and path == "/models":
            return PolicyError(
                f"{self.base_url} is not an OpenAI-compatible endpoint: GET /models gave "
                f"HTTP {status} (does the URL need /v1?)"
            )
        return PolicyError(f"{method} {self.base_url}{path} failed: HTTP {status}: {message}")


# -- parsing helpers ------------------------------------------------------------------------


def _version(model: str, entry: Mapping[str, Any]) -> str:
    """The model id, plus what the server says about the weights behind it."""
    ext = entry.get("rollbox")
    if isinstance(ext, dict) and isinstance(ext.get("version"), str):
        return f"{model}@{ext['version']}"
    root = entry.get("root")
    if isinstance(root, str) and root and root != model:
        return f"{model}@{root}"
    return model


def _tool_calls(raw: Any) -> tuple[ToolCall, ...]:
    """Native tool calls; none at all if any call is malformed (see the module docstring)."""
    if not isinstance(raw, list):
        return ()
    calls: list[ToolCall] = []
    for c in raw:
        fn = c.get("function") if isinstance(c, dict) else None
        if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
            return ()
        args = fn.get("arguments")
        if isinstance(args, str):
            try:
                args = json.loads(args) if args.strip() else {}
            except ValueError:
                return ()
        if args is None:
            args = {}
        if not isinstance(args, dict):
            return ()
        calls.append(ToolCall(name=fn["name"], arguments=args, id=str(c.get("id") or "")))
    return tuple(calls)


def _logprobs_and_ids(
    choice: Mapping[str, Any],
) -> tuple[tuple[float, ...] | None, tuple[int, ...] | None]:
    content = choice.get("logprobs", {}) or {}
    entries = content.get("content") if isinstance(content, dict) else None
    logprobs: tuple[float, ...] | None = None
    from_tokens: tuple[int, ...] | None = None
    if isinstance(entries, list) and entries and all(isinstance(e, dict) for e in entries):
        try:
            logprobs = tuple(float(e["logprob"]) for e in entries)
        except (KeyError, TypeError, ValueError):
            logprobs = None
        matches = [_TOKEN_ID_RE.fullmatch(str(e.get("token", ""))) for e in entries]
        if all(matches):
            from_tokens = tuple(int(m.group(1)) for m in matches if m)
    ids = choice.get("token_ids")
    if isinstance(ids, list) and all(isinstance(i, int) and not isinstance(i, bool) for i in ids):
        return logprobs, tuple(ids)
    return logprobs, from_tokens


def _join_parts(parts: Any) -> str:
    if not isinstance(parts, list):
        return ""
    return "".join(p.get("text", "") for p in parts if isinstance(p, dict))


def _error_message(raw: bytes) -> tuple[str, str]:
    """The server's own words and error code: OpenAI's {"error": {"message", "code"}}, or
    FastAPI's {"detail"}, or the text itself.
    """
    text = raw.decode(errors="replace")
    try:
        data = json.loads(text)
    except ValueError:
        return _clip(text) or "(empty body)", ""
    if isinstance(data, dict):
        err = data.get("error")
        if isinstance(err, dict) and err.get("message"):
            return _clip(str(err["message"])), str(err.get("code") or "")
        for key in ("error", "detail", "message"):
            if isinstance(data.get(key), str) and data[key]:
                return _clip(data[key]), ""
    return _clip(text), ""


def _retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds to wait from `retry-after-ms` or `Retry-After` (seconds or an HTTP date)."""
    ms = headers.get("retry-after-ms")
    value = headers.get("Retry-After")
    try:
        if ms is not None:
            return max(0.0, min(MAX_RETRY_AFTER_S, float(ms) / 1000))
        if value is not None:
            return max(0.0, min(MAX_RETRY_AFTER_S, float(value)))
    except ValueError:
        pass
    if value:
        try:
            when = parsedate_to_datetime(value).timestamp()
        except (TypeError, ValueError):
            return None
        return max(0.0, min(MAX_RETRY_AFTER_S, when - time.time()))
    return None


def _describe(e: BaseException) -> str:
    """A few words for a connection failure: 'connection refused', 'unknown host', ..."""
    cause: BaseException | None = e
    while cause is not None:
        if isinstance(cause, ConnectionRefusedError):
            return "connection refused"
        if isinstance(cause, socket.gaierror):
            return "unknown host"
        if isinstance(cause, ConnectionResetError):
            return "connection reset"
        if isinstance(cause, aiohttp.ServerDisconnectedError):
            return "the server closed the connection"
        os_error = getattr(cause, "os_error", None)
        cause = os_error if isinstance(os_error, BaseException) else cause.__cause__
    return _clip(str(e)) or type(e).__name__


def _int(v: Any) -> int:
    return v if isinstance(v, int) and not isinstance(v, bool) else 0


def _clip(v: Any, n: int = 300) -> str:
    s = " ".join(str(v).split())
    return s if len(s) <= n else s[: n - 1] + "…"
