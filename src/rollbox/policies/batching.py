"""Continuous batching of generation requests on one torch model, in one worker thread.

    complete() ─► GenRequest ─► BatchWorker.submit ─► [worker thread]
                                                          │ admit: prefill each new request alone,
                                                          │        merge its KV into the batch cache
                                                          │ step:  sample one token per row,
                                                          │        deliver finished rows, compact,
                                                          │        one batched decode forward pass
                                                          ▼
                                  deliver(GenResult | PolicyError)   (called from the worker thread)

- **Prefill alone, decode together.** Each request's prompt goes through the model alone (no
  padding), so its first token is exactly what it would be without company. Its keys and values
  are then left-padded into the batch's cache; the attention mask hides the padding and each row
  keeps its own position ids, so a row sees what it would see alone, up to float noise from the
  different shapes of the batched matrix products.
- **Continuous admission.** Requests that are waiting at the same moment are admitted together
  (one "batch" in the stats); requests that arrive while rows are decoding join the running
  batch at the next step instead of waiting for it to drain. Finished rows leave at once (the
  cache is compacted, padding no remaining row needs is cut).
- **Own randomness per request.** Each request samples with its own `torch.Generator` seeded
  from its seed, so its tokens depend on its prompt, parameters and seed, not on its neighbours.
- **Log-probabilities** are those of the sampled token under the distribution it was sampled
  from, after temperature; for greedy decoding (temperature 0) under the untempered model
  distribution.

Nothing here knows about chat messages or asyncio: `deliver` and `cancelled` are callables the
caller provides, and every exception raised by torch reaches them as a PolicyError.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import torch

from rollbox.errors import PolicyError

GenFinish = Literal["stop", "length"]


@dataclass(frozen=True)
class GenResult:
    """What one request produced."""

    text: str  # without the end-of-turn token; cut right after a stop string when one was hit
    token_ids: tuple[int, ...]  # every generated token, the end-of-turn token included
    logprobs: tuple[float, ...]  # of each token under the distribution it was sampled from
    finish_reason: GenFinish
    prompt_tokens: int
    seconds: float  # from submission to the result (queueing included)


@dataclass
class GenRequest:
    """One generation job; `deliver` and `cancelled` are called from the worker thread."""

    prompt_ids: Sequence[int]
    max_tokens: int
    temperature: float  # 0 = greedy
    seed: int
    stop: tuple[str, ...]
    deliver: Callable[[GenResult | PolicyError], None]
    cancelled: Callable[[], bool] = lambda: False
    submitted: float = field(default_factory=time.monotonic)


@dataclass
class BatchStats:
    """Counters of the worker (a snapshot is handed out; the worker updates its own)."""

    requests: int = 0  # requests admitted
    batches: int = 0  # groups of requests admitted together (all those waiting at one moment)
    joined: int = 0  # requests admitted while other rows were decoding
    forward_passes: int = 0  # model calls: one per prefill, one per batched decode step
    tokens_generated: int = 0
    max_batch_seen: int = 0  # the most rows sampled in one step
    prefill_tokens: int = 0  # prompt tokens run through the model
    reused_tokens: int = 0  # prompt tokens whose keys and values came from the prefix cache


@dataclass
class _Row:
    req: GenRequest
    generator: torch.Generator
    position: int  # position id of the next token fed to the model
    ids: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    scan_from: int = 0  # where the next search for stop strings starts in the text


class Batch:
    """The rows being decoded together, their KV cache and attention mask (torch side only)."""

    def __init__(
        self,
        model: Any,
        *,
        decode: Callable[[list[int]], str],
        eos_ids: frozenset[int],
        cache_kwarg: str = "cache",
        stats: BatchStats | None = None,
        prefix_cache_tokens: int = 32768,
    ) -> None:
        self.model = model
        self.decode = decode
        self.eos_ids = eos_ids
        self.cache_kwarg = cache_kwarg  # "cache" (transformers >= 5.x) or "past_key_values"
        self.stats = stats if stats is not None else BatchStats()
        self.prefixes = PrefixCache(max_tokens=prefix_cache_tokens)
        self.rows: list[_Row] = []
        self.cache: Any = None  # a DynamicCache: per layer, keys and values (B, H, T, D)
        self.mask = torch.zeros((0, 0), dtype=torch.long)  # (B, T): 1 where a real token is
        self.logits = torch.zeros((0, 0))  # (B, V): each row's next-token logits

    def __len__(self) -> int:
        return len(self.rows)

    def admit(self, req: GenRequest) -> None:
        """Prefill `req` alone and add it as a row; raises what torch raises."""
        from transformers import DynamicCache

        prompt = list(req.prompt_ids)
        reused, kv = self.prefixes.lookup(prompt)
        cache = _make_cache(kv) if kv is not None else DynamicCache()
        ids = torch.tensor([prompt[reused:]], dtype=torch.long)
        out = self.model(
            input_ids=ids, use_cache=True, logits_to_keep=1, **{self.cache_kwarg: cache}
        )
        self.stats.forward_passes += 1
        self.stats.prefill_tokens += len(prompt) - reused
        self.stats.reused_tokens += reused
        n = len(prompt)
        self.prefixes.store(prompt, _read_cache(cache))
        row_mask = torch.ones((1, n), dtype=torch.long)
        if not self.rows:
            self.cache, self.mask = cache, row_mask
            self.logits = out.logits[:, -1, :].float()
        else:
            t = max(self.mask.shape[1], n)
            kv = [
                (_cat_rows(k, rk, t), _cat_rows(v, rv, t))
                for (k, v), (rk, rv) in zip(
                    _read_cache(self.cache), _read_cache(cache), strict=True
                )
            ]
            self.cache = _make_cache(kv)
            self.mask = _cat_rows(self.mask, row_mask, t)
            self.logits = torch.cat([self.logits, out.logits[:, -1, :].float()])
        gen = torch.Generator().manual_seed(req.seed)
        self.rows.append(_Row(req=req, generator=gen, position=n))

    def step(self) -> None:
        """Sample one token for every row, deliver and drop finished rows, decode the rest."""
        self.stats.max_batch_seen = max(self.stats.max_batch_seen, len(self.rows))
        tokens, logprobs = self._sample()
        keep: list[int] = []
        for i, (row, tok, lp) in enumerate(zip(self.rows, tokens, logprobs, strict=True)):
            row.ids.append(tok)
            row.logprobs.append(lp)
            self.stats.tokens_generated += 1
            result = self._finished(row)
            if result is not None:
                row.req.deliver(result)
            elif not row.req.cancelled():
                keep.append(i)
        if len(keep) < len(self.rows):
            self._select(keep)
        if self.rows:
            self._decode([tokens[i] for i in keep])

    def fail(self, error: PolicyError) -> None:
        """Deliver `error` to every row and empty the batch."""
        rows, self.rows = self.rows, []
        self._select([])
        for row in rows:
            row.req.deliver(error)

    def drop_cancelled(self) -> None:
        keep = [i for i, row in enumerate(self.rows) if not row.req.cancelled()]
        if len(keep) < len(self.rows):
            self._select(keep)

    # -- internals -------------------------------------------------------------------------

    def _sample(self) -> tuple[list[int], list[float]]:
        """One token per row: argmax for greedy rows, else inverse-CDF sampling with one
        uniform draw from the row's own generator (much cheaper than torch.multinomial)."""
        temps = torch.tensor([r.req.temperature or 1.0 for r in self.rows]).unsqueeze(1)
        logp = torch.log_softmax(self.logits / temps, dim=-1)
        greedy = torch.argmax(logp, dim=-1)
        cdf = torch.cumsum(logp.double().exp(), dim=-1)
        draws = torch.stack(
            [torch.rand((), dtype=torch.float64, generator=r.generator) for r in self.rows]
        )
        picked = torch.searchsorted(cdf, (draws * cdf[:, -1]).unsqueeze(1), right=True).squeeze(1)
        picked = picked.clamp(max=logp.shape[1] - 1)
        tokens = [
            int(greedy[i]) if r.req.temperature == 0 else int(picked[i])
            for i, r in enumerate(self.rows)
        ]
        lps = logp[torch.arange(len(tokens)), torch.tensor(tokens)].tolist()
        return tokens, [float(x) for x in lps]

    def _finished(self, row: _Row) -> GenResult | None:
        req = row.req
        reason: GenFinish
        if row.ids[-1] in self.eos_ids:
            text, reason = self.decode(row.ids[:-1]), "stop"
        else:
            text = self.decode(row.ids)
            cut = _find_stop(text, req.stop, row.scan_from) if req.stop else None
            if cut is not None:
                text, reason = text[:cut], "stop"
            elif len(row.ids) >= req.max_tokens:
                reason = "length"
            else:
                longest = max((len(s) for s in req.stop), default=0)
                row.scan_from = max(0, len(text) - longest - 8)  # the tail may still change
                return None
        return GenResult(
            text=text,
            token_ids=tuple(row.ids),
            logprobs=tuple(row.logprobs),
            finish_reason=reason,
            prompt_tokens=len(req.prompt_ids),
            seconds=time.monotonic() - req.submitted,
        )

    def _select(self, keep: list[int]) -> None:
        """Keep only the rows `keep`, and cut the leading columns that are padding in all."""
        self.rows = [self.rows[i] for i in keep]
        if not keep:
            self.cache, self.mask, self.logits = None, self.mask[:0], self.logits[:0]
            return
        idx = torch.tensor(keep)
        mask = self.mask.index_select(0, idx)
        real = mask.sum(0).nonzero()
        lead = int(real[0]) if len(real) else 0
        self.mask = mask[:, lead:]
        self.cache = _make_cache(
            [
                (k.index_select(0, idx)[:, :, lead:], v.index_select(0, idx)[:, :, lead:])
                for k, v in _read_cache(self.cache)
            ]
        )
        self.logits = self.logits.index_select(0, idx)

    def _decode(self, tokens: list[int]) -> None:
        ones = torch.ones((len(self.rows), 1), dtype=torch.long)
        self.mask = torch.cat([self.mask, ones], dim=1)
        positions = torch.tensor([[r.position] for r in self.rows], dtype=torch.long)
        out = self.model(
            input_ids=torch.tensor(tokens, dtype=torch.long).unsqueeze(1),
            attention_mask=self.mask,
            position_ids=positions,
            use_cache=True,
            **{self.cache_kwarg: self.cache},
        )
        self.stats.forward_passes += 1
        for r in self.rows:
            r.position += 1
        self.logits = out.logits[:, -1, :].float()


