"""A warm pool: ready sandboxes of one template, refilled in the background.

`acquire()` hands out a sandbox that is already running (or makes one, if the pool is empty);
the caller owns it from then on and closes it. The pool refills itself to its size.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

from rollbox.errors import SandboxError
from rollbox.sandbox.base import Sandbox

log = logging.getLogger(__name__)
Make = Callable[[], Awaitable[Sandbox]]


class WarmPool:
    """Keeps `size` ready sandboxes made by `make` (a template: config, workspace, limits)."""

    def __init__(self, make: Make, *, size: int = 4) -> None:
        if size < 1:
            raise ValueError("a warm pool needs a size of at least 1")
        self._make = make
        self.size = size
        self._ready: asyncio.Queue[Sandbox] = asyncio.Queue()
        self._wanted = asyncio.Event()
        self._filler: asyncio.Task[None] | None = None
        self._closed = False
        self.hits = 0
        self.misses = 0
        self.failures = 0

    async def start(self) -> WarmPool:
        self._filler = asyncio.ensure_future(self._fill())
        self._wanted.set()
        return self

    async def __aenter__(self) -> WarmPool:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @property
    def ready(self) -> int:
        return self._ready.qsize()

    async def _fill(self) -> None:
        backoff = 0.05
        while not self._closed:
            await self._wanted.wait()
            self._wanted.clear()
            while not self._closed and self._ready.qsize() < self.size:
                try:
                    sb = await self._make()
                except SandboxError as e:
                    self.failures += 1
                    log.warning("warm pool: could not make a sandbox: %s", e)
                    await asyncio.sleep(backoff)
                    backoff = min(backoff * 2, 5.0)
                    continue
                backoff = 0.05
                if self._closed:
                    await sb.close()
                    return
                self._ready.put_nowait(sb)

    async def acquire(self) -> Sandbox:
        """A ready sandbox (now yours to close); made on the spot if none is ready."""
        if self._closed:
            raise SandboxError("the warm pool is closed")
        while not self._ready.empty():
            sb = self._ready.get_nowait()
            self._wanted.set()
            if getattr(sb, "alive", True):
                self.hits += 1
                return sb
            await sb.close()  # died while waiting: not handed out
        self.misses += 1
        self._wanted.set()
        return await self._make()

    async def close(self) -> None:
        """Stop refilling and close every sandbox still waiting. Idempotent."""
        if self._closed:
            return
        self._closed = True
        self._wanted.set()
        if self._filler is not None:
            self._filler.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._filler
        while not self._ready.empty():
            await self._ready.get_nowait().close()
