"""Fixtures for policy tests: the bundled SmolLM2, loaded once per test session.

It loads through the default model cache ($ROLLBOX_CACHE/models or ~/.cache/rollbox/models): the
first run on a machine de-quantizes the GGUF (about 20 s) and fills the cache; later runs read
the cache (a few seconds).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from rollbox.policies.hf import HFPolicy


@pytest.fixture(scope="session")
def hf_policy() -> Iterator[HFPolicy]:
    """The bundled model, shared by the tests (each runs in its own event loop; the policy's
    worker is a thread, so it serves them all)."""
    policy = HFPolicy()
    asyncio.run(policy.load())
    try:
        yield policy
    finally:
        asyncio.run(policy.close())