class PrefixCache:
    """Keys and values of recent prompts, so that a prompt that extends one (the next turn of
    the same conversation) or shares its start with one (the same system prompt and example)
    is prefilled only from where it differs.

    Entries are whole prompts of one row; a stored prompt replaces the entries it extends.
    Least recently used entries go first once `max_tokens` prompt tokens are held (about
    46 KB a token for SmolLM2-135M). Reusing a prefix changes only float noise: the keys and
    values of a token depend on the tokens before it, which are the same.
    """

    MIN_REUSE = 8  # shorter common prefixes are not worth the copy

    def __init__(self, *, max_tokens: int = 32768) -> None:
        self.max_tokens = max_tokens
        self._entries: dict[tuple[int, ...], list[tuple[torch.Tensor, torch.Tensor]]] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def lookup(
        self, prompt: list[int]
    ) -> tuple[int, list[tuple[torch.Tensor, torch.Tensor]] | None]:
        """(tokens reused, their keys and values) for the longest stored common prefix; at
        least one token of `prompt` is always left to run (its logits are needed)."""
        best, best_key = 0, None
        wanted = tuple(prompt)
        for key in self._entries:
            n = _common_prefix(key, wanted)
            if n > best:
                best, best_key = n, key
        best = min(best, len(prompt) - 1)
        if best_key is None or best < self.MIN_REUSE:
            return 0, None
        kv = self._entries.pop(best_key)
        self._entries[best_key] = kv  # most recently used last
        return best, [(k[:, :, :best], v[:, :, :best]) for k, v in kv]

    def store(self, prompt: list[int], kv: list[tuple[torch.Tensor, torch.Tensor]]) -> None:
        if self.max_tokens <= 0 or len(prompt) > self.max_tokens:
            return
        key = tuple(prompt)
        for old in [k for k in self._entries if len(k) <= len(key) and key[: len(k)] == k]:
            del self._entries[old]  # what this prompt extends is covered by it
        self._entries[key] = kv
        while sum(len(k) for k in self._entries) > self.max_tokens:
            del self._entries[next(iter(self._entries))]


