"""The local backend (no isolation): limits from outside, capped output, nothing left behind."""

from __future__ import annotations

from pathlib import Path

import pytest

from rollbox.errors import SandboxError
from rollbox.sandbox import LocalSandbox


async def test_exec_reports_exit_code_and_output(tmp_path: Path) -> None:
    (tmp_path / "hello.txt").write_text("from the workspace\n")
    async with LocalSandbox(tmp_path) as sb:
        res = await sb.exec("cat hello.txt; echo oops >&2; exit 3")
        assert (res.exit_code, res.stdout, res.stderr) == (3, "from the workspace\n", "oops\n")
        assert not res.ok and res.signal is None
        assert (await sb.exec(["printf", "%s", "argv"])).stdout == "argv"
        await sb.write_file("sub/new.txt", b"x")
        assert await sb.read_file("sub/new.txt") == b"x"
        assert not (tmp_path / "sub").exists(), "the sandbox works on a copy"


async def test_wall_clock_limit_kills_the_whole_group() -> None:
    async with LocalSandbox() as sb:
        res = await sb.exec("(sleep 30 &) ; sleep 30", timeout_s=0.5)
        assert res.timed_out and res.signal == 9 and res.wall_s < 5


async def test_output_is_capped_and_flagged() -> None:
    async with LocalSandbox() as sb:
        res = await sb.exec("head -c 5000000 /dev/zero | tr '\\0' y", output_cap=1000)
        assert res.output_truncated and len(res.stdout) == 1000 and res.exit_code == 0


async def test_environment_is_explicit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ROLLBOX_SECRET_TOKEN", "hunter2")
    async with LocalSandbox() as sb:
        res = await sb.exec("env", env={"MINE": "1"})
        assert "hunter2" not in res.stdout and "MINE=1" in res.stdout


async def test_close_removes_everything_and_is_idempotent() -> None:
    sb = LocalSandbox()
    root = sb.workspace.parent
    await sb.close()
    await sb.close()
    assert not root.exists()
    with pytest.raises(SandboxError):
        await sb.exec("true")
    async with LocalSandbox() as other:
        with pytest.raises(ValueError):
            await other.read_file("../../etc/passwd")


def test_the_local_backend_says_it_isolates_nothing(caplog: pytest.LogCaptureFixture) -> None:
    import rollbox.sandbox.local as local

    local._warned = False
    with caplog.at_level("WARNING"):
        sb = LocalSandbox()
    import asyncio

    asyncio.run(sb.close())
    assert "isolates nothing" in caplog.text
