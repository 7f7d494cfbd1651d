"""Fixtures for sandbox tests: a real bwrap sandbox, closed afterwards."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from rollbox.sandbox import BwrapConfig, Limits, Sandbox, agentbuild, make_sandbox


@pytest.fixture(params=["compiled", "bash"])
async def sandbox(tmp_path: Path, request: pytest.FixtureRequest) -> AsyncIterator[Sandbox]:
    """A sandbox with each agent: the compiled one (the default) and the bash fallback."""
    if request.param == "compiled" and agentbuild.compiler() is None:
        pytest.skip("no C compiler here: only the bash agent")
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "hello.txt").write_text("hello from the workspace\n")
    (ws / "pkg").mkdir()
    (ws / "pkg" / "mod.py").write_text("VALUE = 41\n")
    sb = await make_sandbox(BwrapConfig(agent=request.param), ws, limits=Limits(wall_s=20))
    try:
        yield sb
    finally:
        await sb.close()