def _common_prefix(a: tuple[int, ...], b: tuple[int, ...]) -> int:
    n = min(len(a), len(b))
    if a[:n] == b[:n]:
        return n
    lo, hi = 0, n  # a[:lo] == b[:lo], a[:hi] != b[:hi]
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid
    return lo


def _read_cache(cache: Any) -> list[tuple[torch.Tensor, torch.Tensor]]:
    layers = getattr(cache, "layers", None)
    if layers is not None:  # transformers 5.x
        return [(layer.keys, layer.values) for layer in layers]
    return list(zip(cache.key_cache, cache.value_cache, strict=True))  # transformers 4.x


def _make_cache(kv: list[tuple[torch.Tensor, torch.Tensor]]) -> Any:
    from transformers import DynamicCache

    cache = DynamicCache()
    for layer, (k, v) in enumerate(kv):
        cache.update(k, v, layer)
    return cache


def _cat_rows(batch: torch.Tensor, row: torch.Tensor, t: int) -> torch.Tensor:
    """Stack `row` under `batch` along dim 0, both left-padded with zeros to length `t`."""
    dim = 2 if batch.dim() == 4 else 1
    return torch.cat([_pad_left(batch, t, dim), _pad_left(row, t, dim)])


def _pad_left(x: torch.Tensor, t: int, dim: int) -> torch.Tensor:
    missing = t - x.shape[dim]
    if missing == 0:
        return x
    shape = list(x.shape)
    shape[dim] = missing
    return torch.cat([x.new_zeros(shape), x], dim=dim)


