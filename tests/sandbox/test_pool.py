"""The warm pool keeps ready sandboxes and refills itself."""

from __future__ import annotations

import asyncio

from rollbox.sandbox import BwrapConfig, make_sandbox
from rollbox.sandbox.pool import WarmPool


async def test_warm_pool_hands_out_ready_sandboxes_and_refills() -> None:
    made = 0

    async def make():  # type: ignore[no-untyped-def]
        nonlocal made
        made += 1
        return await make_sandbox(BwrapConfig())

    async with WarmPool(make, size=3) as pool:
        for _ in range(200):
            if pool.ready == 3:
                break
            await asyncio.sleep(0.02)
        assert pool.ready == 3
        made_before = made
        sb = await pool.acquire()
        assert pool.hits == 1 and pool.misses == 0
        assert made == made_before, "a warm sandbox is handed out, none is made for it"
        async with sb:
            assert (await sb.exec("echo warm")).stdout == "warm\n"
        for _ in range(200):
            if pool.ready == 3:
                break
            await asyncio.sleep(0.02)
        assert pool.ready == 3 and made == 4
        others = [await pool.acquire() for _ in range(5)]  # more than it holds: made on the spot
        # the three waiting ones are hits; the 4th is made on the spot (a miss), and while it is
        # being made the background filler may have one ready for the 5th: a hit or a miss.
        assert pool.hits + pool.misses == 6
        assert 4 <= pool.hits <= 5 and pool.misses >= 1
        for o in others:
            await o.close()
        for _ in range(200):
            if pool.ready:
                break
            await asyncio.sleep(0.02)
        waiting = list(pool._ready._queue)  # type: ignore[attr-defined]
        assert waiting and all(s.alive for s in waiting)
    assert pool.ready == 0
    assert not any(s.alive for s in waiting), "closing the pool closes what was waiting in it"