def _find_stop(text: str, stop: tuple[str, ...], start: int) -> int | None:
    """The end of the earliest stop string found at or after `start`, if any."""
    best: tuple[int, int] | None = None
    for s in stop:
        at = text.find(s, start)
        if at >= 0 and (best is None or at < best[0]):
            best = (at, at + len(s))
    return None if best is None else best[1]


class BatchWorker:
    """One thread that owns the model: admits waiting requests and steps the batch."""

    def __init__(self, make_batch: Callable[[BatchStats], Batch], *, max_batch: int) -> None:
        self._stats = BatchStats()
        self._batch = make_batch(self._stats)
        self._max_batch = max_batch
        self._waiting: list[GenRequest] = []
        self._cond = threading.Condition()
        self._closing = False
        self._thread = threading.Thread(target=self._run, name="rollbox-hf-worker", daemon=True)
        self._thread.start()

    @property
    def stats(self) -> BatchStats:
        """A copy of the counters (only the worker thread writes them)."""
        return dataclasses.replace(self._stats)

    def submit(self, requests: Sequence[GenRequest]) -> None:
        """Queue `requests` together (thread-safe): they are admitted at the same moment."""
        with self._cond:
            if self._closing:
                error = PolicyError("the HF policy is closed; create a new one")
                for req in requests:
                    req.deliver(error)
                return
            self._waiting.extend(requests)
            self._cond.notify()

    def close(self, timeout: float | None = None) -> None:
        """Stop the thread; waiting and running requests get a PolicyError."""
        with self._cond:
            self._closing = True
            self._cond.notify()
        self._thread.join(timeout)

    def _take(self, block: bool) -> list[GenRequest]:
        with self._cond:
            while block and not self._waiting and not self._closing:
                self._cond.wait()
            room = self._max_batch - len(self._batch)
            taken, self._waiting = self._waiting[:room], self._waiting[room:]
            return taken

    def _run(self) -> None:
        batch = self._batch
        with torch.inference_mode():
            while True:
                new = [r for r in self._take(block=not batch) if not r.cancelled()]
                if self._closing:
                    self._shut(new)
                    return
                if new:
                    self._stats.batches += 1
                    self._stats.requests += len(new)
                    self._stats.joined += len(new) if batch else 0
                for req in new:
                    try:
                        batch.admit(req)
                    except Exception as exc:  # one bad prompt fails only its own request
                        req.deliver(_policy_error(exc))
                if not batch:
                    continue
                try:
                    batch.drop_cancelled()
                    if batch:
                        batch.step()
                except Exception as exc:
                    batch.fail(_policy_error(exc))

    def _shut(self, new: list[GenRequest]) -> None:
        error = PolicyError("the HF policy was closed while this request was running")
        self._batch.fail(error)
        with self._cond:
            rest, self._waiting = self._waiting, []
        for req in new + rest:
            req.deliver(error)


def _policy_error(exc: Exception) -> PolicyError:
    if isinstance(exc, PolicyError):
        return exc
    return PolicyError(f"HF generation failed: {type(exc).__name__}: {exc}")
